"""A real project's layout (suite/, agent.sh, runs.db and trialbook.toml side by side) runs in both
tiers; the pre-flight refuses what could not start; set-up errors stop the run; the run record keeps
its provenance and a resume is held to it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_suite
from tests.harness.test_run import TIERS, outside_tmp, unique_run_id
from trialbook.errors import ArgumentError, HarnessError, SuiteError
from trialbook.harness import RunOptions, run_suite
from trialbook.ledger import LedgerStore, ledger_rows, read_ledger

__all__ = ["make_project", "outside_tmp"]

TASKS = {name: {"grader": "test -f done.txt"} for name in ("alpha", "beta", "gamma")}
AGENT = """#!/bin/sh
# lists its own folder (what the sandbox shows of it), then does the task
ls -a "$(dirname "$0")"
touch done.txt
"""


def make_project(root: Path, *, k: int = 1, agent: str = AGENT) -> Path:
    """suite/, agent.sh and (after a run) runs.db with its transcripts, side by side."""
    make_suite(root / "suite", TASKS, k=k, extra='[subsets]\nsmoke = ["alpha", "gamma"]\n')
    script = root / "agent.sh"
    script.write_text(agent)
    script.chmod(0o755)
    (root / "notes.md").write_text("the project's own notes\n")
    return root


def rows_of(ledger: Path) -> list[dict[str, Any]]:
    return list(ledger_rows(read_ledger(ledger)))


def listing(ledger: Path, row: dict[str, Any]) -> list[str]:
    out = ledger.parent / "runs.transcripts" / row["transcript"].split("/", 1)[1] / "agent.stdout"
    return out.read_text().split()


@pytest.mark.parametrize("tier", TIERS)
def test_an_agent_beside_the_ledger_runs_and_sees_only_its_own_files(
    outside_tmp: Path, tier: str
) -> None:
    root = make_project(outside_tmp)
    ledger = root / "runs.db"
    for _ in range(2):  # the second run finds runs.db, its journals and transcripts beside it
        result = run_suite(
            RunOptions(
                suite=root / "suite",
                agent=str(root / "agent.sh"),
                ledger=ledger,
                run_id=unique_run_id(),
                sandbox=tier,
            )
        )
        rows = [r for r in rows_of(ledger) if r["run_id"] == result.run_id]
        assert [r["status"] for r in rows] == ["passed"] * 3, rows
    seen = listing(ledger, rows[0])
    assert {"agent.sh", "notes.md"} <= set(seen)
    if tier == "bwrap":  # exactly the ledger's files, the transcripts and the suite are missing
        assert not {"runs.db", "runs.db-wal", "runs.db-shm", "runs.transcripts", "suite"} & set(
            seen
        ), seen
    else:  # the process tier hides no file (docs/harness.md)
        assert {"runs.db", "suite"} <= set(seen)


@pytest.mark.parametrize("tier", TIERS)
def test_an_agent_under_tmp_runs(tmp_path: Path, tier: str) -> None:
    root = make_project(tmp_path)  # /tmp/pytest-of-...: the bwrap tier gives the agent a fresh /tmp
    result = run_suite(
        RunOptions(
            suite=root / "suite",
            agent=str(root / "agent.sh"),
            ledger=root / "runs.db",
            run_id=unique_run_id(),
            sandbox=tier,
        )
    )
    assert result.written == 3
    assert {r["status"] for r in rows_of(root / "runs.db")} == {"passed"}


@pytest.mark.parametrize("tier", TIERS)
def test_a_relative_path_inside_the_arguments_is_refused_before_any_attempt(
    outside_tmp: Path, tier: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(outside_tmp)
    monkeypatch.chdir(root)
    with pytest.raises(ArgumentError, match=r"'agent.sh' is relative to this folder") as caught:
        run_suite(RunOptions(suite=root / "suite", agent="sh agent.sh", ledger=root / "runs.db"))
    assert caught.value.argument == "agent"
    assert str(root / "agent.sh") in str(caught.value)  # the absolute path to give instead
    assert not (root / "runs.db").exists()


@pytest.mark.parametrize(
    ("agent", "why"),
    [
        ("{root}/missing.sh", "does not exist"),
        ("no-such-agent-program-tb --x", "is not on the sandbox's PATH"),
        ("{root}/notes.md", "is not executable"),
        ("cat {root}/suite/tasks/alpha/task.toml", "is inside the suite folder"),
        ("cat {root}/runs.db", "is the ledger"),
    ],
)
def test_the_preflight_refuses_what_could_not_start_and_writes_nothing(
    outside_tmp: Path, agent: str, why: str
) -> None:
    root = make_project(outside_tmp)
    ledger = root / "runs.db"
    if "runs.db" in agent:
        with LedgerStore(ledger):
            pass  # the ledger exists, as it does beside an agent from the second run on
    with pytest.raises(ArgumentError, match=why):
        run_suite(
            RunOptions(
                suite=root / "suite",
                agent=agent.format(root=root),
                ledger=ledger,
                sandbox="bwrap" if "suite" in agent or "runs.db" in agent else None,
            )
        )
    if ledger.exists():
        with LedgerStore(ledger) as store:
            assert store.runs() == []


@pytest.mark.parametrize("tier", TIERS)
def test_a_command_the_shell_cannot_start_is_an_infra_error_and_stops_the_run(
    outside_tmp: Path, tier: str
) -> None:
    root = make_project(outside_tmp, k=2)
    ledger = root / "runs.db"
    # the program's name is made at run time, so only the attempt can find it missing
    agent = '"no-such-tool-$TRIALBOOK_TASK_ID" --go'
    with pytest.raises(HarnessError, match="could not be started") as caught:
        run_suite(RunOptions(suite=root / "suite", agent=agent, ledger=ledger, sandbox=tier))
    assert "first 3 attempt(s)" in str(caught.value)
    rows = rows_of(ledger)
    assert len(rows) == 3  # of 6 planned: the run stopped, the rows made are kept
    for row in rows:
        assert row["status"] == "infra_error"
        assert f"no-such-tool-{row['task_id']}: not found" in row["error"]
    with sqlite3.connect(ledger) as conn:
        (detail,) = conn.execute(
            "SELECT detail FROM run_events WHERE event = 'interrupted'"
        ).fetchone()
    assert "could not be started" in detail


def test_an_agents_own_failure_to_start_a_tool_stays_its_failure(outside_tmp: Path) -> None:
    root = make_project(outside_tmp, agent="#!/bin/sh\nno-such-tool-inside-tb\n")
    run_suite(
        RunOptions(suite=root / "suite", agent=str(root / "agent.sh"), ledger=root / "runs.db")
    )
    assert {r["status"] for r in rows_of(root / "runs.db")} == {"failed"}


def test_the_run_record_keeps_the_provenance(outside_tmp: Path) -> None:
    import hashlib
    import platform
    import socket

    root = make_project(outside_tmp, k=2)
    ledger = root / "runs.db"
    result = run_suite(
        RunOptions(
            suite=root / "suite",
            agent=f"sh {root / 'agent.sh'}",
            ledger=ledger,
            system="mine",
            sandbox="process",
            subset="smoke",
            pass_env={"TB_KEY": "the-secret-value"},
        )
    )
    with LedgerStore(ledger) as store:
        record = store.runs()[0].record
    digest = hashlib.sha256((root / "agent.sh").read_bytes()).hexdigest()
    assert record.agent == f"sh {root / 'agent.sh'}"
    assert record.agent_digest == f"sha256:{digest} {root / 'agent.sh'}"
    assert record.graders == ("test -f done.txt",)
    assert record.sandbox == "process"
    assert record.pass_env == ("TB_KEY",)
    assert record.python_version == platform.python_version()
    assert record.host == socket.gethostname()
    assert str(record.harness_version).startswith("trialbook ")
    assert record.planned == 2 * 2 == result.planned  # the smoke subset's 2 tasks, k = 2
    assert record.tasks == ("alpha", "gamma")
    assert record.selection == "subset smoke"
    assert b"the-secret-value" not in ledger.read_bytes()


def test_task_globs_and_limit_select_and_are_recorded(outside_tmp: Path) -> None:
    root = make_project(outside_tmp)
    ledger = root / "runs.db"
    options: dict[str, Any] = {"suite": root / "suite", "agent": "touch done.txt", "ledger": ledger}
    run_suite(RunOptions(**options, tasks=("*a",), limit=2, sandbox="process"))
    assert sorted(r["task_id"] for r in rows_of(ledger)) == ["alpha", "beta"]  # gamma: past 2
    with LedgerStore(ledger) as store:
        assert store.runs()[0].record.selection == "--task '*a', --limit 2"
    with pytest.raises(ArgumentError, match="'delta' matches no task") as caught:
        run_suite(RunOptions(**options, tasks=("delta",)))
    assert caught.value.argument == "tasks"
    with pytest.raises(ArgumentError, match="limit must be >= 1") as caught:
        run_suite(RunOptions(**options, limit=0))
    assert caught.value.argument == "limit"


def _interrupted(root: Path, agent: str, **kw: Any) -> str:
    """A run of ``agent`` on the project stopped after its first attempt; its id."""
    import threading

    stop = threading.Event()

    class StopAfterOne:
        def begin(self, *_: object) -> None: ...

        def attempt(self, _: object) -> None:
            stop.set()

    result = run_suite(
        RunOptions(suite=root / "suite", agent=agent, ledger=root / "runs.db", **kw),
        progress=StopAfterOne(),
        stop=stop,
    )
    assert result.interrupted
    return result.run_id


def test_resume_refuses_another_agent_sandbox_or_suite(outside_tmp: Path) -> None:
    root = make_project(outside_tmp, k=2)
    ledger = root / "runs.db"
    agent = "sleep 0.3; touch done.txt"
    run_id = _interrupted(root, agent, sandbox="process", subset="smoke")
    resume: dict[str, Any] = {"suite": None, "ledger": ledger, "resume": run_id}
    with pytest.raises(
        ArgumentError, match=r"was made with the agent 'sleep 0\.3; touch"
    ) as caught:
        run_suite(RunOptions(agent="/bin/echo totally different", **resume))
    assert caught.value.argument == "agent"
    with pytest.raises(ArgumentError, match="used the process sandbox, not bwrap") as caught:
        run_suite(RunOptions(agent=None, sandbox="bwrap", **resume))
    assert caught.value.argument == "sandbox"
    changed = {**TASKS, "alpha": {"grader": "test -f done.txt", "prompt": "another prompt"}}
    make_suite(root / "suite", changed, k=2, extra='[subsets]\nsmoke = ["alpha", "gamma"]\n')
    with pytest.raises(SuiteError, match="was made on dataset"):
        run_suite(RunOptions(agent=None, **resume))
    with LedgerStore(ledger) as store:
        assert len(store.finished(run_id)) == 1  # nothing written under another agent
    # with nothing given, the run's own settings: its suite, agent, sandbox and tasks
    make_suite(root / "suite", TASKS, k=2, extra='[subsets]\nsmoke = ["alpha", "gamma"]\n')
    result = run_suite(RunOptions(agent=None, **resume))
    assert result.tier == "process"
    assert sorted(r["task_id"] for r in rows_of(ledger)) == ["alpha", "alpha", "gamma", "gamma"]
