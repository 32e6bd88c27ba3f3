"""The README promises every problem of a ledger in one pass (issue 15): a row-level type error does
not hide a table rule broken on another row, and an import of several files counts them all."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.conftest import base_row, write_jsonl
from trialbook.cli import main


def test_a_type_error_and_a_contradiction_on_other_rows_are_both_named(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "l.jsonl",
        [base_row("t1", 0, passed="yes"), base_row("t2", 0, passed=True, timed_out=True)],
    )
    result = CliRunner().invoke(main, ["score", str(path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert "l.jsonl:1: task 't1': field 'passed': expected true or false" in result.output
    assert "l.jsonl:2: task 't2': contradiction: 'timed_out' and 'passed' are both true" in (
        result.output
    )


def test_an_import_of_several_files_counts_the_problems_of_every_file(tmp_path: Path) -> None:
    # 3 files of 35 rows each, every row already in the ledger: one line per file naming the run
    # (each file's rows all stored before), not 105 lines of rows
    files = []
    for name in ("a", "b", "c"):
        rows = [base_row(f"{name}{i}", 0, passed=True, run_id="r", k=1) for i in range(35)]
        files.append(str(write_jsonl(tmp_path / f"{name}.jsonl", rows)))
    db = str(tmp_path / "l.db")
    runner = CliRunner()
    first = runner.invoke(main, ["import", "jsonl", *files, "--ledger", db])
    assert first.exit_code == 0, first.output
    again = runner.invoke(main, ["import", "jsonl", *files, "--ledger", db])
    assert again.exit_code == 2
    assert again.output.count("is already in the ledger") == 3
    for name in ("a", "b", "c"):
        assert (
            f"{name}.jsonl: run 'r' is already in the ledger: all 35 of its attempts here were "
            "stored before" in again.output
        )
    # a file some of whose rows are new names each stored row
    mixed = [base_row(f"a{i}", 0, passed=True, run_id="r", k=1) for i in range(2)]
    mixed.append(base_row("new", 0, passed=True, run_id="r", k=1))
    part = runner.invoke(
        main, ["import", "jsonl", str(write_jsonl(tmp_path / "m.jsonl", mixed)), "--ledger", db]
    )
    assert part.exit_code == 2
    assert part.output.count("of run 'r' is already in the ledger") == 2


def test_several_files_with_bad_rows_are_all_read_before_the_import_is_refused(
    tmp_path: Path,
) -> None:
    files = [
        str(write_jsonl(tmp_path / f"{n}.jsonl", [base_row("t", 0, passed=True, elapsed_s=-1.0)]))
        for n in ("a", "b")
    ]
    result = CliRunner().invoke(
        main, ["import", "jsonl", *files, "--ledger", str(tmp_path / "l.db")]
    )
    assert result.exit_code == 2
    assert "a.jsonl:1: task 't': field 'elapsed_s': must be >= 0" in result.output
    assert "b.jsonl:1: task 't': field 'elapsed_s': must be >= 0" in result.output
    assert not (tmp_path / "l.db").exists()
