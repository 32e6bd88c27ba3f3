"""The selection view (pool coverage, delivered success, selector misses) and the fault table.

Expected counts are read off the small tables written beside each test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row, matrix_rows, write_jsonl
from trialbook.analysis import score_file
from trialbook.errors import LedgerError, TrialbookError
from trialbook.report import score_to_dict


def _selected(outcomes: dict[str, list[int]], picks: dict[str, int | None]) -> list[dict[str, Any]]:
    """Rows with ``selected`` true on the picked attempt (None: recorded false on every one)."""
    rows = matrix_rows(outcomes, run_id="sel")
    for r in rows:
        if r["task_id"] in picks:
            r["selected"] = r["attempt_index"] == picks[r["task_id"]]
    return rows


# task: attempts (1 = pass) -> selected attempt
#   A 100 -> 0 (passed: delivered)     B 010 -> 2 (failed: a miss, the pool held a pass)
#   C 000 -> 1 (failed, pool empty)     D 111 -> none marked (delivered nothing: a miss)
OUTCOMES = {"A": [1, 0, 0], "B": [0, 1, 0], "C": [0, 0, 0], "D": [1, 1, 1]}
PICKS: dict[str, int | None] = {"A": 0, "B": 2, "C": 1, "D": None}


def test_pool_delivered_and_misses_apart(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "sel.jsonl", _selected(OUTCOMES, PICKS))
    (run,) = score_file(path).runs
    sel = run.selection
    assert sel is not None
    assert (sel.tasks, sel.tasks_unmarked) == (4, 0)
    assert (sel.pool_covered, sel.delivered, sel.misses, sel.nothing_selected) == (3, 1, 2, 1)
    assert sel.miss_task_ids == ("B", "D")
    assert sel.misses_of_covered == pytest.approx(2 / 3)
    assert sel.pool_coverage.estimate == 0.75
    assert sel.delivered_success.estimate == 0.25
    assert sel.miss_rate.estimate == 0.5
    # pool coverage is pass@n per task (a pass among all n attempts): with every task marked and
    # n = 3 everywhere it is the scorecard's pass@3, interval and all
    at3 = run.metrics["pass@3"]
    assert (sel.pool_coverage.ci_low, sel.pool_coverage.ci_high) == (at3.ci_low, at3.ci_high)
    for m in (sel.pool_coverage, sel.delivered_success, sel.miss_rate):
        assert m.ci_low <= m.estimate <= m.ci_high
    doc = score_to_dict(score_file(path))["runs"][0]["selection"]
    assert doc["misses"] == 2
    assert doc["delivered_success"]["estimate"] == 0.25


def test_tasks_without_a_marked_selection_are_left_out_and_counted(tmp_path: Path) -> None:
    rows = _selected({**OUTCOMES, "E": [1, 1, 1]}, PICKS)  # E records no 'selected' at all
    (run,) = score_file(write_jsonl(tmp_path / "sel.jsonl", rows)).runs
    assert run.selection is not None
    assert (run.selection.tasks, run.selection.tasks_unmarked) == (4, 1)
    assert run.selection.pool_coverage.estimate == 0.75  # E is not in the denominator


def test_no_selected_field_no_selection(tmp_path: Path) -> None:
    (run,) = score_file(write_jsonl(tmp_path / "r.jsonl", matrix_rows(OUTCOMES))).runs
    assert run.selection is None
    assert score_to_dict(score_file(tmp_path / "r.jsonl"))["runs"][0]["selection"] is None


def test_two_selected_attempts_of_one_task_are_refused(tmp_path: Path) -> None:
    rows = _selected(OUTCOMES, PICKS)
    for r in rows:
        if r["task_id"] == "A" and r["attempt_index"] == 1:
            r["selected"] = True
    with pytest.raises(LedgerError, match=r"task 'A': field 'selected' marks 2 attempts"):
        score_file(write_jsonl(tmp_path / "sel.jsonl", rows))


def _fault_ledger(tmp_path: Path) -> Path:
    # headline tasks: N1 11, N2 01 and P 00 (stratum "regression": regression work, ordinary)
    # fault cases: F1 10 and F2 (timeout, infra error) of type lost-receipt; R1 11 of regression
    # set "compaction"
    rows = matrix_rows({"N1": [1, 1], "N2": [0, 1]}, stratum="repair")
    rows += matrix_rows({"P": [0, 0]}, stratum="regression")
    rows += matrix_rows({"F1": [1, 0]}, stratum="fault:lost-receipt")
    rows += [
        base_row("F2", 0, passed=False, k=2, timed_out=True, stratum="fault:lost-receipt"),
        base_row("F2", 1, passed=False, k=2, status="infra_error", stratum="fault:lost-receipt"),
    ]
    rows += matrix_rows({"R1": [1, 1]}, stratum="regression:compaction")
    return write_jsonl(tmp_path / "faults.jsonl", rows)


def test_fault_cases_have_their_own_table_and_stay_out_of_the_headline(tmp_path: Path) -> None:
    (run,) = score_file(_fault_ledger(tmp_path)).runs
    # headline over N1, N2, P: (1 + 0.5 + 0) / 3
    assert run.tasks == 3
    assert run.metrics["pass@1"].estimate == pytest.approx(0.5)
    assert [s.stratum for s in run.strata] == ["repair", "regression"]
    assert any("kept out of the headline" in n and "3 fault" in n for n in run.notes)
    assert run.faults is not None
    receipt, compaction = run.faults.rows
    assert (receipt.kind, receipt.fault_type, receipt.tasks, receipt.attempts) == (
        "fault",
        "lost-receipt",
        2,
        4,
    )
    assert receipt.outcomes == {"passed": 1, "failed": 1, "timed_out": 1, "infra_error": 1}
    assert (receipt.tasks_always_passed, receipt.tasks_never_passed) == (0, 1)
    assert (compaction.kind, compaction.fault_type, compaction.pass_rate) == (
        "regression",
        "compaction",
        1.0,
    )
    doc = score_to_dict(score_file(_fault_ledger(tmp_path)))["runs"][0]["faults"]
    assert doc["in_headline"] is False
    assert doc["rows"][0]["outcomes"]["timed_out"] == 1


def test_a_run_of_fault_cases_only_says_so(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "f.jsonl", matrix_rows({"F": [1, 0]}, stratum="fault:crash"))
    with pytest.raises(TrialbookError, match="fault case"):
        score_file(path)


def test_failures_by_outcome_and_error(tmp_path: Path) -> None:
    # 6 attempts of one task: 1 pass; fails: 2 x "E1", 1 x "E2", 1 timeout (no error), 1 infra
    rows = [
        base_row("t", 0, passed=True, k=6),
        base_row("t", 1, passed=False, k=6, error="E1"),
        base_row("t", 2, passed=False, k=6, error="E2"),
        base_row("t", 3, passed=False, k=6, error="E1"),
        base_row("t", 4, passed=False, k=6, timed_out=True, status="timed_out"),
        base_row("t", 5, passed=False, k=6, status="infra_error", error="no sandbox"),
    ]
    (run,) = score_file(write_jsonl(tmp_path / "f.jsonl", rows)).runs
    f = run.failures
    assert f is not None
    assert f.attempts == 5
    assert f.by_outcome == {"failed": 3, "timed_out": 1, "infra_error": 1}
    assert f.by_error == (("E1", 2), ("E2", 1), ("no sandbox", 1))
    assert (f.other_errors, f.no_error) == (0, 1)
    doc = score_to_dict(score_file(tmp_path / "f.jsonl"))["runs"][0]["failures"]
    assert doc["by_error"][0] == {"error": "E1", "attempts": 2}
