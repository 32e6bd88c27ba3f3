"""The registry of formats: a suffix chooses the reader, a name the writer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.conftest import base_row, write_jsonl
from trialbook.errors import ArgumentError, LedgerError
from trialbook.ledger import FORMATS, read_ledger, write_ledger
from trialbook.ledger.formats import format_named, format_of


def test_each_format_says_its_suffixes_and_what_it_does() -> None:
    table = {f.name: (f.suffixes, f.can_read, f.can_write) for f in FORMATS}
    assert table == {
        "db": ((".db",), True, False),
        "jsonl": ((".jsonl",), True, True),
        "csv": ((".csv",), True, True),
        "parquet": ((".parquet",), False, True),
    }
    assert format_of("x/L.JSONL") is format_named("jsonl")
    assert format_of("ledger.txt") is None


@pytest.mark.parametrize("name", ["l.txt", "l.parquet", "l"])
def test_a_suffix_no_format_reads_is_refused_naming_those_that_are(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_text("")
    with pytest.raises(LedgerError) as err:
        read_ledger(path)
    suffix = path.suffix
    assert f"unsupported ledger type {suffix!r}: use .db, .jsonl or .csv" in str(err.value)


def test_write_ledger_chooses_the_writer_by_name(tmp_path: Path) -> None:
    ledger = read_ledger(write_jsonl(tmp_path / "l.jsonl", [base_row("a", 0, passed=True)]))
    for fmt in ("jsonl", "csv", "parquet"):
        out = io.BytesIO()
        assert write_ledger(ledger, fmt, out) == 1
        assert out.getvalue()
    again = tmp_path / "again.csv"
    out = io.BytesIO()
    write_ledger(ledger, "csv", out)
    again.write_bytes(out.getvalue())
    assert read_ledger(again).distinct("task_id") == ("a",)
    with pytest.raises(ArgumentError) as err:
        write_ledger(ledger, "db", io.BytesIO())  # type: ignore[arg-type]
    assert err.value.argument == "fmt"
    assert "unknown export format 'db'" in str(err.value)
