"""A suite may opt in to grading after a timeout (as Terminal-Bench grades): the timed-out attempt is
then judged, may pass, and every row of the run says graded_after_timeout; without it, never."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness.test_run import TIERS, alive_with, unique_run_id, unique_seconds
from trialbook.analysis import score_file
from trialbook.harness import RunOptions, run_suite
from trialbook.ledger import ledger_rows, read_ledger


def _run(tmp_path: Path, tier: str, opt_in: bool) -> list[dict[str, object]]:
    extra = "grade_after_timeout = true\n" if opt_in else ""
    tasks = {"slow": {"grader": "test -f done.txt"}, "quick": {"grader": "test -f done.txt"}}
    suite = make_suite(tmp_path / "suite", tasks, k=1, timeout_s=1, extra=extra)
    hang = unique_seconds()
    agent = f'touch done.txt; if [ "$TRIALBOOK_TASK_ID" = slow ]; then sleep {hang}; fi'
    ledger = tmp_path / "out" / "ledger.db"
    run_suite(
        RunOptions(
            suite=suite,
            agent=agent,
            ledger=ledger,
            system="t",
            sandbox=tier,
            run_id=unique_run_id(),
            grace_s=0.5,
        )
    )
    assert not alive_with(hang)
    return sorted(ledger_rows(read_ledger(ledger)), key=lambda r: str(r["task_id"]))


@pytest.mark.parametrize("tier", TIERS)
def test_a_suite_that_opts_in_grades_after_the_timeout(tmp_path: Path, tier: str) -> None:
    quick, slow = _run(tmp_path, tier, opt_in=True)
    assert (slow["timed_out"], slow["passed"], slow["status"]) == (True, True, "passed")
    assert (quick["timed_out"], quick["passed"]) == (False, True)
    assert slow["graded_after_timeout"] is True
    assert quick["graded_after_timeout"] is True
    (run,) = score_file(tmp_path / "out" / "ledger.db").runs
    assert run.passes_after_timeout == 1


def test_without_the_opt_in_a_timeout_is_never_graded(tmp_path: Path) -> None:
    _, slow = _run(tmp_path, "process", opt_in=False)
    assert (slow["timed_out"], slow["passed"], slow["status"]) == (True, False, "timed_out")
    assert slow["graded_after_timeout"] is None
