"""Budget replay on the methodology's own table (seed 000, docs/methodology.md "Budget replay").

Four tasks, five attempts each, 2 cost units per attempt; 1 = pass, in attempt_index order:
A 11000, B 01010, C 00000, D 00001. The seed's figures: budget 1 covers 1 of 4 tasks (A) for
4 x 2 = 8; budget 5 covers 3 of 4 (A, B, D) for 20 x 2 = 40, and stopping at the first pass
spends 1 + 2 + 5 + 5 = 13 attempts, 26.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import matrix_rows, write_jsonl
from trialbook.analysis import ScoreOptions, budget_file, budget_replay
from trialbook.ledger import read_ledger
from trialbook.stats import budget_curve

SEED_000 = {"A": [1, 1, 0, 0, 0], "B": [0, 1, 0, 1, 0], "C": [0] * 5, "D": [0, 0, 0, 0, 1]}


def _rows(**extra: Any) -> list[dict[str, Any]]:
    return matrix_rows(SEED_000, run_id="seed000", system="toy", cost=2.0, **extra)


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "seed000.jsonl"
    write_jsonl(path, rows)
    return path


def test_the_seed_table(tmp_path: Path) -> None:
    report = budget_file(_write(tmp_path, _rows()))
    (run,) = report.runs
    assert (run.run_id, run.tasks, run.k) == ("seed000", 4, 5)
    rows = {r.budget: r for r in run.rows}
    assert (rows[1].coverage, rows[1].cost, rows[1].cost_stop_at_first_success) == (0.25, 8, 8)
    assert (rows[5].coverage, rows[5].cost, rows[5].cost_stop_at_first_success) == (0.75, 40, 26)
    assert rows[5].attempts_stop_at_first_success == 13
    # budget 2 covers A and B; stopping, A spends 1, B 2, C 2, D 2 = 7 attempts, 14
    assert (rows[2].coverage, rows[2].cost, rows[2].cost_stop_at_first_success) == (0.5, 16, 14)
    # coverage never falls and stopping never costs more than the fixed budget
    cov = [r.coverage for r in run.rows]
    assert cov == sorted(cov)
    assert all(r.cost_stop_at_first_success <= r.cost for r in run.rows)  # type: ignore[operator]


def test_replay_follows_attempt_index_not_row_order(tmp_path: Path) -> None:
    rows = list(reversed(_rows()))
    (run,) = budget_file(_write(tmp_path, rows)).runs
    assert run.rows[0].coverage == 0.25  # A's attempt 0 passes, wherever its row sits
    assert run.rows[4].cost_stop_at_first_success == 26


def test_unknown_cost_stays_unknown(tmp_path: Path) -> None:
    rows = _rows()
    # D's last attempt has no recorded cost: only budget 5 spends it (fixed and stopping alike)
    last = next(r for r in rows if r["task_id"] == "D" and r["attempt_index"] == 4)
    del last["cost"]
    (run,) = budget_file(_write(tmp_path, rows)).runs
    assert run.rows[3].cost == 32
    assert run.rows[3].cost_stop_at_first_success is not None
    assert run.rows[4].cost is None
    assert run.rows[4].cost_stop_at_first_success is None
    assert any("unknown is not zero" in n for n in run.notes)


def test_no_cost_at_all_is_none_never_zero(tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if k != "cost"} for r in _rows()]
    (run,) = budget_file(_write(tmp_path, rows)).runs
    assert all(r.cost is None and r.cost_stop_at_first_success is None for r in run.rows)
    assert run.rows[4].coverage == 0.75


def test_quarantine_and_infra_errors_as_in_score(tmp_path: Path) -> None:
    rows = _rows()
    for r in rows:
        if r["task_id"] == "C" and r["attempt_index"] == 2:
            r["oracle_leak"] = True  # C is quarantined whole, as score does
        if r["task_id"] == "D" and r["attempt_index"] == 0:
            r["status"] = "infra_error"
    path = _write(tmp_path, rows)
    (run,) = budget_replay(read_ledger(path)).runs
    # C is out: 3 tasks; D's infra error counts as a failure, so its pass is its 5th attempt
    assert run.tasks == 3
    assert run.k == 5
    assert run.rows[3].coverage == pytest.approx(2 / 3)
    assert run.rows[4].coverage == 1.0
    assert run.rows[4].cost == 30  # 15 attempts x 2
    assert any("quarantined" in n for n in run.notes)
    # dropping infra errors leaves D four attempts: budgets stop at 4, where D's pass now falls
    (dropped,) = budget_file(path, options=ScoreOptions(drop_infra_errors=True)).runs
    assert dropped.k == 4
    assert dropped.rows[3].coverage == 1.0
    assert any("budgets stop at 4" in n for n in dropped.notes)


def test_fault_cases_are_not_replayed(tmp_path: Path) -> None:
    rows = _rows() + matrix_rows(
        {"F": [1, 1, 1, 1, 1]}, run_id="seed000", system="toy", cost=2.0, stratum="fault:crash"
    )
    (run,) = budget_file(_write(tmp_path, rows)).runs
    assert run.tasks == 4
    assert run.rows[0].cost == 8


def test_budget_curve_validates() -> None:
    with pytest.raises(ValueError, match="k=3 exceeds"):
        budget_curve(task=[0, 0], attempt_index=[0, 1], passed=[1, 0], cost=[1, 1], k=3)
    with pytest.raises(ValueError, match="without gaps"):
        budget_curve(task=[0, 2], attempt_index=[0, 0], passed=[1, 0], cost=[1, 1], k=1)


def test_json_shape(tmp_path: Path) -> None:
    from trialbook.report import budget_to_dict

    data = budget_to_dict(budget_file(_write(tmp_path, _rows())))
    assert data["schema"] == "trialbook.budget/1"
    (run,) = data["runs"]
    assert run["run_id"] == "seed000"
    assert run["rows"][0] == {
        "budget": 1,
        "coverage": 0.25,
        "cost": 8.0,
        "cost_stop_at_first_success": 8.0,
        "covered": 1,
        "attempts": 4,
        "attempts_stop_at_first_success": 4,
    }
    json.dumps(data, allow_nan=False)
