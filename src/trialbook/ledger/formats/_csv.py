"""CSV ledgers: pyarrow's reader for the files it reads exactly as the csv module does, the precise
reader (the csv module, row by row, every problem with its line) for the rest, and the writer."""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from trialbook.errors import Problem
from trialbook.ledger._fields import FIELD_BY_NAME, FIELDS
from trialbook.ledger._rows import Row, from_rows, ledger_rows
from trialbook.ledger._table import Ledger
from trialbook.ledger.formats._arrow import arrow_type, ledger_from_arrow, line_numbers
from trialbook.ledger.formats._format import Format

__all__ = ["CSV", "read_csv", "write_csv"]


def read_csv(path: Path, default_run: str) -> Ledger:
    """Read and validate a CSV ledger; raises :class:`LedgerError` naming every problem."""
    data, source = path.read_bytes(), str(path)
    # a byte order mark, as spreadsheets write it, is accepted as it is in JSONL
    data = data.removeprefix(codecs.BOM_UTF8)
    fast = _read_csv_fast(data, source, default_run)
    if fast is not None and not fast.recorded("not_recorded"):  # see read_jsonl
        return fast
    return from_rows(source, _rows_csv(data, source), from_csv=True, default_run=default_run)


def write_csv(ledger: Ledger, out: BinaryIO) -> int:
    """A header of every field, then one line per row; "not recorded" is an empty cell."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow([f.name for f in FIELDS])
    n = 0
    for row in ledger_rows(ledger):
        writer.writerow([_cell(row[f.name]) for f in FIELDS])
        n += 1
    text.detach()
    return n


CSV = Format("csv", (".csv",), read=read_csv, write=write_csv)
"""Comma-separated values with a header line (read and written)."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _read_csv_fast(data: bytes, source: str, default_run: str | None) -> Ledger | None:
    """pyarrow's CSV reader, for files it reads exactly as the precise path does (else None).

    What the two could read differently is declined up front or checked after: a byte order mark,
    a lone carriage return (the csv module starts a line there), a header the csv module splits
    otherwise, and text cells of only whitespace (not recorded for the precise path).
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if not data or data.startswith(b"\xef\xbb\xbf") or data.count(b"\r") != data.count(b"\r\n"):
        return None
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)].rstrip(b"\r")
    try:
        header = next(csv.reader([first.decode("utf-8")]), [])
    except (UnicodeDecodeError, csv.Error):
        return None
    if len(set(header)) != len(header) or any(name not in FIELD_BY_NAME for name in header):
        return None  # a repeated or unknown column: the precise path names it
    types = {name: arrow_type(FIELD_BY_NAME[name]) for name in header}
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(block_size=32 << 20),
            parse_options=pcsv.ParseOptions(newlines_in_values=False),
            convert_options=pcsv.ConvertOptions(
                column_types=types,
                null_values=[""],
                true_values=["true", "1"],
                false_values=["false", "0"],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None
    try:
        if table.column_names != header:
            return None  # e.g. a quote the header line left open
    except UnicodeDecodeError:
        return None
    return ledger_from_arrow(table, source, default_run, line_numbers(data, 2), csv=True)


def _rows_csv(data: bytes, src: str) -> Iterator[Row]:
    """Each row of ``data`` through the csv module; text that is not UTF-8 is one problem, on the
    line of its first bad byte (the csv module ends lines at CR, LF or CRLF)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")
        line = before.count("\n") + before.count("\r") - before.count("\r\n") + 1
        yield Problem(line, f"not UTF-8 text ({exc.reason})", src)
        return
    with io.StringIO(text, newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, None)
            if header is None:
                return
            seen: set[str] = set()
            for name in header:
                if name in seen:
                    yield Problem(1, f"column {name!r} appears twice in the header", src)
                seen.add(name)
            for cells in reader:
                lineno = reader.line_num
                if not any(cell.strip() for cell in cells):
                    continue
                if len(cells) != len(header):
                    yield Problem(lineno, f"expected {len(header)} cells, got {len(cells)}", src)
                    continue
                yield lineno, {h: c for h, c in zip(header, cells, strict=True) if c.strip() != ""}
        except csv.Error as exc:
            yield Problem(reader.line_num, f"not valid CSV: {exc}", src)
