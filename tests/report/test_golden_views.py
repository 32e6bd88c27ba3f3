"""The terminal (80 and 120 columns, colour off) and markdown views of score, compare and budget,
compared with reviewed golden files in tests/report/golden/.

Regenerate after a deliberate change of the output, then review the diff:

    TRIALBOOK_REGOLD=1 .venv/bin/pytest -q tests/report/test_golden_views.py   # rewrites, fails
    .venv/bin/pytest -q tests/report/test_golden_views.py                      # passes again

(see tests/report/test_golden.py for why a regolding run never passes).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row, matrix_rows, write_jsonl
from tests.report.test_golden import GOLDEN, check_golden
from trialbook.analysis import budget_file, compare_runs, score_file
from trialbook.report import (
    budget_markdown,
    budget_table,
    compare_markdown,
    compare_table,
    render_plain,
    score_markdown,
    score_table,
)

REGOLD = bool(os.environ.get("TRIALBOOK_REGOLD"))
WIDTHS = (80, 120)


def _score_ledger(tmp_path: Path) -> Path:
    """Twelve tasks x 4 attempts in two strata, priced, with errors, a selector and fault cases."""
    outcomes = {f"repair-{i:02d}": [int((i + a) % 3 == 0) for a in range(4)] for i in range(6)}
    outcomes |= {f"greenfield-{i:02d}": [int((i * a) % 4 < 2) for a in range(4)] for i in range(6)}
    rows = matrix_rows(outcomes, run_id="nightly-2026-12-01", system="agent-v2", dataset_id="d1")
    for r in rows:
        r["stratum"] = r["task_id"].split("-")[0]
        r.update(cost=0.015, tokens_in=12000, tokens_out=2500)
        if not r["passed"]:
            r["error"] = (
                "tests failed: test_edge_cases" if r["attempt_index"] % 2 else "SyntaxError"
            )
        r["selected"] = r["attempt_index"] == 3  # the selector always delivers the last one
    failing = [r for r in rows if not r["passed"]]
    failing[0].update(timed_out=True, status="timed_out", elapsed_s=60.0)
    del failing[0]["error"]
    failing[3].update(status="infra_error", error="sandbox did not start")
    for task, stratum, outcome in (
        ("fault-lost-receipt", "fault:lost-receipt", [1, 0, 0, 1]),
        ("fault-exit-before-commit", "fault:exit-before-commit", [0, 0, 0, 0]),
        ("guard-compaction", "regression:compaction", [1, 1, 1, 1]),
    ):
        rows += [
            base_row(
                task,
                a,
                passed=bool(ok),
                k=4,
                run_id="nightly-2026-12-01",
                system="agent-v2",
                dataset_id="d1",
                stratum=stratum,
                cost=0.015,
            )
            for a, ok in enumerate(outcome)
        ]
    return write_jsonl(tmp_path / "nightly.jsonl", rows)


def _compare_ledgers(tmp_path: Path) -> tuple[str, str]:
    """Sixteen tasks, one attempt each: 4 flip fail -> pass, 1 pass -> fail."""
    base = {f"task-{i:02d}": [int(i < 8)] for i in range(16)}
    cand = {f"task-{i:02d}": [int(i < 7 or 8 <= i < 12)] for i in range(16)}
    common: dict[str, Any] = {"dataset_id": "d1", "grader_version": "g1"}
    a = matrix_rows(base, run_id="main-abc123", system="agent-v1", **common)
    b = matrix_rows(cand, run_id="pr-4242", system="agent-v2", **common)
    for r in a + b:
        r["stratum"] = "repair" if int(r["task_id"][-2:]) % 2 else "greenfield"
    path = write_jsonl(tmp_path / "runs.jsonl", a + b)
    return f"{path}:main-abc123", f"{path}:pr-4242"


def _clean(text: str, tmp_path: Path) -> str:
    return text.replace(str(tmp_path), "<tmp>")


def _cases(tmp_path: Path) -> dict[str, Callable[[], str]]:
    score_path = _score_ledger(tmp_path)
    baseline, candidate = _compare_ledgers(tmp_path)
    cases: dict[str, Callable[[], str]] = {
        "score_views.md": lambda: score_markdown(score_file(score_path)),
        "compare_views.md": lambda: compare_markdown(compare_runs(baseline, candidate)),
        "budget_views.md": lambda: budget_markdown(budget_file(score_path)),
    }
    for width in WIDTHS:
        cases[f"score_views_{width}.txt"] = lambda w=width: render_plain(  # type: ignore[misc]
            score_table(score_file(score_path), tasks=True), width=w
        )
        cases[f"compare_views_{width}.txt"] = lambda w=width: render_plain(  # type: ignore[misc]
            compare_table(compare_runs(baseline, candidate)), width=w
        )
        cases[f"budget_views_{width}.txt"] = lambda w=width: render_plain(  # type: ignore[misc]
            budget_table(budget_file(score_path)), width=w
        )
    return {name: (lambda r=render: _clean(r(), tmp_path)) for name, render in cases.items()}


NAMES = [
    "score_views.md",
    "compare_views.md",
    "budget_views.md",
    *(f"{view}_views_{w}.txt" for view in ("score", "compare", "budget") for w in WIDTHS),
]


@pytest.mark.parametrize("name", NAMES)
def test_view_golden(tmp_path: Path, name: str) -> None:
    check_golden(GOLDEN / name, _cases(tmp_path)[name], regold=REGOLD)


def _words(text: str) -> Counter[str]:
    """The words of a render, box-drawing characters aside."""
    return Counter(w for w in re.split(r"[\s│┃─━╇┼╋┡┩]+", text) if w)


@pytest.mark.parametrize("view", ["score", "compare", "budget"])
def test_no_word_is_cut_at_80_columns(tmp_path: Path, view: str) -> None:
    # every word of the 80-column render is a word of a render too wide to wrap: a word broken
    # in two ("0.\n01242", "desi\ngn") or cut short ("lost-re…") would be two new words
    cases = _cases(tmp_path)
    narrow = cases[f"{view}_views_80.txt"]()
    assert max(len(line) for line in narrow.splitlines()) <= 80
    name = f"{view}_views_80.txt"
    wide = {
        "score": lambda: render_plain(
            score_table(score_file(_score_ledger(tmp_path)), tasks=True), width=400
        ),
        "compare": lambda: render_plain(
            compare_table(compare_runs(*_compare_ledgers(tmp_path))), width=400
        ),
        "budget": lambda: render_plain(
            budget_table(budget_file(_score_ledger(tmp_path))), width=400
        ),
    }[view]()
    assert _words(narrow) == _words(_clean(wide, tmp_path)), name
    assert "…" not in narrow
