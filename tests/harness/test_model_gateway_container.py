"""The model gateway in the container tier: real clients (the openai and anthropic packages) as
agents in a container of an image with Python, reaching the gateway and nothing else.

The container joins the network namespace of the gateway's forwarder, which the harness runs
(``_forward.Door``): there is loopback and the forwarder's port, no route out, and the host's own
loopback ports are not there. The clients come from this test's own environment (its
site-packages, which the agent's command names, so the container shows it read-only): Debian
bookworm's Python is 3.11, as is the test's. Expected figures are the fake upstream's script, as in
tests/harness/test_model_gateway.py. Needs podman and the Python image (tests/harness/_containers.py).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.conftest import make_suite
from tests.gateway.fake import FakeUpstream, Script
from tests.harness._containers import PYTHON, container_engine
from tests.harness.test_model_gateway import (
    AGENT,
    KEY_ENV,
    REAL_KEY,
    agent_said,
    check_greedy,
    check_hunt,
    keep_usages,
)
from tests.harness.test_run import unique_run_id
from trialbook.errors import ArgumentError
from trialbook.harness import ModelOptions, RunOptions, run_suite
from trialbook.ledger import ledger_rows, read_ledger

SITE = Path(openai.__file__).resolve().parents[1]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    container_engine(PYTHON)
    fake = FakeUpstream(Script()).start()
    yield fake
    fake.stop()


def _run(
    tmp_path: Path,
    upstream: FakeUpstream,
    modes: list[str],
    monkeypatch: pytest.MonkeyPatch,
    **model: Any,
) -> list[dict[str, Any]]:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    tasks = {mode: {"grader": "test -f ok", "fixture": {"agent.py": AGENT}} for mode in modes}
    suite = make_suite(tmp_path / "suite", tasks, k=1, timeout_s=90, extra=f'image = "{PYTHON}"\n')
    ledger = tmp_path / "out" / "ledger.db"
    (tmp_path / "prices.toml").write_text(
        f'[models."{upstream.script.model}"]\ninput = 2\noutput = 8\ncache_read = 0.5\ncache_write = 2.5\n'
    )
    result = run_suite(
        RunOptions(
            suite=suite,
            agent=f'PYTHONPATH={shlex.quote(str(SITE))} python3 agent.py "$TRIALBOOK_TASK_ID"',
            ledger=ledger,
            system="test",
            sandbox="container",
            run_id=unique_run_id(),
            jobs=len(modes),
            pass_env={"UPSTREAM_PORT": upstream.url.rsplit(":", 1)[1]},
            model=ModelOptions(
                upstream=upstream.url, key_env=KEY_ENV, prices=tmp_path / "prices.toml", **model
            ),
        )
    )
    assert not result.interrupted
    rows = sorted(ledger_rows(read_ledger(ledger)), key=lambda r: r["task_id"])
    written = [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert not [data for data in written if REAL_KEY.encode() in data]
    assert any(b'"OPENAI_API_KEY": "tb-gw-' in data for data in written), "no environment shown"
    assert {r["sandbox"] for r in rows} == {"container"}
    return rows


def test_a_container_agents_calls_are_metered_and_the_gateway_is_all_it_reaches(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    escape, ok = _run(tmp_path, upstream, ["ok", "escape"], monkeypatch)  # by task id
    s = upstream.script
    openai_in, anthropic_in = s.input + s.cache_read, s.input + s.cache_read + s.cache_write
    assert ok["passed"] is True, ok.get("error")
    assert ok["tokens_in"] == 2 * openai_in + anthropic_in
    assert ok["tokens_out"] == 3 * s.output
    # 3 calls: 3 x input at $2, 3 x output at $8, 3 x cache_read at $0.5, 1 x cache_write at $2.5
    expected = (
        3 * s.input * 2 + 3 * s.output * 8 + 3 * s.cache_read * 0.5 + s.cache_write * 2.5
    ) / 1e6
    assert ok["cost"] == pytest.approx(expected, rel=1e-12)
    assert ok["model_calls"] == 3
    assert "usage file disagrees with the model gateway" in ok["error"]

    assert escape["passed"] is True, escape.get("error")
    stdout = (tmp_path / "out" / escape["transcript"] / "agent.stdout").read_text()
    tried = json.loads(stdout.strip().splitlines()[-1])
    # no route out of the forwarder's namespace; its loopback is not the host's
    assert tried == {
        "internet": "OSError",
        "upstream": "ConnectionRefusedError",
        "guessed token": "refused",
    }
    assert escape["model_calls"] == 1  # the guessed token's call was refused, not passed
    # the real key was never in the agent's environment (it printed all of it)
    shown = json.loads(stdout.strip().splitlines()[0])
    assert REAL_KEY not in json.dumps(shown)
    assert shown["OPENAI_BASE_URL"].startswith("http://127.0.0.1:")


def test_500_streams_at_once_through_the_containers_forwarder_are_all_metered(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream.record = False
    [row] = _run(tmp_path, upstream, ["flood"], monkeypatch)
    assert row["passed"] is True, row.get("error")
    assert row["model_calls"] == 500
    assert row["tokens_out"] == 500 * upstream.script.output


def test_past_its_budget_a_container_agent_that_keeps_calling_is_refused_every_time(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    usages = keep_usages(monkeypatch)
    s = upstream.script
    per_call = s.input + s.cache_read + s.output
    [row] = _run(tmp_path, upstream, ["greedy"], monkeypatch, max_tokens_per_attempt=per_call)
    assert row["passed"] is True  # the agent decides what to do once refused
    check_greedy(tmp_path, row, usages["greedy"], upstream)


def test_a_container_agent_searching_all_it_can_reach_finds_no_real_key(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in the bwrap tier (tests/harness/test_model_gateway.py): every process's environment
    and command line it can see, its parents', the folders, `cat /proc/1/environ`."""
    [row] = _run(tmp_path, upstream, ["hunt"], monkeypatch)
    assert row["passed"] is True, row.get("error")
    check_hunt(agent_said(tmp_path, row))


def test_without_the_privilege_to_make_a_network_namespace_it_is_refused_in_one_line(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trialbook.harness.sandbox import _forward

    def refused(self: object, socket_path: str, port: object) -> None:
        raise OSError("unshare(CLONE_NEWNET): Operation not permitted")

    monkeypatch.setattr(_forward.Door, "__init__", refused)
    with pytest.raises(ArgumentError, match=r"cannot make one here .*run as root") as info:
        _run(tmp_path, upstream, ["ok"], monkeypatch)
    assert info.value.argument == "model_upstream"
    assert not (tmp_path / "out" / "ledger.db").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the forwarder's namespace needs root")
def test_the_door_closes_with_its_attempt(tmp_path: Path) -> None:
    from trialbook.harness.sandbox._forward import Door

    door = Door(os.devnull, 0)
    pid = int(door.netns.split("/")[2])

    # once listening it writes to no pipe the harness would have to read (a full one would stop it)
    def quiet() -> bool:
        return os.readlink(f"/proc/{pid}/fd/1") == os.readlink(f"/proc/{pid}/fd/2") == "/dev/null"

    deadline = time.monotonic() + 10  # it says it listens, then lets go of the pipes
    while not quiet() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert quiet()
    door.close()
    assert not Path(f"/proc/{pid}").exists()
