"""The rules test a column of one value seen per row (stride 0: not recorded, or kept once by the
store's format 2) once, and must say exactly what they say of the same values held row by row."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from tests.conftest import base_row
from trialbook.ledger import ledger_from_rows
from trialbook.ledger._rules import check_rules, retry_of
from trialbook.ledger._table import Ledger


def _ledger(tasks: int = 3) -> Ledger:
    rows = [
        base_row(f"t{t}", a, passed=a == 0, k=3, run_id="r", system="s", cost=0.5)
        for t in range(tasks)
        for a in range(3)
    ]
    return ledger_from_rows(rows, "once.jsonl")


def _as(ledger: Ledger, name: str, value: Any, *, once: bool) -> Ledger:
    n = len(ledger)
    kind = "codes" if name in ledger.codes else "values"
    column = getattr(ledger, kind)[name]
    one = np.array(value, dtype=column.dtype)
    held = np.broadcast_to(one, (n,)) if once else np.full(n, one)
    return replace(ledger, **{kind: {**getattr(ledger, kind), name: held}})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("timeout_s", -1.0),  # a bound, float
        ("timeout_s", np.inf),  # not finite
        ("helper_calls", -2),  # a bound, int
        ("k_budget", 2),  # attempt 2 of 3 is not below a budget of 2
        ("elapsed_s", np.nan),  # a required number not recorded
        ("retry", 1.0),  # every row a re-run that follows no infra_error
        ("lost", 1.0),  # lost only on an infra_error row
        ("passed", True),  # ...with timed_out below
        ("run_id", 0),  # one run
        ("cost", 0.5),  # in range: nothing to say
    ],
)
def test_a_column_of_one_value_is_judged_as_the_same_values_row_by_row(
    name: str, value: Any
) -> None:
    ledger = _ledger()
    if name == "passed":
        ledger = _as(ledger, "timed_out", True, once=False)
    once, rows = _as(ledger, name, value, once=True), _as(ledger, name, value, once=False)
    assert once.values.get(name, once.codes.get(name)).strides == (0,)
    said = [(p.line, p.message) for p in check_rules(once)]
    assert said == [(p.line, p.message) for p in check_rules(rows)]
    assert bool(said) == (name not in ("cost", "run_id")), said


def test_retry_of_one_value_per_row_is_that_value_and_read_only() -> None:
    ledger = _ledger()
    for value, expected in ((np.nan, 0), (2.0, 2)):
        retry = retry_of(_as(ledger, "retry", value, once=True))
        assert retry.dtype == np.int64
        assert retry.tolist() == [expected] * len(ledger)
        assert retry.tolist() == retry_of(_as(ledger, "retry", value, once=False)).tolist()


def test_one_retry_on_every_infra_error_row_still_follows_nothing() -> None:
    # every row a re-run (retry 1) and an infra error: no row is another's retry 0, so every
    # row is refused, whatever keys the rule builds for rows alike in one column (with 12 tasks,
    # keys built without the retry would meet some predecessor's key built with it)
    ledger = _as(_as(_ledger(12), "status", 0, once=False), "passed", False, once=False)
    ledger = _as(ledger, "run_id", 0, once=True)  # as the store's format 2 keeps one run's id
    ledger = replace(ledger, labels={**ledger.labels, "status": ("infra_error",)})
    once, rows = _as(ledger, "retry", 1.0, once=True), _as(ledger, "retry", 1.0, once=False)
    said = [(p.line, p.message) for p in check_rules(once)]
    assert said == [(p.line, p.message) for p in check_rules(rows)]
    assert sum("follows no infra_error row" in m for _, m in said) == len(ledger)


def test_a_repeated_attempt_in_one_run_is_found_when_the_run_is_one_value_per_row() -> None:
    ledger = _ledger()
    attempt = ledger.values["attempt_index"].copy()
    attempt[1] = attempt[0]  # the second row repeats the first's attempt
    ledger = replace(ledger, values={**ledger.values, "attempt_index": attempt})
    once, rows = _as(ledger, "run_id", 0, once=True), _as(ledger, "run_id", 0, once=False)
    said = [(p.line, p.message) for p in check_rules(once)]
    assert said == [(p.line, p.message) for p in check_rules(rows)]
    assert any("duplicates line" in m for _, m in said), said
