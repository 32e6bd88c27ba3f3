"""Rendered reports compared with reviewed golden files (set TRIALBOOK_REGOLD=1 to rewrite them)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import matrix_rows, write_jsonl
from trialbook import score_file
from trialbook.report import render_plain, score_markdown, score_table

GOLDEN = Path(__file__).parent / "golden"


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("TRIALBOOK_REGOLD"):
        path.write_text(text)
    assert text == path.read_text()


def _ledger(tmp_path: Path) -> Path:
    # seed 002's four teaching tasks, with strata, costs and one timeout
    outcomes = {"A": [1] * 5, "B": [1, 1, 1, 1, 0], "C": [1, 1, 0, 0, 0], "D": [0] * 5}
    rows = matrix_rows(outcomes, run_id="teaching", system="toy")
    for r in rows:
        r["stratum"] = "repair" if r["task_id"] in "AB" else "greenfield"
        r["cost"] = 0.02
    rows[-1].update(timed_out=True, status="timed_out", elapsed_s=60.0)
    path = tmp_path / "teaching.jsonl"
    write_jsonl(path, rows)
    return path


def test_markdown_golden(tmp_path: Path) -> None:
    report = score_file(_ledger(tmp_path))
    _check("score_teaching.md", score_markdown(report).replace(str(tmp_path), "<tmp>"))


def test_table_golden(tmp_path: Path) -> None:
    report = score_file(_ledger(tmp_path))
    _check("score_teaching.txt", render_plain(score_table(report), width=100))
