"""The Ledger's query API: what the rest of trialbook asks instead of reading codes and sentinels."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.conftest import base_row
from trialbook.errors import ArgumentError
from trialbook.ledger import Ledger, TaskGroups, TaskTable, ledger_from_rows, per_task


def _rows() -> list[dict[str, Any]]:
    """Two runs; run 'a' has tasks t1 (2 attempts), t2 (2, one leaked), t3 (1); run 'b' has t2, t4."""

    def row(run: str, task: str, i: int, passed: bool, **extra: Any) -> dict[str, Any]:
        return base_row(task, i, passed=passed, k=3, run_id=run, system="s", **extra)

    return [
        row("a", "t1", 1, False, status="failed", stratum="repair", weight=2.0, cost=0.5),
        row("a", "t1", 0, True, status="passed", stratum="repair", weight=2.0),
        row("a", "t2", 0, False, status="infra_error", stratum="new", oracle_leak=True),
        row("a", "t2", 1, True, stratum="new"),
        row("b", "t2", 0, False, status="timed_out", timed_out=True),
        row("a", "t3", 0, False, status="timed_out", timed_out=True),
        row("b", "t4", 0, True, status="passed", cost=1.25),
    ]


@pytest.fixture
def ledger() -> Ledger:
    return ledger_from_rows(_rows(), "two-runs.jsonl")


def test_run_and_runs_choose_rows_by_run(ledger: Ledger) -> None:
    assert ledger.run_ids == ("a", "b")
    a = ledger.run("a")
    assert len(a) == 5
    assert a.run_ids == ("a",)
    assert list(a.column("task_id")) == ["t1", "t1", "t2", "t2", "t3"]
    both = ledger.runs(["b", "a"])  # run by run, in the order asked
    assert list(both.column("run_id")) == ["b", "b", "a", "a", "a", "a", "a"]
    assert list(both.column("task_id")) == ["t2", "t4", "t1", "t1", "t2", "t2", "t3"]
    assert ledger.runs(["b"]).run_ids == ("b",)


def test_a_run_that_is_absent_is_named_with_the_runs_present(ledger: Ledger) -> None:
    with pytest.raises(ArgumentError) as err:
        ledger.run("x")
    assert err.value.argument == "run"
    assert "run 'x' is not in two-runs.jsonl (runs: 'a', 'b')" in str(err.value)
    with pytest.raises(ArgumentError):
        ledger.runs(["a", "x"])


def test_where_keeps_the_rows_of_a_mask(ledger: Ledger) -> None:
    kept = ledger.where(~ledger.column("oracle_leak"))
    assert len(kept) == 6
    assert ledger.where(np.ones(len(ledger), dtype=bool)) is ledger  # nothing dropped: no copy
    with pytest.raises(ArgumentError) as err:
        ledger.where(np.ones(3, dtype=bool))
    assert err.value.argument == "mask"
    with pytest.raises(ArgumentError):
        ledger.where(np.arange(len(ledger)))  # positions are not a mask


def test_column_gives_arrays_with_nan_and_none_for_not_recorded(ledger: Ledger) -> None:
    attempt = ledger.column("attempt_index")
    assert attempt.dtype == np.int64
    assert attempt.tolist() == [1, 0, 0, 1, 0, 0, 0]
    assert ledger.column("passed").dtype == np.bool_
    cost = ledger.column("cost")
    assert cost.dtype == np.float64
    assert cost[0] == 0.5
    assert cost[6] == 1.25
    assert np.isnan(cost[1:6]).all()
    status = ledger.column("status")
    assert status.dtype == object
    assert status[3] is None
    assert status[0] == "failed"
    assert all(v is None for v in ledger.column("transcript"))
    with pytest.raises(ArgumentError) as err:
        ledger.column("costs")
    assert err.value.argument == "name"


def test_has_status_marks_recorded_statuses_only(ledger: Ledger) -> None:
    assert ledger.has_status("timed_out").tolist() == [0, 0, 0, 0, 1, 1, 0]
    assert ledger.has_status("infra_error").tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert ledger.has_status("passed").tolist() == [0, 1, 0, 0, 0, 0, 1]  # row 3 records none
    plain = ledger_from_rows([base_row("t", 0, passed=True)], "plain")
    assert plain.has_status("passed").tolist() == [False]
    with pytest.raises(ArgumentError) as err:
        ledger.has_status("crashed")
    assert err.value.argument == "status"


def test_distinct_first_and_recorded(ledger: Ledger) -> None:
    assert ledger.distinct("task_id") == ("t1", "t2", "t3", "t4")
    assert ledger.distinct("status") == ("failed", "passed", "infra_error", "timed_out")
    assert ledger.distinct("error") == ()
    b = ledger.run("b")
    assert b.distinct("task_id") == ("t2", "t4")  # a subset knows only its own values
    assert b.distinct("stratum") == ()
    assert ledger.runs(["b", "a"]).distinct("task_id") == ("t2", "t4", "t1", "t3")  # row order
    assert ledger.first("system") == "s"
    assert ledger.first("cost") == 0.5
    assert ledger.first("attempt_index") == 1.0
    assert ledger.first("stratum") == "repair"
    assert b.first("stratum") is None
    assert b.first("weight") is None
    assert ledger.recorded("cost")
    assert ledger.recorded("stratum")
    assert not b.recorded("stratum")
    assert not b.recorded("weight")
    assert not ledger.recorded("transcript")
    assert not ledger.recorded("seed")
    assert ledger.recorded("passed")
    with pytest.raises(ArgumentError):
        ledger.distinct("cost")  # not a text field


def test_tasks_of_a_run_with_quarantined_rows(ledger: Ledger) -> None:
    a = ledger.run("a")
    kept = a.where(~a.column("oracle_leak"))
    tasks = kept.tasks()
    assert isinstance(tasks, TaskTable)
    assert TaskGroups is TaskTable
    assert tasks.task_ids == ("t1", "t2", "t3")
    assert tasks.labels == ["t1", "t2", "t3"]
    assert len(tasks) == 3
    assert tasks.task.tolist() == [0, 0, 1, 2]
    assert tasks.attempts.tolist() == [2, 1, 1]
    assert tasks.passes.tolist() == [1, 1, 0]
    assert tasks.first_row.tolist() == [1, 2, 3]  # t1's attempt 0 is its second row
    assert tasks.first_passed.tolist() == [True, True, False]
    assert tasks.stratum == ("repair", "new", None)
    assert tasks.weight[0] == 2.0
    assert np.isnan(tasks.weight[1:]).all()
    assert tasks.count(kept.has_status("timed_out")).tolist() == [0, 0, 1]
    assert tasks.count(kept.column("passed")).tolist() == [1, 1, 0]
    with pytest.raises(ArgumentError):
        tasks.count(np.ones(2, dtype=bool))
    old = per_task(kept)  # the older spelling gives the same table
    assert old.task_ids == tasks.task_ids
    assert old.first_row.tolist() == tasks.first_row.tolist()


def test_tasks_of_the_other_run_are_numbered_from_zero(ledger: Ledger) -> None:
    tasks = ledger.run("b").tasks()
    assert tasks.task_ids == ("t2", "t4")
    assert tasks.task.tolist() == [0, 1]
    assert tasks.first_passed.tolist() == [False, True]
    assert tasks.count(ledger.run("b").column("timed_out")).tolist() == [1, 0]
