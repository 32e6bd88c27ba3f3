"""The real key and the processes a run with a model gateway starts: while an attempt runs, no
process on the machine holds the key in its environment but the driver itself.

The processes the driver starts get a copy of its environment: the run's watchdog, and, with
``--executor ray`` and no cluster to join (``ray.init`` without an address), the Ray instance it
starts (GCS, raylet, Ray's agents, and the workers the raylet starts, which run the attempts and
their own watchdogs). Each is started with the key's variable taken out (docs/gateway.md, "On a
Ray cluster"). The attempt here is a process-tier agent (the tier that could read those processes'
environments: it runs as the harness's user, outside any namespace).

The Ray case starts its own Ray instance, so it skips when a Ray connection is open (the run would
use it): tests/harness/test_ray.py keeps one for its whole module. Ray writes only inside a
temporary folder here (``RAY_TMPDIR``) and runs without token auth (``RAY_AUTH_MODE=disabled``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_suite
from tests.gateway.fake import FakeUpstream, Script
from tests.harness.test_run import unique_run_id
from trialbook.harness import ModelOptions, RunOptions, run_suite
from trialbook.ledger import ledger_rows, read_ledger

KEY_ENV = "TB_TEST_MODEL_KEY_HELD"

# it says it has started, waits until the test has looked at every process, then calls the model
AGENT = r"""
import os, time
import openai
from pathlib import Path

Path(os.environ["STARTED"]).touch()
end = time.monotonic() + 60
while not Path(os.environ["GO"]).exists() and time.monotonic() < end:
    time.sleep(0.05)
openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=[])
Path("ok").write_text("done")
"""


@pytest.fixture
def ray_temp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Ray's folder for this test; no Ray process of it is left once the test is over."""
    try:
        import ray
    except ImportError:  # pragma: no cover - the ray extra is installed wherever make test runs
        if os.environ.get("CI"):
            raise
        pytest.skip("the ray extra is not installed (pip install -e '.[ray]')")
    if ray.is_initialized():
        pytest.skip("a Ray connection is open: the run would use it, not start its own")
    temp = Path(tempfile.mkdtemp(prefix="tb-rk-", dir="/tmp"))  # short: Ray's socket paths
    monkeypatch.setenv("RAY_TMPDIR", str(temp))
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield temp
    end = time.monotonic() + 15
    left: list[str] = []
    while time.monotonic() < end:
        left = subprocess.run(
            ["pgrep", "-af", str(temp)], capture_output=True, text=True, check=False
        ).stdout.splitlines()
        if not left:
            break
        time.sleep(0.2)
    shutil.rmtree(temp, ignore_errors=True)
    assert not left, f"Ray processes left after the run: {left}"


def _read(pid: int, part: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{part}").read_bytes()
    except OSError:  # gone, or not ours to read
        return b""


def _descendants(root: int) -> list[int]:
    """The processes started under ``root``, as they are now."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], {root}
    while frontier:
        children = [pid for pid, ppid in parent.items() if ppid in frontier]
        found += children
        frontier = set(children)
    return found


# what each kind of process the run starts shows in its command line
_KINDS = {
    "watchdog": "trialbook.harness.sandbox._watchdog",
    "gcs": "/gcs_server",
    "raylet": "/raylet",
    "attempt's worker": "ray::trialbook-attempt",
}


@pytest.mark.parametrize(
    ("executor", "kinds"),
    [
        ("local", ["watchdog"]),
        pytest.param(
            "ray", ["watchdog", "gcs", "raylet", "attempt's worker"], marks=pytest.mark.ray
        ),
    ],
)
def test_while_an_attempt_runs_no_process_but_the_driver_holds_the_real_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    executor: str,
    kinds: list[str],
) -> None:
    if executor == "ray":
        request.getfixturevalue("ray_temp")
    key = "sk-real-held-" + secrets.token_hex(16)  # this test's alone, on the whole machine
    monkeypatch.setenv(KEY_ENV, key)
    mark = f"TB_TEST_INHERITED=yes-{secrets.token_hex(8)}"  # in every copy of this environment
    monkeypatch.setenv(*mark.split("=", 1))
    started, go = tmp_path / "started", tmp_path / "go"
    suite = make_suite(
        tmp_path / "suite",
        {"t": {"grader": "test -f ok", "fixture": {"agent.py": AGENT}}},
        k=1,
        timeout_s=90,
    )
    upstream = FakeUpstream(Script()).start()
    options = RunOptions(
        suite=suite,
        agent="python agent.py",
        ledger=tmp_path / "ledger.db",
        system="gw",
        sandbox="process",
        executor=executor,
        run_id=unique_run_id(),
        pass_env={"STARTED": str(started), "GO": str(go)},
        model=ModelOptions(upstream=upstream.url, key_env=KEY_ENV, accept_open_network=True),
    )
    outcome: dict[str, Any] = {}
    runner = threading.Thread(target=lambda: outcome.update(result=run_suite(options)))
    runner.start()
    try:
        end = time.monotonic() + 120
        while not started.exists():
            assert runner.is_alive(), "the run ended before its agent started"
            assert time.monotonic() < end, "the agent did not start"
            time.sleep(0.05)
        # the attempt runs: the gateway is up, and every process the run starts with it
        inherited = [
            _read(pid, "cmdline").decode(errors="replace")
            for pid in _descendants(os.getpid())
            if mark.encode() in _read(pid, "environ")
        ]
        for kind in kinds:  # the copies of this environment, where the key would be
            assert any(_KINDS[kind] in cmdline for cmdline in inherited), (kind, inherited)
        holding = [
            _read(int(entry.name), "cmdline").decode(errors="replace")
            for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and key.encode() in _read(int(entry.name), "environ")
        ]
        assert not holding, f"processes holding the real key: {holding}"
    finally:
        go.touch()
        runner.join(timeout=120)
        upstream.stop()
    assert not runner.is_alive(), "the run did not end"
    [row] = ledger_rows(read_ledger(tmp_path / "ledger.db"))
    assert row["passed"] is True, row.get("error")
    assert row["model_calls"] == 1
    assert os.environ[KEY_ENV] == key  # this process's own environment is as it was
