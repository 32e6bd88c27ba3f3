"""Rows of Python values -> Ledger: NaN and infinity are refused, never read as "not recorded"."""

from __future__ import annotations

import math

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger import ledger_from_rows, ledger_rows


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("name", ["cost", "elapsed_s", "score"])
def test_nan_and_infinity_from_python_rows_are_refused(name: str, value: float) -> None:
    rows = [base_row("a", 0, passed=True), base_row("b", 0, passed=False, **{name: value})]
    with pytest.raises(LedgerError) as err:
        ledger_from_rows(rows, "rows")
    (problem,) = err.value.details
    assert problem.line == 2
    assert f"field {name!r}: must be a finite number" in problem.message


def test_none_is_not_recorded_and_round_trips() -> None:
    ledger = ledger_from_rows([base_row("a", 0, passed=True, cost=None, seed=7)], "rows")
    (row,) = ledger_rows(ledger)
    assert row["cost"] is None
    assert row["seed"] == 7
    assert isinstance(row["seed"], int)
