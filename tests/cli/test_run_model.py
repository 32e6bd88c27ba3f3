"""``trialbook run`` and the model gateway, from the command line: the ``--model-*`` options reach
a real run, the ``[model]`` tables of trialbook.toml and suite.toml are taken below them, a resume
reads neither table, and the process tier's note on the open network is printed as the run starts.

The agent is tests/harness/test_model_gateway.py's (a real ``openai`` client), the upstream the
fake of tests/gateway/fake.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import make_suite
from tests.gateway.fake import FakeUpstream, Script
from tests.harness.test_model_gateway import AGENT, KEY_ENV, REAL_KEY
from tests.harness.test_run import _tier_param
from trialbook.cli import main
from trialbook.ledger import LedgerStore, ledger_rows, read_ledger

BWRAP = [_tier_param("bwrap")]
GREEDY = "python agent.py greedy"
"""Calls the model until the gateway refuses it (tests/harness/test_model_gateway.py)."""


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream(Script()).start()
    yield fake
    fake.stop()


def _suite(root: Path, upstream: FakeUpstream, extra: str = "") -> Path:
    tasks = {"greedy": {"grader": "test -f ok", "fixture": {"agent.py": AGENT}}}
    return make_suite(root, tasks, k=1, timeout_s=60, extra=extra)


def _prices(path: Path, upstream: FakeUpstream) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[models."{upstream.script.model}"]\ninput = 2\noutput = 8\ncache_read = 0.5\n'
    )
    return path


def _per_call(upstream: FakeUpstream) -> int:
    """Tokens of one OpenAI call of the fake (prompt_tokens counts the cached ones)."""
    s = upstream.script
    return s.input + s.cache_read + s.output


def _invoke(args: list[str]) -> Result:
    return CliRunner().invoke(main, ["run", *args])


def _recorded(ledger: Path) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """The ledger's one run: its id, its record's model settings and its rows."""
    rows = list(ledger_rows(read_ledger(ledger)))
    run_id = rows[0]["run_id"]
    with LedgerStore(ledger) as store:
        status = store.run(run_id)
    assert status is not None
    assert status.record.model is not None
    return run_id, json.loads(status.record.model), rows


@pytest.mark.parametrize("tier", BWRAP)
def test_the_model_options_reach_the_run(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    suite = _suite(tmp_path / "suite", upstream)
    prices = _prices(tmp_path / "prices.toml", upstream)
    ledger = tmp_path / "out" / "runs.db"
    limit = _per_call(upstream)
    done = _invoke(
        [
            str(suite),
            "--agent",
            GREEDY,
            "--ledger",
            str(ledger),
            "--sandbox",
            tier,
            "--model-upstream",
            upstream.url,
            "--model-key-env",
            KEY_ENV,
            "--prices",
            str(prices),
            "--max-tokens-per-attempt",
            str(limit),
            "--network",
            "model",
        ]
    )
    assert done.exit_code == 0, done.output
    _, model, [row] = _recorded(ledger)
    assert model == {
        "upstream": upstream.url,
        "key_env": KEY_ENV,  # the variable's name, never its value
        "prices": {"path": str(prices.resolve()), "sha256": model["prices"]["sha256"]},
        "max_cost_per_attempt": None,
        "max_tokens_per_attempt": limit,
        "accept_open_network": False,
        "network_model": True,
    }
    # and they held: one call metered and priced by the table, the next refused for the budget
    s = upstream.script
    assert row["model_calls"] == 1
    assert row["tokens_in"] + row["tokens_out"] == limit
    assert row["stop_reason"] == "budget"
    assert row["cost"] == pytest.approx((s.input * 2 + s.cache_read * 0.5 + s.output * 8) / 1e6)
    assert REAL_KEY not in ledger.read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("tier", BWRAP)
def test_options_win_over_trialbook_toml_which_wins_over_suite_toml(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    monkeypatch.setenv("TB_SUITE_KEY", "not-this-one")
    # the suite names a model nothing answers at, its own key variable, a price table beside
    # suite.toml and a budget of 1 token
    suite = _suite(
        tmp_path / "suite",
        upstream,
        extra='[model]\nupstream = "http://127.0.0.1:9"\nkey_env = "TB_SUITE_KEY"\n'
        'prices = "prices.toml"\nmax_tokens_per_attempt = 1\n',
    )
    _prices(suite / "prices.toml", upstream)
    (tmp_path / "trialbook.toml").write_text(
        f'suite = "suite"\nagent = "{GREEDY}"\nledger = "out/runs.db"\nsandbox = "{tier}"\n\n'
        f'[model]\nupstream = "{upstream.url}"\nkey_env = "{KEY_ENV}"\n'
        "max_tokens_per_attempt = 2\n"
    )
    monkeypatch.chdir(tmp_path)
    limit = _per_call(upstream)
    done = _invoke(["--max-tokens-per-attempt", str(limit)])
    assert done.exit_code == 0, done.output
    _, model, [row] = _recorded(tmp_path / "out" / "runs.db")
    assert model["upstream"] == upstream.url  # trialbook.toml's over suite.toml's
    assert model["key_env"] == KEY_ENV
    assert model["prices"]["path"] == str((suite / "prices.toml").resolve())  # suite.toml's
    assert model["max_tokens_per_attempt"] == limit  # the command line's over both
    assert row["model_calls"] == 1
    assert row["cost"] is not None


@pytest.mark.parametrize("where", ["trialbook.toml", "suite.toml"])
@pytest.mark.parametrize("tier", BWRAP)
def test_a_resume_reads_no_model_table(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str, where: str
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    table = f'[model]\nupstream = "{upstream.url}"\nkey_env = "{KEY_ENV}"\nmax_tokens_per_attempt = 1000\n'
    suite = _suite(tmp_path / "suite", upstream, extra=table if where == "suite.toml" else "")
    project = f'suite = "suite"\nagent = "{GREEDY}"\nledger = "runs.db"\nsandbox = "{tier}"\n\n'
    (tmp_path / "trialbook.toml").write_text(project + (table if where == "trialbook.toml" else ""))
    monkeypatch.chdir(tmp_path)
    first = _invoke([])
    assert first.exit_code == 0, first.output
    run_id, model, _ = _recorded(tmp_path / "runs.db")
    assert model["max_tokens_per_attempt"] == 1000
    # the user edits the budget for their next runs; this run keeps its own
    edited = tmp_path / where if where == "trialbook.toml" else suite / "suite.toml"
    edited.write_text(edited.read_text().replace("= 1000", "= 2000"))
    resumed = _invoke(["--resume", run_id])
    assert resumed.exit_code == 0, resumed.output
    assert _recorded(tmp_path / "runs.db")[1]["max_tokens_per_attempt"] == 1000
    # options given on the command line are still held to the run's record
    other = _invoke(
        [
            "--resume",
            run_id,
            "--model-upstream",
            upstream.url,
            "--model-key-env",
            KEY_ENV,
            "--max-tokens-per-attempt",
            "2000",
        ]
    )
    assert other.exit_code == 2
    assert "--max-tokens-per-attempt: run" in other.stderr
    assert "reached its model with max_tokens_per_attempt 1000, not 2000" in other.stderr


def test_a_files_model_setting_without_an_upstream_is_refused_naming_it(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    suite = _suite(tmp_path / "suite", upstream, extra="[model]\nmax_tokens_per_attempt = 10\n")
    done = _invoke([str(suite), "--agent", "true", "--ledger", str(tmp_path / "runs.db")])
    assert done.exit_code == 2
    assert done.stderr == (
        f"trialbook: error: {suite / 'suite.toml'}: model.max_tokens_per_attempt: needs an "
        "upstream (model.upstream in a [model] table, or --model-upstream)\n"
    )
    assert not (tmp_path / "runs.db").exists()


def test_the_process_tiers_note_on_the_open_network_is_printed_as_the_run_starts(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    suite = make_suite(tmp_path / "suite", {"t": {}}, k=1)
    done = _invoke(
        [
            str(suite),
            "--agent",
            "true",
            "--ledger",
            str(tmp_path / "runs.db"),
            "--sandbox",
            "process",
            "--model-upstream",
            upstream.url,
            "--model-key-env",
            KEY_ENV,
            "--accept-open-network",
        ]
    )
    assert done.exit_code == 0, done.output
    lines = " ".join(done.stderr.split())  # the note is wrapped to the terminal's width
    note = (
        "model gateway: the agent's model calls are metered; the process tier does not keep it "
        "to them (it can reach the internet and read the harness's environment: accepted)"
    )
    assert note in lines
    assert lines.index(note) < lines.index("attempts to run")  # before the first attempt
