"""A repair-protocol suite through the real harness: each task's attempts run in order, attempt i is
handed attempt i-1's outcome and grader output (TRIALBOOK_FEEDBACK), the protocol is recorded in
the run record and every row, and the figures are success within k rounds, never pass@k."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.harness.test_run import TIERS, unique_run_id
from trialbook.analysis import score_file
from trialbook.cli import main
from trialbook.harness import RunOptions, Tally, run_suite
from trialbook.ledger import LedgerStore, ledger_rows, read_ledger

SECRET = "oracle-secret-7f3a"
# The grader sees the oracle and prints only its verdict: a repair suite's grader must never
# print oracle content (docs/harness.md), since its stdout is the next round's feedback.
GRADER = f'grep -q {SECRET} "$TRIALBOOK_ORACLE_DIR/answer" && test -f ok.txt || {{ echo "missing ok.txt"; exit 1; }}'
# Fails unless told that the previous attempt failed with the grader's message: then it fixes
# the workspace. It prints the feedback it was given (kept in the transcripts).
AGENT = (
    'if [ -n "$TRIALBOOK_FEEDBACK" ]; then cat "$TRIALBOOK_FEEDBACK"; '
    'grep -q \'"passed": false\' "$TRIALBOOK_FEEDBACK" '
    "&& grep -q 'missing ok.txt' \"$TRIALBOOK_FEEDBACK\" && touch ok.txt; fi; true"
)


def _suite(root: Path, protocol: str | None) -> Path:
    task = {"grader": GRADER, "oracle": {"answer": SECRET}}
    # this grader prints only what failed, never the oracle: its stdout may be passed on
    extra = f'protocol = "{protocol}"\nfeedback = "grader-stdout"\n' if protocol else ""
    return make_suite(root, {"a": task, "b": task}, k=3, extra=extra)


def _run(tmp_path: Path, protocol: str | None, tier: str = "process") -> Path:
    ledger = tmp_path / "out" / "ledger.db"
    run_suite(
        RunOptions(
            suite=_suite(tmp_path / "suite", protocol),
            agent=AGENT,
            ledger=ledger,
            system="fixer",
            sandbox=tier,
            run_id=unique_run_id(),
            jobs=4,  # room for every attempt at once: only the protocol keeps rounds in order
        )
    )
    return ledger


def _by_task(ledger: Path) -> dict[str, list[dict[str, object]]]:
    rows = sorted(
        ledger_rows(read_ledger(ledger)), key=lambda r: (r["task_id"], r["attempt_index"])
    )
    out: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        out.setdefault(str(row["task_id"]), []).append(row)
    return out


@pytest.mark.parametrize("tier", TIERS)
def test_the_second_round_sees_the_first_rounds_feedback(tmp_path: Path, tier: str) -> None:
    ledger = _run(tmp_path, "repair", tier)
    for task, rows in _by_task(ledger).items():
        # round 0 has no feedback and fails; round 1 is told it failed with "missing ok.txt" and
        # passes; round 2 is told round 1 passed, so it does nothing and fails
        assert [r["passed"] for r in rows] == [False, True, False], task
        assert {r["protocol"] for r in rows} == {"repair"}
        for before, after in itertools.pairwise(rows):
            assert str(after["started_at"]) >= str(before["finished_at"])  # one after the other
        shown = ledger.parent / str(rows[1]["transcript"]) / "agent.stdout"
        feedback = json.loads(shown.read_text())
        assert feedback == {
            "feedback": "grader-stdout",
            "attempt_index": 0,
            "passed": False,
            "status": "failed",
            "timed_out": False,
            "score": None,
            "checks": None,  # the grader names none
            "grader_stdout": "missing ok.txt\n",
            "grader_stdout_truncated": False,
        }
        assert SECRET not in shown.read_text()
        assert not (ledger.parent / str(rows[0]["transcript"]) / "agent.stdout").exists()
    with LedgerStore(ledger, readonly=True) as store:
        (status,) = store.runs()
    assert status.record.protocol == "repair"


def test_an_independent_suite_gives_no_feedback(tmp_path: Path) -> None:
    ledger = _run(tmp_path, None)
    for rows in _by_task(ledger).values():
        assert [r["passed"] for r in rows] == [False, False, False]
        assert {r["protocol"] for r in rows} == {"independent"}
    with LedgerStore(ledger, readonly=True) as store:
        (status,) = store.runs()
    assert status.record.protocol == "independent"


def test_a_repair_run_is_scored_as_rounds_in_json_terminal_and_html(tmp_path: Path) -> None:
    ledger = _run(tmp_path, "repair")
    (run,) = score_file(ledger).runs
    assert run.protocol == "repair"
    # every task: no pass in round 1, a pass in round 2
    assert {k: m.estimate for k, m in run.metrics.items()} == {
        "within@1": 0.0,
        "within@2": 1.0,
        "within@3": 1.0,
    }
    runner = CliRunner()
    doc = json.loads(runner.invoke(main, ["score", str(ledger), "--format", "json"]).output)
    (got,) = doc["runs"]
    assert got["protocol"] == "repair"
    assert set(got["metrics"]) == {"within@1", "within@2", "within@3"}  # no pass@k, no pass^k
    text = runner.invoke(main, ["score", str(ledger)], terminal_width=80).output
    assert "success within 1 round" in text
    assert "success within 3 rounds" in text
    lines = text.splitlines()
    assert not [line for line in lines if line.startswith(("pass@", "pass^"))]
    assert "pass" not in lines[0]  # the headline
    html = runner.invoke(main, ["score", str(ledger), "--format", "html"]).output
    assert "success within 1 round" in html
    assert "pass^" not in html
    md = runner.invoke(main, ["score", str(ledger), "--format", "markdown"]).output
    assert "success within 1 round" in md
    assert "pass^" not in md


class _StopAfterFirstRow:
    """Stops the run once its first row is written: a repair run cut off between rounds."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None:
        """Nothing to draw."""

    def attempt(self, row: Mapping[str, object]) -> None:
        self.stop.set()


def test_a_resumed_repair_run_runs_its_missing_rounds_in_order(tmp_path: Path) -> None:
    ledger = tmp_path / "out" / "ledger.db"
    options = RunOptions(
        suite=_suite(tmp_path / "suite", "repair"),
        agent=AGENT,
        ledger=ledger,
        system="fixer",
        sandbox="process",
        run_id=unique_run_id(),
        jobs=1,
    )
    stop = threading.Event()
    first = run_suite(options, progress=_StopAfterFirstRow(stop), stop=stop)
    assert first.interrupted
    assert 1 <= first.written < 6
    # the resume hands round 1 the feedback of round 0, read back from the ledger and its
    # kept grader output
    run_suite(RunOptions(suite=None, agent=None, ledger=ledger, resume=first.run_id))
    for task, rows in _by_task(ledger).items():
        assert [r["passed"] for r in rows] == [False, True, False], task
        for before, after in itertools.pairwise(rows):
            assert str(after["started_at"]) >= str(before["finished_at"])
