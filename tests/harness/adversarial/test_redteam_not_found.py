"""Red team: an agent fakes the shell's "not found" to turn its failure into an infra error.

Attack: the agent writes ``/bin/sh: 1: claude: not found`` to stderr and exits 127, the shell's own
words for a program it could not start. The harness read them as its own observation: the row was
``infra_error`` ("the agent's command could not be started"), so ``--resume --rerun-infra`` ran the
attempt again, and again, until it passed (a 50%-pass agent went from pass@1 66.7% to 100% after three
resumes, with an infra-error rate of 0.0% shown after). The same through a grader that passes on the
exit code of a program of the workspace.

Expected (docs/harness.md, "Whose failure"): what the agent prints or exits with is the agent's; only
the harness's own start check (run by the command's shell before any of the command runs, and said
on a pipe the command never holds) makes an infra error.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness.adversarial._whom import Harness, harness  # noqa: F401  (fixture)
from tests.harness.test_run import TIERS, outside_tmp, unique_run_id  # noqa: F401  (fixture)
from trialbook.harness import RunOptions, run_suite

FAKE = "echo '/bin/sh: 1: claude: not found' >&2; exit 127"


@pytest.mark.parametrize("tier", TIERS)
def test_an_agent_that_prints_not_found_and_exits_127_failed(harness: Harness, tier: str) -> None:
    (row,) = harness.run(harness.work, {"t": {"grader": "test -f done.txt"}}, FAKE, tier)
    assert row["status"] == "failed", row["error"]
    assert "harness error" not in (row["error"] or "")
    assert "claude" not in (row["error"] or "")  # the agent's words stay in its own output


@pytest.mark.parametrize("tier", TIERS)
def test_a_grader_that_passes_on_the_agents_exit_code_fails_it(harness: Harness, tier: str) -> None:
    task = {
        "grader": 'sh "$TRIALBOOK_ORACLE_DIR/check.sh"',
        "oracle": {"check.sh": "sh ./solution.sh\nexit $?\n"},
    }
    agent = f"printf '%s\\n' \"{FAKE}\" > solution.sh"
    (row,) = harness.run(harness.work, {"t": task}, agent, tier)
    assert row["status"] == "failed", row["error"]
    assert "harness error" not in (row["error"] or "")


@pytest.mark.parametrize("tier", TIERS)
def test_a_program_missing_when_the_attempt_starts_is_the_harnesss(
    harness: Harness, tier: str
) -> None:
    """The start check itself: a program named through a variable is found missing by the shell
    before the command runs, an infra error that names it."""
    (row,) = harness.run(
        harness.work, {"t": {"grader": "true"}}, '"no-such-tool-$TRIALBOOK_TASK_ID" --go', tier
    )
    assert row["status"] == "infra_error"
    assert "the agent's command could not be started" in row["error"]
    assert "no-such-tool-t: not found" in row["error"]


def test_rerun_infra_never_rerolls_the_agents_own_failure(outside_tmp: Path) -> None:
    suite = make_suite(outside_tmp / "suite", {"t": {"grader": "test -f done.txt"}}, k=4)
    ledger = outside_tmp / "ledger.db"
    run_id = unique_run_id()
    # passes on even attempts, fakes "not found" on odd ones
    agent = f"if [ $((TRIALBOOK_ATTEMPT % 2)) = 0 ]; then touch done.txt; else {FAKE}; fi"
    run_suite(RunOptions(suite=suite, agent=agent, ledger=ledger, run_id=run_id, sandbox="process"))
    for _ in range(3):
        again = run_suite(
            RunOptions(suite=None, agent=None, ledger=ledger, resume=run_id, rerun_infra=True)
        )
        assert (again.written, again.reruns) == (0, 0)
    with sqlite3.connect(ledger) as db:
        rows = db.execute(
            "SELECT attempt_index, status, retry FROM attempts WHERE run_id = ? ORDER BY 1",
            (run_id,),
        ).fetchall()
    assert [(i, s) for i, s, _ in rows] == [
        (0, "passed"), (1, "failed"), (2, "passed"), (3, "failed")
    ]  # fmt: skip
    assert all(not retry for _, _, retry in rows)


# Writes "not found" on every pipe any process it can see holds (its ancestors' descriptors, opened
# anew through /proc/PID/fd), then exits 127 as a shell that could not start a program does.
WRITE_EVERY_PIPE = (
    'python -c "import os\n'
    "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try: fds = os.listdir(f'/proc/{pid}/fd')\n"
    "    except OSError: continue\n"
    "    for fd in fds:\n"
    "        path = f'/proc/{pid}/fd/{fd}'\n"
    "        try:\n"
    "            if os.readlink(path).startswith('pipe:'):\n"
    "                w = os.open(path, os.O_WRONLY | os.O_NONBLOCK); os.write(w, b'claude: not found\\\\n')\n"
    "        except OSError: pass\n"
    '"; exit 127'
)


@pytest.mark.parametrize("tier", [t for t in TIERS if getattr(t, "values", (t,))[0] == "bwrap"])
def test_no_process_of_the_sandbox_holds_the_start_status_pipe(harness: Harness, tier: str) -> None:
    (row,) = harness.run(
        harness.work, {"t": {"grader": "test -f done.txt"}}, WRITE_EVERY_PIPE, tier
    )
    assert row["status"] == "failed", row["error"]
