"""What the JSONL and CSV fast paths share: pyarrow's types for the fields, the line of each row,
and an arrow table turned into a :class:`Ledger` -- or None at anything the precise path would read
otherwise (the fast paths only ever accept)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from trialbook.ledger._fields import FIELD_BY_NAME, FIELDS, Field
from trialbook.ledger._rows import build_ledger
from trialbook.ledger._rules import check_rules
from trialbook.ledger._table import Ledger, unrecorded

__all__ = ["arrow_type", "ledger_from_arrow", "line_numbers"]


def arrow_type(f: Field) -> Any:
    """The arrow type of a field's values."""
    import pyarrow as pa

    return {
        "str": pa.string(),
        "time": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
    }[f.kind]


def line_numbers(data: bytes, first: int) -> Any:
    """The line of each non-blank line from line ``first`` on (a blank line holds no row)."""
    count = data.count(b"\n") + (not data.endswith(b"\n"))
    last = data[data.rfind(b"\n") + 1 :]
    if not (_BLANK_LINE.search(data) or _BLANK_FIRST.match(data) or (last and not last.strip())):
        return np.arange(first, count + 1)
    lines = data.split(b"\n")
    return np.array([i for i in range(first, count + 1) if lines[i - 1].strip()], dtype=np.int64)


# a line of only whitespace (bytes.strip's set) inside the file, and as its first line
_BLANK_LINE = re.compile(rb"\n[ \t\r\f\v]*\n")
_BLANK_FIRST = re.compile(rb"[ \t\r\f\v]*\n")


def ledger_from_arrow(
    table: Any, source: str, default_run: str | None, lines: Any, *, csv: bool
) -> Ledger | None:
    """The arrow table as a Ledger, or None at anything the precise path would read otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        names = table.column_names
    except UnicodeDecodeError:
        return None  # a key that is not UTF-8 (arrow does not check): the precise path names it
    if any(name not in FIELD_BY_NAME for name in names):
        return None  # an unknown field: the precise path names it with a suggestion
    rows = table.num_rows
    if rows != len(lines):
        return None  # a row over several lines, or a line arrow skipped: line numbers unknown
    values: dict[str, Any] = {}
    codes: dict[str, Any] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for f in FIELDS:
        if f.name not in names:
            if f.required:
                return None
            col = None
        else:
            col = table.column(f.name).combine_chunks()
            want = arrow_type(f)
            if pa.types.is_null(col.type):
                col = None if not f.required else col
            elif col.type != want:
                if not (pa.types.is_integer(col.type) and f.kind == "float"):
                    return None  # e.g. 1.0 where a whole number belongs: the precise path says so
                try:
                    col = pc.cast(col, want)
                except pa.ArrowInvalid:
                    return None  # an integer a double would round: the precise path says so
        if col is None or (col.null_count == rows and not f.required):
            # an optional field nobody recorded: no cast, no fill
            if f.kind in ("str", "time"):
                codes[f.name], labels[f.name] = unrecorded(rows, -1), ()
            else:
                values[f.name] = unrecorded(rows, math.nan)
            continue
        if f.required and col.null_count:
            return None
        if f.kind in ("str", "time"):
            enc = pc.dictionary_encode(col)
            codes[f.name] = pc.fill_null(enc.indices, -1).to_numpy().astype(np.int64)
            try:
                labels[f.name] = tuple(enc.dictionary.to_pylist())
            except UnicodeDecodeError:
                return None  # arrow reads bytes unchecked: the precise path names the line
            if csv and any(not label.strip() for label in labels[f.name]):
                return None  # a cell of only whitespace is "not recorded" for the precise path
        elif f.kind == "float" and pc.all(pc.is_finite(col)).as_py() is False:
            return None  # NaN or infinity in the file: the precise path names it
        elif f.required:
            values[f.name] = col.to_numpy(zero_copy_only=False)
        else:
            try:  # safe cast: an integer beyond 2**53 is refused, not rounded
                exact = pc.cast(col, pa.float64())
            except pa.ArrowInvalid:
                return None  # the precise path names it
            values[f.name] = pc.fill_null(exact, math.nan).to_numpy()
    ledger = build_ledger(source, default_run, lines, values, codes, labels)
    if check_rules(ledger):
        return None
    return ledger
