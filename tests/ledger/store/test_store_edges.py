"""Edges of the SQLite store that a mutation sample found untested (docs/ledger.md, "Rules")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import base_row
from trialbook.errors import LedgerError
from trialbook.ledger.store import LedgerStore, RunRecord


@pytest.mark.parametrize("other_k", [2, 4])
def test_a_budget_that_differs_from_the_runs_is_refused_either_way(
    tmp_path: Path, other_k: int
) -> None:
    # k_budget must not vary within a run: a smaller budget is as wrong as a larger one
    with LedgerStore(tmp_path / "l.db") as store:
        store.create_run(RunRecord(run_id="r", k_budget=3))
        store.append([base_row("a", 0, passed=True, k=3, run_id="r")])
        with pytest.raises(LedgerError) as info:
            store.append([base_row("b", 0, passed=True, k=other_k, run_id="r")])
        assert [p.message for p in info.value.details] == [
            f"task 'b': field 'k_budget': {other_k} differs from run 'r''s k_budget 3"
        ]
        assert len(store.read()) == 1


def test_scores_at_both_ends_of_0_to_1_are_stored(tmp_path: Path) -> None:
    # partial credit lies in 0..1, both ends included (the field's rule and the table's CHECK agree)
    rows = [
        base_row("a", 0, passed=False, k=1, run_id="r", score=0.0),
        base_row("b", 0, passed=True, k=1, run_id="r", score=1.0),
    ]
    with LedgerStore(tmp_path / "l.db") as store:
        store.create_run(RunRecord(run_id="r", k_budget=1))
        assert store.append(rows) == 2
        assert store.read().column("score").tolist() == [0.0, 1.0]
