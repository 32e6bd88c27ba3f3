"""A run may declare that its grader judged the workspace after a timeout (Terminal-Bench grades
that way): only then is `timed_out` with `passed` allowed, and the scorecard counts it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import base_row, write_jsonl
from trialbook.analysis import score_file
from trialbook.errors import LedgerError
from trialbook.ledger import import_files, read_ledger


def _rows(declared: bool | None) -> list[dict[str, object]]:
    rows = [
        base_row("a", 0, passed=True, k=2, timed_out=True, status="passed"),
        base_row("a", 1, passed=False, k=2, timed_out=True, status="timed_out"),
        base_row("b", 0, passed=True, k=2, status="passed"),
        base_row("b", 1, passed=False, k=2, status="failed"),
    ]
    if declared is not None:
        for r in rows:
            r["graded_after_timeout"] = declared
    return rows


@pytest.mark.parametrize("declared", [None, False])
def test_a_pass_after_timeout_is_refused_unless_the_run_declares_it(
    tmp_path: Path, declared: bool | None
) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", _rows(declared))
    with pytest.raises(LedgerError, match="'timed_out' and 'passed' are both true"):
        read_ledger(path)


def test_a_declared_run_scores_its_passes_after_timeout(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", _rows(True))
    (run,) = score_file(path).runs
    assert run.passes_after_timeout == 1
    assert run.metrics["pass@1"].estimate == pytest.approx(0.5)  # a: 1 of 2, b: 1 of 2
    assert any("1 pass(es) after timeout" in n for n in run.notes)
    # and through the SQLite store, which gained the column by a migration
    db = tmp_path / "r.db"
    import_files(db, [read_ledger(path)])
    (stored,) = score_file(db).runs
    assert stored.passes_after_timeout == 1


def test_the_declaration_is_constant_within_a_run(tmp_path: Path) -> None:
    rows = _rows(True)
    rows[3]["graded_after_timeout"] = False
    with pytest.raises(LedgerError, match=r"graded_after_timeout.*must not vary within a run"):
        read_ledger(write_jsonl(tmp_path / "m.jsonl", rows))
