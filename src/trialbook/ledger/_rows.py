"""Row dicts <-> :class:`Ledger`: the only place a row of Python values becomes columns, and back.

:func:`ledger_from_rows` checks each value against its field (JSON types: ``1`` is not a boolean,
NaN and infinity are refused), every reader's precise path and the store's one-row writes go through
it, and all of them end in the same :func:`check_rules`. :func:`ledger_rows` and
:func:`ledger_tuples` give the rows back as Python values (what the writers and the store write).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

import numpy as np

from trialbook.errors import LedgerError, Problem
from trialbook.ledger._fields import EXACT_INT, FIELD_BY_NAME, FIELDS, NOT_RECORDABLE, Field
from trialbook.ledger._rules import check_rules
from trialbook.ledger._table import DTYPE, Ledger, factorize

__all__ = [
    "Row",
    "build_ledger",
    "coerce",
    "from_rows",
    "inexact",
    "ledger_from_rows",
    "ledger_rows",
    "ledger_tuples",
    "show",
    "unrecorded_names",
]

_TRUE = {"true", "1"}
_FALSE = {"false", "0"}

Row = tuple[int, dict[str, object]] | Problem
"""A row a reader found (its line and its raw values), or the problem that stopped it."""


def ledger_from_rows(
    rows: Iterable[Mapping[str, object]],
    source: str,
    default_run: str | None = None,
    *,
    appended: bool = False,
) -> Ledger:
    """Validate rows of Python values (JSON types: ``1`` is not a boolean) into a :class:`Ledger`.

    NaN and infinity are refused in every number field (a NaN would read as "not recorded").
    Row ``i`` is reported as line ``i + 1`` of ``source``. ``appended``: the rows are a batch for
    a store whose rows they join, so a re-run's earlier retry may be stored rather than here (the
    store checks that rule across both). Raises :class:`LedgerError`.
    """
    return from_rows(
        source,
        ((i, dict(row)) for i, row in enumerate(rows, 1)),
        from_csv=False,
        default_run=default_run,
        appended=appended,
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
        out_required = cast(list[Any], col.astype(DTYPE[f.kind], copy=False).tolist())
        if f.name in NOT_RECORDABLE:
            lacking = ledger.unrecorded_mask(f.name)
            if lacking.any():
                for i in np.flatnonzero(lacking).tolist():
                    out_required[i] = None
        return out_required
    if col.size > 1 and col.strides == (0,):
        col = col[:1]  # an unrecorded column (see `unrecorded`): one value, repeated
    values = col.tolist()  # floats; NaN (v != v) is "not recorded"
    if f.kind == "float":
        out = [None if v != v else v for v in values]
    else:
        kind = int if f.kind == "int" else bool
        out = [None if v != v else kind(v) for v in values]
    return out if len(out) == len(ledger) else out * len(ledger)


def build_ledger(
    source: str,
    default_run: str | None,
    lines: Any,
    values: dict[str, Any],
    codes: dict[str, Any],
    labels: dict[str, tuple[str, ...]],
) -> Ledger:
    """A Ledger of read columns; a file without run_id is one run, named ``default_run``."""
    run = codes["run_id"]
    if default_run is not None and run.size and (run < 0).all():
        codes["run_id"] = np.zeros_like(run)
        labels["run_id"] = (default_run,)
    return Ledger(
        source=source, lines=lines.astype(np.int64), values=values, codes=codes, labels=labels
    )


def show(value: object) -> str:
    """A value as JSON, cut to 40 characters, for messages."""
    text = (
        json.dumps(value) if not isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    )
    return text if len(text) <= 40 else text[:37] + "..."


def coerce(f: Field, value: object, from_csv: bool) -> tuple[object, str | None]:
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
                    return None, f"field {f.name!r}: must be a finite number, got {show(value)}"
                return number, None
        except ValueError:
            kind = "a whole number" if f.kind == "int" else "a number"
            return None, f"field {f.name!r}: expected {kind}, got {show(value)}"
        if f.kind == "bool":
            low = text.lower()
            if low in _TRUE or low in _FALSE:
                return low in _TRUE, None
            return None, f"field {f.name!r}: expected true or false, got {show(value)}"
        return value, None
    if f.kind in ("str", "time"):
        if isinstance(value, str):
            return value, None
        return None, f"field {f.name!r}: expected a string, got {show(value)}"
    if f.kind == "bool":
        if isinstance(value, bool):
            return value, None
        return None, f"field {f.name!r}: expected true or false, got {show(value)}"
    if f.kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return _int64(f, value)
        return None, f"field {f.name!r}: expected a whole number, got {show(value)}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return None, f"field {f.name!r}: must be a finite number, got {value}"
        return float(value), None
    return None, f"field {f.name!r}: expected a number, got {show(value)}"


def _int64(f: Field, value: int) -> tuple[object, str | None]:
    """Whole numbers are 64-bit, as in the SQLite store and every column of a ledger; an optional
    one at most 2**53 in magnitude, which its float column holds exactly (never rounded)."""
    if not f.required and not -EXACT_INT <= value <= EXACT_INT:
        return None, (
            f"field {f.name!r}: {show(value)} is beyond 2**53, the largest an optional whole"
            " number keeps exactly"
        )
    if -(2**63) <= value < 2**63:
        return value, None
    return None, f"field {f.name!r}: {show(value)} does not fit in 64 bits"


def from_rows(
    src: str,
    rows: Iterable[Row],
    *,
    from_csv: bool,
    default_run: str | None,
    appended: bool = False,
) -> Ledger:
    """The precise path: every row coerced field by field, every problem named with its line.

    ``from_csv``: the values are CSV cells (text to parse) and an unknown column is reported once,
    on the header line. Raises :class:`LedgerError` listing every problem.
    """
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
            value, error = coerce(f, raw, from_csv)
            if error:
                problems.append(Problem(lineno, prefix + error, src))
                row_ok = False
            else:
                typed[name] = value
        listed = unrecorded_names(typed.get("not_recorded"))
        for name in sorted(listed & set(typed)):
            problems.append(
                Problem(
                    lineno,
                    f"{prefix}contradiction: field {name!r} has a value but 'not_recorded' names it",
                    src,
                )
            )
            row_ok = False
        missing = [
            f.name
            for f in FIELDS
            if f.required
            and f.name not in typed
            and row.get(f.name) is None
            and f.name not in listed
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
    if problems and not lines:
        raise LedgerError(problems)
    values: dict[str, Any] = {}
    codes: dict[str, Any] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for f in FIELDS:
        col = columns[f.name]
        if f.kind in ("str", "time"):
            codes[f.name], labels[f.name] = factorize(col)  # type: ignore[arg-type]
        elif f.required:
            if f.name in NOT_RECORDABLE:  # not recorded by the source: a neutral fill, masked
                fill = math.nan if f.kind == "float" else 0
                col = [fill if v is None else v for v in col]
            values[f.name] = np.array(col, dtype=DTYPE[f.kind])
        else:
            values[f.name] = np.array([math.nan if v is None else float(v) for v in col])  # type: ignore[arg-type]
    ledger = build_ledger(src, default_run, np.array(lines, dtype=np.int64), values, codes, labels)
    # the rows that were well typed are checked by the table's rules too, so that one pass names
    # every problem (a type error on one row and a contradiction on another)
    problems += check_rules(ledger, appended=appended)
    if problems:
        raise LedgerError(problems)
    return ledger


def unrecorded_names(value: object) -> set[str]:
    """The not-recordable required fields a ``not_recorded`` value names (others are ignored here;
    :func:`check_rules` names them)."""
    if not isinstance(value, str):
        return set()
    return {part.strip() for part in value.split(",")} & set(NOT_RECORDABLE)


def _closest(name: str) -> str | None:
    import difflib

    match = difflib.get_close_matches(name, list(FIELD_BY_NAME), n=1, cutoff=0.75)
    return match[0] if match else None


def inexact(name: str, col: Sequence[Any], ids: Any, source: str) -> list[Problem]:
    """The rows of a stored optional whole-number column beyond 2**53 (another tool wrote them):
    a ledger would round them, so they are refused, naming the rows (the first 20)."""
    bad = [i for i, v in enumerate(col) if isinstance(v, int) and abs(v) > EXACT_INT]
    return [
        Problem(
            int(ids[i]),
            f"field {name!r}: {col[i]} is beyond 2**53, the largest an optional whole number"
            " keeps exactly",
            source,
        )
        for i in bad[:20]
    ]
