"""Behaviours of the analysis layer that a mutation run found no test of its module pinning: the
human-selected protocol's every-task rule, fault strata (case, outcome kinds, quarantine) and the
check moves' two-shared-task floor. Every expected count is read off the rows written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row, matrix_rows, write_jsonl
from trialbook.analysis import CompareOptions, compare_runs, score_file
from trialbook.analysis._faults import fault_kind
from trialbook.errors import ArgumentError
from trialbook.ledger import CheckVerdict, checks_text

# ---------------------------------------------------------------- human-selected: every task


def _human_selected(path: Path, run_id: str, marked: str) -> Path:
    # 3 tasks x 2 attempts, attempt 1 passes; the tasks in ``marked`` mark attempt 1 as the one
    # the person picked, the others mark none
    rows: list[dict[str, Any]] = []
    for task in ("A", "B", "C"):
        for a in range(2):
            row = base_row(
                task, a, passed=a == 1, k=2, run_id=run_id, dataset_id="d", system=run_id
            )
            row["protocol"] = "human-selected"
            if task in marked:
                row["selected"] = a == 1
            rows.append(row)
    return write_jsonl(path, rows)


def test_compare_refuses_a_human_selected_run_when_some_task_marks_no_selected_attempt(
    tmp_path: Path,
) -> None:
    # compare pairs delivered success task by task: a task with no picked attempt has no known
    # delivered success, so one such task (not only all of them) refuses the comparison
    every = _human_selected(tmp_path / "a.jsonl", "a", "ABC")
    some = _human_selected(tmp_path / "b.jsonl", "b", "A")
    options = CompareOptions(resamples=200)
    with pytest.raises(ArgumentError, match=r"2 task\(s\) record no 'selected' attempt"):
        compare_runs(str(every), str(some), options)
    with pytest.raises(ArgumentError, match=r"1 task\(s\) record no 'selected' attempt"):
        compare_runs(str(every), str(_human_selected(tmp_path / "c.jsonl", "c", "AB")), options)
    both = compare_runs(str(every), str(_human_selected(tmp_path / "d.jsonl", "d", "ABC")), options)
    assert both.tasks == 3
    assert both.difference.estimate == 0.0  # every picked attempt passed on both sides


# ---------------------------------------------------------------- fault strata


@pytest.mark.parametrize(
    ("stratum", "expected"),
    [
        ("fault:crash", ("fault", "crash")),
        ("Fault:crash", ("fault", "crash")),
        ("FAULT: lost-receipt ", ("fault", "lost-receipt")),
        ("Regression:compaction", ("regression", "compaction")),
        ("fault:", ("fault", "unspecified")),
        ("regression", None),  # regression work, an ordinary task
        ("faulty:x", None),
        (None, None),
    ],
)
def test_the_fault_kind_is_read_in_any_case(stratum: str | None, expected: object) -> None:
    assert fault_kind(stratum) == expected


def test_a_capitalised_fault_stratum_stays_out_of_the_headline(tmp_path: Path) -> None:
    rows = matrix_rows({"N": [1, 0]}, stratum="repair") + matrix_rows(
        {"F": [0, 0]}, stratum="Fault:crash"
    )
    (run,) = score_file(write_jsonl(tmp_path / "l.jsonl", rows)).runs
    assert run.tasks == 1  # N only: (1 + 0) / 2
    assert run.metrics["pass@1"].estimate == pytest.approx(0.5)
    assert run.faults is not None
    assert [r.task_ids for r in run.faults.rows] == [("F",)]


def test_a_task_outcome_not_recorded_is_not_a_protected_failure(tmp_path: Path) -> None:
    # four attempts of a fault case, protection held on each; the task outcome: done, not done,
    # and twice not recorded. Protected-but-failed is protection held AND task not done: 1 (the
    # not-recorded ones are not known to have failed the task)
    outcome: list[bool | None] = [True, False, None, None]
    rows = [
        base_row(
            "F",
            a,
            passed=done is True,
            k=4,
            stratum="fault:permission",
            protection=True,
            task_outcome=done,
        )
        for a, done in enumerate(outcome)
    ] + matrix_rows({"N": [1, 1, 0, 0]})
    (run,) = score_file(write_jsonl(tmp_path / "l.jsonl", rows)).runs
    assert run.faults is not None
    (row,) = run.faults.rows
    assert row.task_outcome == {"done": 1, "not done": 1, "not recorded": 2}
    assert row.protection == {"held": 4, "not held": 0, "not recorded": 0}
    assert row.protected_but_failed == 1


def test_a_leaked_fault_case_is_quarantined_not_in_the_fault_table(tmp_path: Path) -> None:
    # a task with any attempt flagged oracle_leak is quarantined whole: reported, never scored,
    # in the fault table as much as in the headline
    rows = matrix_rows({"N": [1, 0]}) + matrix_rows({"F1": [1, 0], "F2": [0, 0]}, stratum="fault:x")
    rows[-1]["oracle_leak"] = True  # F2's last attempt
    (run,) = score_file(write_jsonl(tmp_path / "l.jsonl", rows)).runs
    assert run.faults is not None
    (row,) = run.faults.rows
    assert row.task_ids == ("F1",)
    assert (row.tasks, row.attempts) == (1, 2)
    assert run.faults.tasks == 1


# ---------------------------------------------------------------- check moves


def _checked(run_id: str, tasks: dict[str, list[bool]]) -> list[dict[str, Any]]:
    rows = []
    for task, verdicts in tasks.items():
        for a, ok in enumerate(verdicts):
            rows.append(
                base_row(
                    task,
                    a,
                    passed=ok,
                    k=len(verdicts),
                    run_id=run_id,
                    dataset_id="d",
                    system=run_id,
                    checks=checks_text({"build": CheckVerdict(ok, None)}),
                )
            )
    return rows


def test_a_check_shared_on_one_task_only_is_not_compared(tmp_path: Path) -> None:
    # both runs record the check 'build', but on one shared task only (A): an interval over one
    # task is a point, so the check is listed as not compared, with no move
    base = write_jsonl(tmp_path / "a.jsonl", _checked("a", {"A": [True, False], "B": [True, True]}))
    cand = write_jsonl(tmp_path / "b.jsonl", _checked("b", {"A": [True, True], "C": [False, True]}))
    options = CompareOptions(resamples=200)
    one = compare_runs(str(base), str(cand), options)
    assert one.tasks == 1
    assert one.checks == ()
    assert one.checks_not_compared == ("build",)
    # with a second shared task the check is compared
    cand2 = write_jsonl(
        tmp_path / "c.jsonl", _checked("c", {"A": [True, True], "B": [False, True]})
    )
    two = compare_runs(str(base), str(cand2), options)
    assert [m.name for m in two.checks] == ["build"]
    assert two.checks_not_compared == ()
    # per-task pass shares of 'build': baseline A 1/2, B 1; candidate A 1, B 1/2: mean difference 0
    assert two.checks[0].difference.estimate == pytest.approx(0.0)
