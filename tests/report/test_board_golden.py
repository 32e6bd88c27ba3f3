"""The board rendered at 80 columns without colour, and as markdown, against reviewed golden files
(TRIALBOOK_REGOLD=1 rewrites them, then fails: see tests/report/test_golden.py)."""

from __future__ import annotations

from pathlib import Path

from tests.analysis.test_board import RATES, _ledger, _rows
from tests.report.test_golden import GOLDEN, REGOLD, check_golden
from trialbook.analysis import Board, BoardOptions, board_runs
from trialbook.report import board_markdown, board_table, render_plain


def _board(tmp_path: Path) -> Board:
    # four systems on 60 tasks x 3 attempts; delta's cost unknown (off the cost axis)
    rows = _rows(RATES, tasks=60, cost={"alpha": 1.0, "beta": 0.5, "gamma": 0.6, "delta": 0.1})
    for r in rows:
        if r["run_id"] == "delta":
            del r["cost"]
    return board_runs([_ledger(tmp_path, rows)], BoardOptions(resamples=2000, seed=3))


def test_board_table_golden(tmp_path: Path) -> None:
    board = _board(tmp_path)
    check_golden(
        GOLDEN / "board_table.txt",
        lambda: render_plain(board_table(board), width=80),
        regold=REGOLD,
    )


def test_board_markdown_golden(tmp_path: Path) -> None:
    board = _board(tmp_path)
    check_golden(GOLDEN / "board.md", lambda: board_markdown(board), regold=REGOLD)
