"""Edges of scoring that a mutation sample found untested (the policy in analysis/_score.py)."""

from __future__ import annotations

from tests.conftest import base_row
from trialbook.analysis import ScoreOptions, score_ledger
from trialbook.ledger import ledger_from_rows


def test_a_quarantined_infra_error_is_not_counted_as_an_infra_error() -> None:
    # a task with a leaked attempt (oracle_leak) is quarantined whole: listed, never scored, and an
    # infra error in it is not one of the run's scored infrastructure errors
    rows = [
        base_row("a", 0, passed=True, k=2, status="passed"),
        base_row("a", 1, passed=False, k=2, status="infra_error"),
        base_row("b", 0, passed=False, k=2, status="infra_error", oracle_leak=True),
        base_row("b", 1, passed=True, k=2, status="passed"),
    ]
    [run] = score_ledger(ledger_from_rows(rows, "q.jsonl", default_run="r")).runs
    assert run.quarantined == (("b", 0),)
    assert run.infra_errors == 1
    assert run.attempts == 2  # task a only: b is quarantined whole
    assert run.tasks == 1


def test_the_pooled_attempt_rate_is_passes_over_attempts() -> None:
    # pooled rate = sum(c) / sum(n) over all attempts, not the mean of per-task rates:
    # task a 1 of 1, task b 0 of 3 -> 1/4 (the task mean would be (1 + 0) / 2)
    rows = [base_row("a", 0, passed=True, k=3)] + [
        base_row("b", i, passed=False, k=3) for i in range(3)
    ]
    [run] = score_ledger(ledger_from_rows(rows, "p.jsonl", default_run="r")).runs
    assert run.pooled_attempt_rate.estimate == 1 / 4
    assert run.metrics["pass@1"].estimate == (1 + 0) / 2


def test_confidence_one_is_refused_when_the_options_are_made() -> None:
    # a two-sided level must lie strictly between 0 and 1: 100% has no finite interval
    import pytest

    from trialbook.analysis import ScoreOptions
    from trialbook.errors import ArgumentError

    for bad in (1, 1.0, 0.0):
        with pytest.raises(ArgumentError, match="strictly between 0 and 1") as info:
            ScoreOptions(confidence=bad)
        assert info.value.argument == "confidence"
    assert ScoreOptions(confidence=0.999).confidence == 0.999


def test_dropping_infra_errors_names_the_tasks_left_with_no_attempt() -> None:
    rows = [base_row("x", i, passed=False, k=2, status="infra_error") for i in range(2)]
    rows += [base_row("y", 0, passed=True, k=2), base_row("y", 1, passed=False, k=2)]
    ledger = ledger_from_rows(rows, "d.jsonl", default_run="r")
    [run] = score_ledger(ledger, options=ScoreOptions(drop_infra_errors=True)).runs
    assert run.tasks == 1
    assert any("2 of 4 attempts (50.0%)" in n for n in run.notes)
    assert any("had only infrastructure errors" in n and "'x'" in n for n in run.notes)


def test_dropped_infra_errors_keep_their_rate_in_the_effort_table_as_in_the_note() -> None:
    # issue 26 item 6: the effort table printed "0.0% (dropped)" beside the note's "12 of 40
    # attempts (30.0%)". Ten tasks x 4 attempts, the last of each an infra error: both figures
    # are the share of the run's attempts, 10 / 40, whether the errors are dropped or not
    def status(j: int) -> str:
        return "infra_error" if j == 3 else ("passed" if j == 0 else "failed")

    rows = [
        base_row(f"t{i}", j, passed=j == 0, k=4, status=status(j))
        for i in range(10)
        for j in range(4)
    ]
    ledger = ledger_from_rows(rows, "i.jsonl", default_run="r")
    [run] = score_ledger(ledger, options=ScoreOptions(drop_infra_errors=True)).runs
    assert any("10 of 40 attempts (25.0%)" in n for n in run.notes)
    assert run.effort.infra_error_rate == 10 / 40
    [kept] = score_ledger(ledger).runs
    assert kept.effort.infra_error_rate == 10 / 40
