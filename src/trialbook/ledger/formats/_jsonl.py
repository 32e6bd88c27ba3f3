"""JSONL ledgers: three readers, tried in this order, and the writer.

1. The C reader (``_cjsonl.c``, built at install when a C compiler is at hand) reads flat JSONL in
   one pass straight into columns.
2. The arrow reader parses with pyarrow against an explicit schema (strict: ``1`` is not a boolean,
   ``1.0`` is not an integer, unknown keys are an error).
3. The precise reader goes row by row with the json module and knows every line number.

All end in the same :func:`check_rules`. The first two only ever *accept*: at the first sign of
anything wrong, or of anything they do not read exactly, they hand over to the next, and the precise
reader finds every problem and names its line. So a valid file is read fast, and an invalid one is
reported exactly.
"""

from __future__ import annotations

import codecs
import io
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

import numpy as np

from trialbook.errors import Problem
from trialbook.ledger._fields import FIELD_BY_NAME, FIELDS
from trialbook.ledger._rows import Row, build_ledger, from_rows, ledger_rows
from trialbook.ledger._rules import check_rules
from trialbook.ledger._table import Ledger, unrecorded
from trialbook.ledger.formats._arrow import arrow_type, ledger_from_arrow, line_numbers
from trialbook.ledger.formats._format import Format

try:
    from trialbook.ledger.formats import _cjsonl

    NATIVE = True
except ImportError:  # installed without a C compiler: the arrow reader reads JSONL (same results)
    NATIVE = False

__all__ = ["JSONL", "NATIVE", "read_jsonl", "write_jsonl"]


def read_jsonl(path: Path, default_run: str) -> Ledger:
    """Read and validate a JSONL ledger; raises :class:`LedgerError` naming every problem."""
    # read once; each reader that declines hands the same bytes to the next
    data, source = path.read_bytes(), str(path)
    data = data.removeprefix(codecs.BOM_UTF8)  # a byte order mark is accepted, as in CSV
    fast = _read_jsonl_native(data, source, default_run)
    if fast is None:
        fast = _read_jsonl_fast(data, source, default_run)
    # rows of an imported run that leaves required fields unrecorded go the precise way: it alone
    # sees a value given for a field that 'not_recorded' names
    if fast is not None and not fast.recorded("not_recorded"):
        return fast
    return from_rows(source, _rows_jsonl(data, source), from_csv=False, default_run=default_run)


def write_jsonl(ledger: Ledger, out: BinaryIO) -> int:
    """One JSON object per row, every field, "not recorded" as null; returns the number of rows."""
    import orjson

    n = 0
    for row in ledger_rows(ledger):
        out.write(orjson.dumps(row) + b"\n")
        n += 1
    return n


JSONL = Format("jsonl", (".jsonl",), read=read_jsonl, write=write_jsonl)
"""JSON Lines: one object per attempt (read and written)."""


_NOT_AN_OBJECT_FIRST = re.compile(rb"\s*[^{\s]")
_NOT_AN_OBJECT = re.compile(rb"\n[ \t\r]*[^{\s]")


def _keys_in(head: bytes) -> set[str]:
    """Keys of the objects in ``head``, a sample of the file (other keys are inferred)."""
    keys: set[str] = set()
    for raw in head.splitlines():
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):  # the precise path names the line
            continue
        if isinstance(obj, dict):
            keys.update(obj)
    return keys


# --------------------------------------------------------------------------- C reader

_NATIVE_KIND = {"str": "s", "time": "s", "int": "i", "float": "f", "bool": "b"}
_NAMES = tuple(f.name.encode() for f in FIELDS)
_KINDS = "".join(
    _NATIVE_KIND[f.kind].upper() if f.required else _NATIVE_KIND[f.kind] for f in FIELDS
).encode()
_NATIVE_DTYPE = {"S": np.int64, "s": np.int64, "I": np.int64, "B": np.uint8}  # others: float64


def _read_jsonl_native(
    data: bytes | memoryview, source: str, default_run: str | None
) -> Ledger | None:
    """Read with the C reader, or None when it is not built or declines the file.

    ``data`` is the whole file, read (not mapped: a mapped file that another program truncates kills
    the reader with SIGBUS).
    """
    if not NATIVE:
        return None
    if not data:
        return None  # empty: the precise path says so
    size = _cjsonl.count_lines(data)
    lines = np.empty(size, dtype=np.int64)
    # columns for the fields the first 64 KiB use; a field first seen later asks for all
    wanted = {f.name for f in FIELDS if f.required} | _keys_in(bytes(data[: 1 << 16]))
    while True:
        columns: list[Any] = [
            np.empty(size, dtype=_NATIVE_DTYPE.get(chr(kind), np.float64))
            if f.name in wanted
            else None
            for f, kind in zip(FIELDS, _KINDS, strict=True)
        ]
        out = _cjsonl.parse(data, _NAMES, _KINDS, columns, lines)
        if not isinstance(out, int):
            break
        wanted = set(FIELD_BY_NAME)
    if out is None:
        return None
    rows, raw_labels = out
    values: dict[str, Any] = {}
    codes: dict[str, Any] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for f, col, found in zip(FIELDS, columns, raw_labels, strict=True):
        text = f.kind in ("str", "time")
        if col is None:
            if text:
                codes[f.name], labels[f.name] = unrecorded(rows, -1), ()
            else:
                values[f.name] = unrecorded(rows, math.nan)
        elif text:
            assert found is not None  # the reader lists the labels of every text column
            decoded = _decode_labels(found, col[:rows])
            if decoded is None:
                return None
            codes[f.name], labels[f.name] = decoded
        elif f.kind == "bool" and f.required:
            values[f.name] = col[:rows].view(np.bool_)
        else:
            values[f.name] = col[:rows]
    ledger = build_ledger(source, default_run, lines[:rows], values, codes, labels)
    if check_rules(ledger):
        return None
    return ledger


def _decode_labels(found: list[str | bytes], codes: Any) -> tuple[Any, tuple[str, ...]] | None:
    """Labels with their escapes decoded by the json module; codes merged where two spellings
    (``"A"`` and ``"\\u0041"``) name one text. None when an escape is invalid."""
    if all(isinstance(label, str) for label in found):
        return codes, tuple(cast(list[str], found))
    texts: list[str] = []
    for label in found:
        if isinstance(label, bytes):
            try:
                label = json.loads(b'"' + label + b'"')
            except ValueError:
                return None
        texts.append(label)
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(t, len(index)) for t in texts], dtype=np.int64)
    if len(index) < len(texts):
        codes = np.where(codes >= 0, remap[codes], -1)
    return codes, tuple(index)


def _read_jsonl_fast(data: bytes, source: str, default_run: str | None) -> Ledger | None:
    import pyarrow as pa
    import pyarrow.json as pj

    # Declaring only the fields the file uses parses ~40% faster than all 33; any other key is
    # inferred by arrow and then checked below (unknown name or a different type: precise path).
    if _NOT_AN_OBJECT_FIRST.match(data) or _NOT_AN_OBJECT.search(data):
        # a line that does not open an object is an error anyway, and arrow 26 dies of SIGSEGV
        # on a block that opens with a top-level null (apache/arrow#47409): never hand it one
        return None
    if _nested_deeper(data, _MAX_DEPTH):
        # a ledger row is flat; arrow's parser recurses and dies of SIGSEGV on a value nested
        # 100,000 deep: the precise path says "not valid JSON" for it
        return None
    seen = _keys_in(data[: 1 << 16])
    schema = pa.schema([(f.name, arrow_type(f)) for f in FIELDS if f.name in seen])
    try:
        table = pj.read_json(
            pa.BufferReader(data),
            read_options=pj.ReadOptions(block_size=32 << 20),
            parse_options=pj.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="infer"
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError):
        return None
    return ledger_from_arrow(table, source, default_run, line_numbers(data, 1), csv=False)


_MAX_DEPTH = 64
_OPENERS = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSERS = np.frombuffer(b"]}", dtype=np.uint8)


def _nested_deeper(data: bytes, limit: int) -> bool:
    """Whether brackets (counted inside strings too: a false alarm only costs speed) ever nest
    deeper than ``limit``. Two byte counts settle a flat file; numpy counts the others."""
    if b"[" not in data and data.count(b"{") <= data.count(b"\n") + 1:
        return False
    octets = np.frombuffer(data, dtype=np.uint8)
    depth = 0
    for start in range(0, octets.size, 1 << 22):
        chunk = octets[start : start + (1 << 22)]
        step = np.isin(chunk, _OPENERS).astype(np.int32) - np.isin(chunk, _CLOSERS)
        run = np.cumsum(step, dtype=np.int64) + depth
        if run.max() > limit:
            return True
        depth = max(int(run[-1]), 0)
    return False


# --------------------------------------------------------------------------- precise reader


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} appears twice")
        seen[key] = value
    return seen


class _NonFiniteError(ValueError):
    """NaN, Infinity or -Infinity in a line: JSON has no such number."""


def _reject_constant(name: str) -> None:
    raise _NonFiniteError(name)


class _Constant:
    """What the second parse of a refused line puts where NaN or Infinity stood."""

    def __init__(self, name: str) -> None:
        self.name = name


def _non_finite_message(raw: bytes, name: str) -> str:
    """The refusal of a line holding ``name`` (NaN, Infinity, -Infinity), naming the field it
    stands in: the line is parsed again with a marker in its place (it parsed but for that)."""
    try:
        obj = json.loads(raw, parse_constant=_Constant)
    except (ValueError, RecursionError):
        obj = None
    if not isinstance(obj, dict):
        return f"not valid JSON: {name} is not a number JSON allows"
    field = _constant_path(obj)
    task = obj.get("task_id")
    where = f"task {task!r}: " if isinstance(task, str) else ""
    if field is not None:
        where += f"field {field!r}: "
    return f"{where}{name} is not a number JSON allows"


def _constant_path(value: Any, path: str = "") -> str | None:
    if isinstance(value, _Constant):
        return path
    items: Iterator[tuple[str, Any]]
    if isinstance(value, dict):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for sub, item in items:
        found = _constant_path(item, sub)
        if found is not None:
            return found
    return None


def _rows_jsonl(data: bytes, src: str) -> Iterator[Row]:
    """Each line of ``data`` (split at b"\\n" only, as a file iterates) parsed by the json module."""
    for lineno, raw in enumerate(io.BytesIO(data), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(
                raw, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant
            )
        except json.JSONDecodeError as exc:
            yield Problem(lineno, f"not valid JSON: {exc.msg} (column {exc.colno})", src)
            continue
        except _NonFiniteError as exc:
            yield Problem(lineno, _non_finite_message(raw, str(exc)), src)
            continue
        except (ValueError, RecursionError) as exc:
            yield Problem(lineno, f"not valid JSON: {exc}", src)
            continue
        if not isinstance(obj, dict):
            yield Problem(lineno, f"expected a JSON object, got {type(obj).__name__}", src)
            continue
        yield lineno, obj
