"""Hostile ledger files (issue 12, items 10, 11, 16): huge and deep values, a full disk, a fifo, a
BOM, time running backwards. Each is a one-line error and exit 2 (never a traceback, a hang or a
crash), or is read exactly; nothing is rounded on the way through any format."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import ROOT, base_row, write_jsonl
from trialbook.cli import main
from trialbook.errors import LedgerError
from trialbook.ledger import LedgerStore, ledger_rows, read_ledger, write_ledger_file

pytestmark = pytest.mark.timeout(120)

EXACT = 2**53


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _one_line_exit_2(out: Result) -> str:
    assert out.exit_code == 2, out.output
    assert isinstance(out.exception, SystemExit), out.exception
    assert "Traceback" not in out.output
    return out.output


@pytest.mark.parametrize("value", [2**63 - 1, EXACT + 1])
def test_an_optional_integer_beyond_2_53_is_refused_by_every_command(
    tmp_path: Path, value: int
) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [base_row("t", 0, passed=True, tokens_in=value)])
    good = write_jsonl(tmp_path / "good.jsonl", [base_row("t", 0, passed=True)])
    for args in (
        ("score", str(bad)),
        ("compare", str(bad), str(good)),
        ("export", str(bad), "--format", "csv"),
        ("import", "jsonl", str(bad), "--ledger", str(tmp_path / "x.db")),
    ):
        text = _one_line_exit_2(_cli(*args))
        assert "field 'tokens_in'" in text
        assert "beyond 2**53" in text
    assert not (tmp_path / "x.db").exists() or not list(ledger_rows(read_ledger(tmp_path / "x.db")))


def test_the_csv_reader_refuses_it_too(tmp_path: Path) -> None:
    row = base_row("t", 0, passed=True, seed=-(EXACT + 1))
    path = tmp_path / "l.csv"
    path.write_text(",".join(row) + "\n" + ",".join(str(v).lower() for v in row.values()) + "\n")
    with pytest.raises(LedgerError, match=r"field 'seed'.*beyond 2\*\*53"):
        read_ledger(path)


def test_integers_up_to_2_53_round_trip_exactly_through_every_format(tmp_path: Path) -> None:
    rows = [
        base_row("t", 0, passed=True, tokens_in=EXACT, tokens_out=EXACT - 1, seed=-EXACT),
        base_row("t", 1, passed=False, tokens_in=1, tool_calls=EXACT, seed=EXACT),
    ]
    start = write_jsonl(tmp_path / "a.jsonl", [dict(r, k_budget=2) for r in rows])
    db = tmp_path / "a.db"
    assert _cli("import", "jsonl", str(start), "--ledger", str(db)).exit_code == 0
    want = [
        {k: r[k] for k in ("tokens_in", "tokens_out", "tool_calls", "seed")}
        for r in ledger_rows(read_ledger(start))
    ]
    assert want[0]["tokens_out"] == EXACT - 1
    ledger = read_ledger(db)
    for fmt in ("jsonl", "csv", "parquet"):
        path = tmp_path / f"b.{fmt}"
        write_ledger_file(ledger, fmt, path)  # type: ignore[arg-type]
        back = read_ledger(path) if fmt != "parquet" else None
        got = ledger_rows(back) if back is not None else _parquet_rows(path)
        assert [
            {k: r[k] for k in ("tokens_in", "tokens_out", "tool_calls", "seed")} for r in got
        ] == want, fmt


def _parquet_rows(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def _store_with(tmp_path: Path, row: dict[str, Any]) -> Path:
    db = tmp_path / "l.db"
    source = write_jsonl(tmp_path / "first.jsonl", [row])
    assert _cli("import", "jsonl", str(source), "--ledger", str(db)).exit_code == 0
    return db


def test_a_store_holding_an_inexact_integer_is_refused_not_rounded(tmp_path: Path) -> None:
    db = _store_with(tmp_path, base_row("t", 0, passed=True, tokens_in=5, run_id="r"))
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER attempts_no_update")  # another tool wrote it
    conn.execute("UPDATE attempts SET tokens_in = ?", (EXACT + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match=r"beyond 2\*\*53"):
        read_ledger(db)


def test_a_row_nested_100000_deep_is_one_line_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(
        json.dumps(base_row("t", 0, passed=True))[:-1]
        + ', "error": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n"
    )
    # in a child: arrow's parser dies of SIGSEGV on it, which would take pytest with it
    done = subprocess.run(
        [sys.executable, "-m", "trialbook", "score", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr[-500:]
    assert done.stderr.count("\n") == 1
    assert "not valid JSON" in done.stderr


def test_finished_before_started_is_a_contradiction(tmp_path: Path) -> None:
    at = "2026-01-01T00:00:{:02d}+00:00"
    rows = [
        base_row("t", 0, passed=True, started_at=at.format(10), finished_at=at.format(0)),
        base_row("t", 1, passed=True, started_at=at.format(0), finished_at=at.format(0)),
        base_row("t", 2, passed=True, started_at=at.format(0)),
    ]
    path = write_jsonl(tmp_path / "l.jsonl", rows)
    with pytest.raises(LedgerError) as caught:
        read_ledger(path)
    assert list(caught.value.problems) == [
        f"{path}:1: task 't': contradiction: 'finished_at' ({at.format(0)}) is before "
        f"'started_at' ({at.format(10)})"
    ]


def test_a_bom_is_accepted_in_jsonl_and_csv_alike(tmp_path: Path) -> None:
    row = base_row("t", 0, passed=True, k=1)
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + json.dumps(row).encode() + b"\n")
    csv = tmp_path / "a.csv"
    header = ",".join(row)
    values = ",".join(str(v).lower() for v in row.values())
    csv.write_bytes(b"\xef\xbb\xbf" + f"{header}\n{values}\n".encode())
    assert list(ledger_rows(read_ledger(jsonl))) == list(ledger_rows(read_ledger(csv)))


@pytest.mark.parametrize("name", ["l.jsonl", "l.csv", "l.db"])
def test_a_fifo_or_a_folder_given_as_a_ledger_is_named_never_waited_on(
    tmp_path: Path, name: str
) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)  # nobody writes it: opening it to read would block forever
    assert "is a fifo, not a regular file" in _one_line_exit_2(_cli("score", str(fifo)))
    with pytest.raises(LedgerError, match="is a fifo"):
        LedgerStore(fifo)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    with pytest.raises(LedgerError, match="is a folder"):
        LedgerStore(folder)


def test_a_full_disk_is_one_error_and_the_ledger_keeps_what_was_written(tmp_path: Path) -> None:
    db = _store_with(tmp_path, base_row("t", 0, passed=True, k=1000, run_id="r"))
    with LedgerStore(db) as store:
        # SQLite's own page cap gives the error a full disk gives: SQLITE_FULL
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages}")
        rows = (
            base_row("t", i, passed=True, k=1000, run_id="r", error="x" * 2000)
            for i in range(1, 1000)
        )
        with pytest.raises(LedgerError, match="the ledger could not be written: database or disk"):
            store.append(list(rows))
        written = len(store.read())
    assert written >= 1
    assert len(read_ledger(db)) == written
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
