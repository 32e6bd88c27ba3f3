"""The columns of each batch of validated rows, kept beside the attempts table (schema 7).

Every write of the store (an import, an append, one attempt of the harness) validates its rows into a
:class:`Ledger` first; the store then keeps that Ledger's recorded columns, run by run, as one blob in
``attempt_columns``: the raw bytes of each array (row ids, numbers, flags, text codes) and the labels
the codes point into. Reading a run then takes its blobs, in order, and puts the arrays back together
with no Python object per value (``np.frombuffer``): the same columns the rows' JSONL file would be
read into, so the same rules check them and the same figures come out of them, to the bit.

The blobs are a copy of what the attempts table holds, made only by the store itself: a run whose
rows do not all have their blob (rows another tool inserted, or rows written before schema 7), or
whose blob does not read back as the columns of its rows (damaged, or written by another tool), is
read from the table instead.

Format 2 (``TBC2``, schema 12) keeps a column whose every value is the same (to the bit) once, and
reads it back as that value seen ``rows`` times (a read-only view with no memory per row): a run's
identity, budget and timeout, and often its cost or a flag, are such columns, and a million rows of
each cost 8 MB to read and as much again in the page faults of new memory. Format 1 (``TBC1``,
schemas 7 to 11) keeps every value and is read as before.
"""

from __future__ import annotations

import json
import math
import sqlite3
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from trialbook.ledger._fields import FIELDS
from trialbook.ledger._provenance import Completion, Provenance
from trialbook.ledger._table import DTYPE, Ledger, once, unrecorded

__all__ = ["DamagedColumns", "covered", "keep_columns", "load_columns"]

_MAGIC = b"TBC2"
_FORMATS = (b"TBC1", _MAGIC)
_SAME = "same"  # a span's fifth item in format 2: the column's one value, kept once
_ALIGN = 64
_PART = 1 << 28
_TEXT = {f.name for f in FIELDS if f.kind in ("str", "time")}
# the array type each column is read into (codes for text; an optional number or flag is float64)
_DTYPES = {
    "id": np.dtype(np.int64),
    **{
        f.name: np.dtype(
            np.int64 if f.name in _TEXT else DTYPE[f.kind] if f.required else np.float64
        )
        for f in FIELDS
    },
}


def _recorded(ledger: Ledger) -> list[str]:
    """The fields some row records (a column of only NaN or only -1 codes is left out: it reads
    back as not recorded, the same values)."""
    names = []
    for f in FIELDS:
        if f.name in _TEXT:
            if (once(ledger.codes[f.name]) >= 0).any():
                names.append(f.name)
        else:
            col = ledger.values[f.name]
            if col.dtype.kind != "f" or not np.isnan(once(col)).all():
                names.append(f.name)
    return names


def _same(arr: np.ndarray[Any, Any]) -> bool:
    """Whether every value of the column has the same bits (so 0.0 and -0.0 are not the same)."""
    if arr.size < 2:
        return False
    if arr.strides == (0,):
        return True
    bits = arr.view(f"u{arr.dtype.itemsize}")
    return bool((bits == bits[0]).all())


def _pack(ledger: Ledger, ids: np.ndarray[Any, Any], names: list[str]) -> bytes:
    """One blob: a JSON header (rows, each array's name, dtype and byte span, marked ``same`` when
    the span holds its one value, the labels), then the arrays' bytes, of the fields ``names``
    (those some row records)."""
    arrays: list[tuple[str, np.ndarray[Any, Any]]] = [("id", np.ascontiguousarray(ids))]
    labels: dict[str, list[str]] = {}
    for name in names:
        if name in _TEXT:
            arrays.append((name, np.ascontiguousarray(ledger.codes[name], dtype=np.int64)))
            labels[name] = list(ledger.labels[name])
        else:
            arrays.append((name, np.ascontiguousarray(ledger.values[name])))
    # every array starts at a multiple of 64 bytes: an unaligned array would make numpy sum it
    # through a buffer, in another order, and a float total would differ in its last bits
    spans: list[list[Any]] = []
    chunks: list[Any] = []
    offset = 0
    for name, arr in arrays:
        same = _same(arr)
        kept = np.ascontiguousarray(arr[:1]) if same else arr
        pad = -offset % _ALIGN
        chunks += [b"\0" * pad, kept.data]
        offset += pad
        spans.append([name, arr.dtype.str, offset, kept.nbytes, *([_SAME] if same else [])])
        offset += kept.nbytes
    header = json.dumps({"rows": len(ledger), "arrays": spans, "labels": labels}).encode()
    header += b" " * (-(len(header) + 8) % _ALIGN)
    return b"".join([_MAGIC, struct.pack("<I", len(header)), header, *chunks])


def keep_columns(conn: sqlite3.Connection, ledger: Ledger, first_id: int, last_id: int) -> None:
    """Keep the columns of ``ledger``, just inserted as rows ``first_id..last_id`` in its order,
    one blob per run (inside the caller's transaction)."""
    ids = np.arange(first_id, last_id + 1, dtype=np.int64)
    if ids.size != len(ledger):
        return  # not one contiguous span (never, with rowids): the table alone serves these rows
    runs = ledger.codes["run_id"]
    for code, run in enumerate(ledger.labels["run_id"]):
        rows = np.flatnonzero(runs == code)
        # a blob holds at most _PART bytes of arrays (SQLite refuses a value over 1 GB); one
        # blob per run is read back without a copy, several are put together
        names = _recorded(ledger)
        per_row = 8 + sum(
            8 if n in _TEXT else ledger.values[n].itemsize for n in names
        )  # fmt: skip
        step = max(1, _PART // per_row)
        for start in range(0, rows.size, step):
            at = rows[start : start + step]
            part = ledger if at.size == len(ledger) else ledger.subset(at)
            conn.execute(
                "INSERT INTO attempt_columns (run_id, rows, last_id, columns) VALUES (?, ?, ?, ?)",
                (run, int(at.size), int(ids[at[-1]]), _pack(part, ids[at], names)),
            )


def covered(conn: sqlite3.Connection, run_id: str) -> bool:
    """Whether every row of the run has its columns kept (and nothing else was added)."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'attempt_columns'"
    ).fetchone():
        return False  # a table another tool made, marked with a schema version
    kept = conn.execute(
        "SELECT coalesce(sum(rows), 0), max(last_id) FROM attempt_columns WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    if not kept[0]:
        return False
    stored = (
        # the run alone in the table (its least and greatest run_id, two index probes; a row
        # without run_id is counted too, and then differs): SQLite counts a whole table from its
        # b-tree pages, ten times quicker than the rows of one run, but only in a statement of
        # its own
        conn.execute("SELECT count(*) FROM attempts").fetchone()
        + conn.execute("SELECT max(id) FROM attempts").fetchone()
        if _alone(conn, run_id)
        else conn.execute(
            "SELECT count(*), max(id) FROM attempts WHERE run_id = ?", (run_id,)
        ).fetchone()
    )
    return bool(tuple(kept) == tuple(stored))


def _alone(conn: sqlite3.Connection, run_id: str) -> bool:
    lo = conn.execute('SELECT min("run_id") FROM attempts').fetchone()[0]
    return bool(
        lo == run_id and conn.execute('SELECT max("run_id") FROM attempts').fetchone()[0] == run_id
    )


def _aligned(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The array itself (a view into the blob, no copy) when its items are aligned in memory, as
    they are at 64-byte offsets into a bytes object; else an aligned copy. numpy sums an unaligned
    array through a buffer, in another order, and a float total would differ in its last bits."""
    return array if array.flags.aligned else array.copy()


class DamagedColumns(Exception):
    """A kept blob that does not read back as the columns of its rows: the run is read from the
    table (which the store's constraints hold), never from the blob."""


def _unpack(blob: bytes) -> tuple[int, dict[str, np.ndarray[Any, Any]], dict[str, list[str]]]:
    """The rows, arrays and labels of one blob, each array checked against what the store writes
    (its field, type, length and codes); anything else is :class:`DamagedColumns`."""
    try:
        magic = blob[:4]
        if magic not in _FORMATS:
            raise DamagedColumns("not a column blob")
        (size,) = struct.unpack("<I", blob[4:8])
        header = json.loads(blob[8 : 8 + size])
        rows, labels = header["rows"], header["labels"]
        if type(rows) is not int or rows < 1 or not isinstance(labels, dict):
            raise DamagedColumns("no rows or labels")
        arrays: dict[str, np.ndarray[Any, Any]] = {}
        for span in header["arrays"]:
            name, dtype, offset, nbytes, *mark = span
            if name not in _DTYPES or name in arrays or np.dtype(dtype) != _DTYPES[name]:
                raise DamagedColumns(f"column {name!r}")
            same = mark == [_SAME] and magic != b"TBC1"
            if mark and not same:
                raise DamagedColumns(f"column {name!r}: mark {mark!r}")
            count = 1 if same else rows
            if type(offset) is not int or nbytes != count * _DTYPES[name].itemsize:
                raise DamagedColumns(f"column {name!r}: span")
            array = _aligned(
                np.frombuffer(blob, dtype=_DTYPES[name], count=count, offset=8 + size + offset)
            )
            arrays[name] = np.broadcast_to(array, (rows,)) if same else array
        if "id" not in arrays:
            raise DamagedColumns("no row ids")
        for name in _TEXT & set(arrays):
            names = labels.get(name)
            codes = once(arrays[name])
            if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
                raise DamagedColumns(f"column {name!r}: labels")
            if codes.min() < -1 or codes.max() >= len(names):
                raise DamagedColumns(f"column {name!r}: codes")
    except (ValueError, TypeError, KeyError, struct.error) as exc:  # JSON, spans, frombuffer
        raise DamagedColumns(str(exc)) from None
    return rows, arrays, labels


def _blob(conn: sqlite3.Connection, rowid: int) -> bytes:
    """One kept blob, read straight into a bytes object (a SELECT of it copies it twice: into
    SQLite's buffer, then into Python's; a third of the time of reading a run of 1,000,000 rows)."""
    try:
        with conn.blobopen("attempt_columns", "columns", rowid, readonly=True) as blob:
            return blob.read()
    except sqlite3.Error:  # not a blob, or no incremental I/O
        (value,) = conn.execute(
            "SELECT columns FROM attempt_columns WHERE rowid = ?", (rowid,)
        ).fetchone()
        if not isinstance(value, bytes):  # bytes(n) of a number would be n zero bytes
            raise DamagedColumns(f"a {type(value).__name__}, not a blob") from None
        return value


def load_columns(
    conn: sqlite3.Connection,
    run_id: str,
    source: str,
    provenance: dict[str, Provenance],
    completion: dict[str, Completion],
) -> Ledger:
    """The kept columns of one run as a Ledger (not yet checked by the rules); line = row id.
    Raises :class:`DamagedColumns` when a blob does not read back as the rows the table says it
    keeps."""
    parts = []
    for rowid, count, last_id in conn.execute(
        "SELECT rowid, rows, last_id FROM attempt_columns WHERE run_id = ? ORDER BY id", (run_id,)
    ).fetchall():
        part = _unpack(_blob(conn, rowid))
        if part[0] != count or int(part[1]["id"][-1]) != last_id:
            raise DamagedColumns(f"blob {rowid}: not the {count} rows up to id {last_id}")
        parts.append(part)
    rows = sum(p[0] for p in parts)
    values: dict[str, Any] = {}
    codes: dict[str, Any] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for f in FIELDS:
        if f.name in _TEXT:
            codes[f.name], labels[f.name] = _merge_text(f.name, parts, rows)
        else:
            values[f.name] = _join([p[1].get(f.name) for p in parts], [p[0] for p in parts], f.kind)
    lines = _join([p[1]["id"] for p in parts], [p[0] for p in parts], "int")
    return Ledger(
        source=source,
        lines=lines,
        values=values,
        codes=codes,
        labels=labels,
        provenance=provenance,
        completion=completion,
    )


def _join(arrays: Sequence[np.ndarray[Any, Any] | None], sizes: Sequence[int], kind: str) -> Any:
    """One column from the batches' arrays (a batch without it did not record it: NaN)."""
    if all(a is None for a in arrays):
        return unrecorded(sum(sizes), math.nan)
    if len(arrays) == 1:
        return arrays[0]
    del kind  # a required column is in every batch; an optional one is float64 (NaN) in each
    filled = [np.full(n, np.nan) if a is None else a for a, n in zip(arrays, sizes, strict=True)]
    return np.concatenate(filled)


def _merge_text(
    name: str,
    parts: Sequence[tuple[int, dict[str, np.ndarray[Any, Any]], dict[str, list[str]]]],
    rows: int,
) -> tuple[Any, tuple[str, ...]]:
    """Codes into one label list (in order of first appearance) from each batch's own labels."""
    if all(name not in p[1] for p in parts):
        return unrecorded(rows, -1), ()
    if len(parts) == 1:
        return parts[0][1][name], tuple(parts[0][2][name])
    index: dict[str, int] = {}
    out = []
    for n, arrays, labels in parts:
        if name not in arrays:
            out.append(np.full(n, -1, dtype=np.int64))
            continue
        remap = np.array(
            [index.setdefault(label, len(index)) for label in labels[name]] + [-1],
            dtype=np.int64,
        )
        out.append(remap[arrays[name]])  # code -1 picks the trailing -1
    return np.concatenate(out), tuple(index)
