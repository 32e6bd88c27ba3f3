"""Reading ledger files (JSONL and CSV) into a validated :class:`Ledger`, or a list of problems.

Three paths, one set of rules. The native path (``_jsonl.c``, built at install when a C compiler is
at hand) reads flat JSONL in one pass straight into columns; the arrow path parses JSONL and CSV
with pyarrow against an explicit schema (strict: ``1`` is not a boolean, ``1.0`` is not an integer,
unknown keys are an error); the precise path reads row by row and knows every line number. All end
in the same :func:`check_rules`. The first two only ever *accept*: at the first sign of anything
wrong, or of anything they do not read exactly, they hand over to the next, and the precise path
finds every problem and names its line. So a valid file is read fast, and an invalid one is
reported exactly.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from trialbook.errors import LedgerError, Problem
from trialbook.ledger._fields import FIELD_BY_NAME, FIELDS, Field
from trialbook.ledger._table import DTYPE, Ledger, check_rules, factorize, unrecorded

try:
    from trialbook.ledger import _jsonl

    NATIVE = True
except ImportError:  # installed without a C compiler: the arrow path reads JSONL (same results)
    NATIVE = False

__all__ = ["ledger_from_rows", "ledger_rows", "ledger_tuples", "read_ledger"]

_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


def read_ledger(path: str | Path, *, default_run: str | None = None) -> Ledger:
    """Read and validate a ledger (``.db``, ``.jsonl`` or ``.csv``).

    Raises :class:`LedgerError` listing every problem (line, task, field) when any row breaks a rule;
    nothing from an invalid ledger is returned. A file without ``run_id`` is one run, named after the
    file's stem (or ``default_run``). A ``.db`` file is the SQLite store; it is opened read-only and never migrated here.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".db", ".jsonl", ".csv"):
        raise LedgerError(
            [Problem(0, f"unsupported ledger type {p.suffix!r}: use .db, .jsonl or .csv", str(p))]
        )
    if not p.is_file():
        raise LedgerError([Problem(0, "no such file", str(p))])
    if suffix == ".db":
        from trialbook.ledger._store import read_store

        return read_store(p)
    if suffix == ".jsonl":
        # read once; each reader that declines hands the same bytes to the next
        data, source, run = p.read_bytes(), str(p), default_run or p.stem
        fast = _read_jsonl_native(data, source, run)
        if fast is None:
            fast = _read_jsonl_fast(data, source, run)
        if fast is not None:
            return fast
        rows = _rows_jsonl(data, source)
    else:
        data = p.read_bytes()
        fast = _read_csv_fast(data, str(p), default_run or p.stem)
        if fast is not None:
            return fast
        rows = _rows_csv(data, str(p))
    return _from_rows(str(p), rows, from_csv=suffix == ".csv", default_run=default_run or p.stem)


def ledger_from_rows(
    rows: Iterable[Mapping[str, object]], source: str, default_run: str | None = None
) -> Ledger:
    """Validate rows of Python values (JSON types: ``1`` is not a boolean) into a :class:`Ledger`.

    Row ``i`` is reported as line ``i + 1`` of ``source``. Raises :class:`LedgerError`.
    """
    return _from_rows(
        source,
        ((i, dict(row)) for i, row in enumerate(rows, 1)),
        from_csv=False,
        default_run=default_run,
    )


def ledger_rows(ledger: Ledger) -> Iterator[dict[str, object]]:
    """The rows of a ledger as dicts of Python values of each field's kind; unrecorded fields are None.

    The inverse of :func:`ledger_from_rows`: optional integers come back as ``int``, flags as ``bool``,
    and "not recorded" stays None (never 0). Each column is converted whole, then zipped into rows.
    """
    names = [f.name for f in FIELDS]
    for values in ledger_tuples(ledger, names):
        yield dict(zip(names, values, strict=True))


def ledger_tuples(ledger: Ledger, names: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    """The rows as tuples of the fields ``names``, valued as :func:`ledger_rows` values them."""
    return zip(*(_python_column(ledger, FIELD_BY_NAME[n]) for n in names), strict=True)


def _python_column(ledger: Ledger, f: Field) -> list[Any]:
    """One column as Python values, in one pass (cheap for the harness's one-row writes too)."""
    if f.kind in ("str", "time"):
        labels = ledger.labels[f.name]
        return [None if c < 0 else labels[c] for c in ledger.codes[f.name].tolist()]
    col = ledger.values[f.name]
    if f.required:
        return cast(list[Any], col.astype(DTYPE[f.kind], copy=False).tolist())
    if col.size > 1 and col.strides == (0,):
        col = col[:1]  # an unrecorded column (see `unrecorded`): one value, repeated
    values = col.tolist()  # floats; NaN (v != v) is "not recorded"
    if f.kind == "float":
        out = [None if v != v else v for v in values]
    else:
        kind = int if f.kind == "int" else bool
        out = [None if v != v else kind(v) for v in values]
    return out if len(out) == len(ledger) else out * len(ledger)


# --------------------------------------------------------------------------- fast path (pyarrow)


def _arrow_type(f: Field) -> Any:
    import pyarrow as pa

    return {
        "str": pa.string(),
        "time": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
    }[f.kind]


_NOT_AN_OBJECT_FIRST = re.compile(rb"\s*[^{\s]")
_NOT_AN_OBJECT = re.compile(rb"\n[ \t\r]*[^{\s]")


def _keys_in(head: bytes) -> set[str]:
    """Keys of the objects in ``head``, a sample of the file (other keys are inferred)."""
    keys: set[str] = set()
    for raw in head.splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            keys.update(obj)
    return keys


# --------------------------------------------------------------------------- native path (C)

_NATIVE_KIND = {"str": "s", "time": "s", "int": "i", "float": "f", "bool": "b"}
_NAMES = tuple(f.name.encode() for f in FIELDS)
_KINDS = "".join(
    _NATIVE_KIND[f.kind].upper() if f.required else _NATIVE_KIND[f.kind] for f in FIELDS
).encode()
_NATIVE_DTYPE = {"S": np.int64, "s": np.int64, "I": np.int64, "B": np.uint8}  # others: float64


def _read_jsonl_native(data: bytes, source: str, default_run: str) -> Ledger | None:
    """Read with the C reader, or None when it is not built or declines the file.

    ``data`` is the whole file, read (not mapped: a mapped file that another program truncates kills
    the reader with SIGBUS).
    """
    if not NATIVE:
        return None
    if not data:
        return None  # empty: the precise path says so
    size = _jsonl.count_lines(data)
    lines = np.empty(size, dtype=np.int64)
    # columns for the fields the first 64 KiB use; a field first seen later asks for all
    wanted = {f.name for f in FIELDS if f.required} | _keys_in(data[: 1 << 16])
    while True:
        columns: list[Any] = [
            np.empty(size, dtype=_NATIVE_DTYPE.get(chr(kind), np.float64))
            if f.name in wanted
            else None
            for f, kind in zip(FIELDS, _KINDS, strict=True)
        ]
        out = _jsonl.parse(data, _NAMES, _KINDS, columns, lines)
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
    ledger = _finish(source, default_run, lines[:rows], values, codes, labels)
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


def _read_jsonl_fast(data: bytes, source: str, default_run: str) -> Ledger | None:
    import pyarrow as pa
    import pyarrow.json as pj

    # Declaring only the fields the file uses parses ~40% faster than all 33; any other key is
    # inferred by arrow and then checked below (unknown name or a different type: precise path).
    if _NOT_AN_OBJECT_FIRST.match(data) or _NOT_AN_OBJECT.search(data):
        # a line that does not open an object is an error anyway, and arrow 26 dies of SIGSEGV
        # on a block that opens with a top-level null (apache/arrow#47409): never hand it one
        return None
    seen = _keys_in(data[: 1 << 16])
    schema = pa.schema([(f.name, _arrow_type(f)) for f in FIELDS if f.name in seen])
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
    return _ledger_from_arrow(table, source, default_run, _line_numbers(data, 1), csv=False)


def _read_csv_fast(data: bytes, source: str, default_run: str) -> Ledger | None:
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
    types = {name: _arrow_type(FIELD_BY_NAME[name]) for name in header}
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
    return _ledger_from_arrow(table, source, default_run, _line_numbers(data, 2), csv=True)


def _line_numbers(data: bytes, first: int) -> Any:
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


def _ledger_from_arrow(
    table: Any, source: str, default_run: str, lines: Any, *, csv: bool
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
            want = _arrow_type(f)
            if pa.types.is_null(col.type):
                col = None if not f.required else col
            elif col.type != want:
                if not (pa.types.is_integer(col.type) and f.kind == "float"):
                    return None  # e.g. 1.0 where a whole number belongs: the precise path says so
                col = pc.cast(col, want)
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
            values[f.name] = pc.fill_null(pc.cast(col, pa.float64()), math.nan).to_numpy()
    ledger = _finish(source, default_run, lines, values, codes, labels)
    if check_rules(ledger):
        return None
    return ledger


def _finish(
    source: str,
    default_run: str | None,
    lines: Any,
    values: dict[str, Any],
    codes: dict[str, Any],
    labels: dict[str, tuple[str, ...]],
) -> Ledger:
    # A file without run_id is one run, named after the file.
    run = codes["run_id"]
    if default_run is not None and run.size and (run < 0).all():
        codes["run_id"] = np.zeros_like(run)
        labels["run_id"] = (default_run,)
    return Ledger(
        source=source, lines=lines.astype(np.int64), values=values, codes=codes, labels=labels
    )


# --------------------------------------------------------------------------- precise path


def _show(value: object) -> str:
    text = (
        json.dumps(value) if not isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    )
    return text if len(text) <= 40 else text[:37] + "..."


def _coerce(f: Field, value: object, from_csv: bool) -> tuple[object, str | None]:
    """The typed value, or an error message naming the field."""
    if from_csv:
        assert isinstance(value, str)
        text = value.strip()
        try:
            if f.kind == "int":
                return _int64(f, int(text))
            if f.kind == "float":
                number = float(text)
                if not math.isfinite(number):
                    return None, f"field {f.name!r}: must be a finite number, got {_show(value)}"
                return number, None
        except ValueError:
            kind = "a whole number" if f.kind == "int" else "a number"
            return None, f"field {f.name!r}: expected {kind}, got {_show(value)}"
        if f.kind == "bool":
            low = text.lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE, None
            return None, f"field {f.name!r}: expected true or false, got {_show(value)}"
        return value, None
    if f.kind in ("str", "time"):
        if isinstance(value, str):
            return value, None
        return None, f"field {f.name!r}: expected a string, got {_show(value)}"
    if f.kind == "bool":
        if isinstance(value, bool):
            return value, None
        return None, f"field {f.name!r}: expected true or false, got {_show(value)}"
    if f.kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return _int64(f, value)
        return None, f"field {f.name!r}: expected a whole number, got {_show(value)}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return None, f"field {f.name!r}: must be a finite number, got {value}"
        return float(value), None
    return None, f"field {f.name!r}: expected a number, got {_show(value)}"


def _int64(f: Field, value: int) -> tuple[object, str | None]:
    """Whole numbers are 64-bit, as in the SQLite store and every column of a ledger."""
    if -(2**63) <= value < 2**63:
        return value, None
    return None, f"field {f.name!r}: {_show(value)} does not fit in 64 bits"


_Row = tuple[int, dict[str, object]] | Problem


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} appears twice")
        seen[key] = value
    return seen


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _rows_jsonl(data: bytes, src: str) -> Iterator[_Row]:
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
        except (ValueError, RecursionError) as exc:
            yield Problem(lineno, f"not valid JSON: {exc}", src)
            continue
        if not isinstance(obj, dict):
            yield Problem(lineno, f"expected a JSON object, got {type(obj).__name__}", src)
            continue
        yield lineno, obj


def _rows_csv(data: bytes, src: str) -> Iterator[_Row]:
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


def _from_rows(
    src: str, rows: Iterable[_Row], *, from_csv: bool, default_run: str | None
) -> Ledger:
    problems: list[Problem] = []
    unknown_reported: set[str] = set()
    lines: list[int] = []
    columns: dict[str, list[object]] = {f.name: [] for f in FIELDS}
    for item in rows:
        if isinstance(item, Problem):
            problems.append(item)
            continue
        lineno, row = item
        task = row.get("task_id")
        prefix = f"task {task!r}: " if isinstance(task, str) and task else ""
        typed: dict[str, object] = {}
        row_ok = True
        for name, raw in row.items():
            f = FIELD_BY_NAME.get(name)
            if f is None:
                if from_csv and name in unknown_reported:
                    row_ok = False
                    continue
                unknown_reported.add(name)
                hint = _closest(name)
                problems.append(
                    Problem(
                        1 if from_csv else lineno,
                        f"unknown field {name!r}" + (f" (did you mean {hint!r}?)" if hint else ""),
                        src,
                    )
                )
                row_ok = False
                continue
            if raw is None:
                continue
            value, error = _coerce(f, raw, from_csv)
            if error:
                problems.append(Problem(lineno, prefix + error, src))
                row_ok = False
            else:
                typed[name] = value
        missing = [
            f.name for f in FIELDS if f.required and f.name not in typed and row.get(f.name) is None
        ]
        if missing:
            names = ", ".join(repr(m) for m in missing)
            plural = "s" if len(missing) > 1 else ""
            problems.append(Problem(lineno, f"{prefix}missing required field{plural} {names}", src))
            row_ok = False
        if row_ok:
            lines.append(lineno)
            for f in FIELDS:
                columns[f.name].append(typed.get(f.name))
    if problems:
        raise LedgerError(problems)
    values: dict[str, Any] = {}
    codes: dict[str, Any] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for f in FIELDS:
        col = columns[f.name]
        if f.kind in ("str", "time"):
            codes[f.name], labels[f.name] = factorize(col)  # type: ignore[arg-type]
        elif f.required:
            values[f.name] = np.array(col, dtype=DTYPE[f.kind])
        else:
            values[f.name] = np.array([math.nan if v is None else float(v) for v in col])  # type: ignore[arg-type]
    ledger = _finish(src, default_run, np.array(lines, dtype=np.int64), values, codes, labels)
    problems = check_rules(ledger)
    if problems:
        raise LedgerError(problems)
    return ledger


def _closest(name: str) -> str | None:
    import difflib

    match = difflib.get_close_matches(name, list(FIELD_BY_NAME), n=1, cutoff=0.75)
    return match[0] if match else None
