"""Rendered reports compared with reviewed golden files.

Set TRIALBOOK_REGOLD=1 to rewrite them: each file is then written from a first render and the test
fails with "regenerated, re-run without TRIALBOOK_REGOLD", so a regolding run never passes as a check
(a comparison of the file with the text just written into it could not fail).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import matrix_rows, write_jsonl
from trialbook import score_file
from trialbook.report import render_plain, score_markdown, score_table

GOLDEN = Path(__file__).parent / "golden"


def check_golden(path: Path, render: Callable[[], str], *, regold: bool) -> None:
    """Compare ``render()`` with the golden file at ``path``; with ``regold``, rewrite the file from
    one render, compare it with a second (rendering must be deterministic), then fail."""
    text = render()
    if regold:
        path.write_text(text)
        again = render()
        assert again == path.read_text(), f"{path.name}: two renders differ"
        pytest.fail(f"{path.name} regenerated, re-run without TRIALBOOK_REGOLD")
    assert text == path.read_text()


def _ledger(tmp_path: Path) -> Path:
    # four teaching tasks (successes 5, 4, 2, 0 of 5), with strata, costs and one timeout
    outcomes = {"A": [1] * 5, "B": [1, 1, 1, 1, 0], "C": [1, 1, 0, 0, 0], "D": [0] * 5}
    rows = matrix_rows(outcomes, run_id="teaching", system="toy")
    for r in rows:
        r["stratum"] = "repair" if r["task_id"] in "AB" else "greenfield"
        r["cost"] = 0.02
    rows[-1].update(timed_out=True, status="timed_out", elapsed_s=60.0)
    path = tmp_path / "teaching.jsonl"
    write_jsonl(path, rows)
    return path


REGOLD = bool(os.environ.get("TRIALBOOK_REGOLD"))


def test_markdown_golden(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    check_golden(
        GOLDEN / "score_teaching.md",
        lambda: score_markdown(score_file(ledger)).replace(str(tmp_path), "<tmp>"),
        regold=REGOLD,
    )


def test_table_golden(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    check_golden(
        GOLDEN / "score_teaching.txt",
        lambda: render_plain(score_table(score_file(ledger)), width=100),
        regold=REGOLD,
    )


def test_regolding_writes_the_file_and_never_passes(tmp_path: Path) -> None:
    golden = tmp_path / "g.txt"
    golden.write_text("stale\n")
    with pytest.raises(pytest.fail.Exception, match="regenerated, re-run without TRIALBOOK_REGOLD"):
        check_golden(golden, lambda: "fresh\n", regold=True)
    assert golden.read_text() == "fresh\n"
    check_golden(golden, lambda: "fresh\n", regold=False)  # the next plain run passes


def test_a_render_that_changes_between_calls_is_caught_when_regolding(tmp_path: Path) -> None:
    renders = iter(["one\n", "two\n"])
    with pytest.raises(AssertionError, match="two renders differ"):
        check_golden(tmp_path / "g.txt", lambda: next(renders), regold=True)


def test_a_difference_fails_without_regold(tmp_path: Path) -> None:
    golden = tmp_path / "g.txt"
    golden.write_text("reviewed\n")
    with pytest.raises(AssertionError):
        check_golden(golden, lambda: "changed\n", regold=False)
    assert golden.read_text() == "reviewed\n"


def test_a_difference_that_rounds_to_zero_is_never_negative_zero() -> None:
    # the demo's stratum table printed "-0.0 pp to +60.0 pp" for an exact lower bound of 0
    # computed as a hair below it
    from trialbook.report._compare import _pp

    assert _pp(-1e-17) == "+0.0 pp"
    assert _pp(-0.0004) == "+0.0 pp"  # -0.04 pp rounds to zero
    assert _pp(-0.0006) == "-0.1 pp"
    assert _pp(0.171) == "+17.1 pp"
