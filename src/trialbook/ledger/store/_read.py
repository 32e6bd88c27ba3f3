"""The precise read of a store: every stored value as a Python value, every problem named.

What :meth:`LedgerStore.read` does, and what the tallies fall back on when their SQL is in doubt. A
table whose schema is the store's own holds every value to its field's type by its CHECK
constraints; one another tool created may hold anything, so there each value is checked as the JSONL
reader checks it (a text ``'yes'`` in ``passed`` is "expected true or false, got \\"yes\\""), a column
the ledger does not know is an unknown field, and a missing required value is missing. Rows with such
a problem are left out of the table's rules, as a JSONL reader leaves them out, and every problem is
reported in one pass.
"""

from __future__ import annotations

import difflib
import math
import sqlite3
from collections.abc import Mapping
from typing import Any

import numpy as np

from trialbook.errors import LedgerError, Problem
from trialbook.ledger._fields import EXACT_INT, FIELD_BY_NAME, FIELDS, NOT_RECORDABLE, Field
from trialbook.ledger._provenance import Completion
from trialbook.ledger._rows import show, unrecorded_names
from trialbook.ledger._rules import check_rules
from trialbook.ledger._table import DTYPE, Ledger, factorize, unrecorded
from trialbook.ledger.store._own_schema import own_schema
from trialbook.ledger.store._records import stored_provenance
from trialbook.ledger.store._sql import quoted, type_doubts

__all__ = ["read_attempts"]


def _shown(value: object) -> str:
    return show(value) if not isinstance(value, bytes) else repr(value)


def _type_error(f: Field, value: object) -> str | None:
    """The JSONL reader's message for a stored value of the wrong type, or None."""
    if f.kind in ("str", "time"):
        ok, expected = isinstance(value, str), "a string"
    elif f.kind == "bool":
        ok, expected = isinstance(value, int) and value in (0, 1), "true or false"
    elif f.kind == "int":
        ok, expected = isinstance(value, int), "a whole number"
    else:
        ok, expected = isinstance(value, int | float), "a number"
    return None if ok else f"field {f.name!r}: expected {expected}, got {_shown(value)}"


def read_attempts(
    conn: sqlite3.Connection,
    src: str,
    run_id: str | None,
    completion: Mapping[str, Completion],
    version: int,
) -> Ledger:
    """The attempts (of one run, or all) as a validated :class:`Ledger`; line = row id.

    Only the columns some row recorded are fetched (one counting query finds them).
    """
    where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
    # a store of an older schema, read without migrating, lacks the newer columns: not recorded
    present = [r[1] for r in conn.execute("PRAGMA table_info(attempts)")]
    known = [f for f in FIELDS if f.name in present]
    others = [c for c in present if c not in FIELD_BY_NAME and c != "id"]
    # the table's CHECKs hold each value to its type, unless a writer turned them off
    # (PRAGMA ignore_check_constraints): one SQL pass tells, else each value is checked here
    trusted = (
        own_schema(conn, version)
        and not conn.execute(
            f"SELECT 1 FROM attempts {where or 'WHERE 1'} AND ({type_doubts(set(present))}) LIMIT 1",
            args,
        ).fetchone()
    )
    counts = conn.execute(
        "SELECT "
        + ", ".join(f"count({quoted(name)})" for name in [f.name for f in known] + others)
        + f" FROM attempts {where}",
        args,
    ).fetchone()
    fetched = [f for f, n in zip(known, counts, strict=False) if n or f.required]
    unknown = [c for c, n in zip(others, counts[len(known) :], strict=True) if n]
    names = [f.name for f in fetched] + unknown
    listed = ", ".join(quoted(n) for n in names)
    rows = conn.execute(f"SELECT id, {listed} FROM attempts {where} ORDER BY id", args).fetchall()
    by_column = list(zip(*rows, strict=True)) if rows else [()] * (len(names) + 1)
    del rows
    ids = np.array(by_column[0], dtype=np.int64)
    got: dict[str, Any] = dict(zip(names, by_column[1:], strict=True))
    problems, bad = _row_problems(got, fetched, unknown, ids, src, trusted)
    if bad:
        keep = np.array([i not in bad for i in range(ids.size)], dtype=bool)
        ids = ids[keep]
        got = {
            k: tuple(v for v, ok in zip(col, keep.tolist(), strict=True) if ok)
            for k, col in got.items()
        }
    values: dict[str, Any] = {}
    codes: dict[str, Any] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for f in FIELDS:
        col = got.get(f.name)
        if f.kind in ("str", "time"):
            if col is None:
                codes[f.name], labels[f.name] = unrecorded(ids.size, -1), ()
            else:
                codes[f.name], labels[f.name] = factorize(col)
        elif col is None:
            values[f.name] = unrecorded(ids.size, math.nan)
        else:
            if f.required and f.name in NOT_RECORDABLE:
                # NULL: not recorded by the source (the table's CHECK holds not_recorded to it)
                fill = math.nan if f.kind == "float" else 0
                col = tuple(fill if v is None else v for v in col)
            # None (not recorded) becomes NaN in a float column; required ones hold none
            values[f.name] = np.array(col, dtype=DTYPE[f.kind] if f.required else np.float64)
    ledger = Ledger(
        source=src,
        lines=ids,
        values=values,
        codes=codes,
        labels=labels,
        provenance=stored_provenance(conn),
        completion=completion,
    )
    if ids.size or not problems:
        problems += check_rules(ledger)
    if problems:
        raise LedgerError(problems)
    return ledger


def _row_problems(
    got: dict[str, Any],
    fetched: list[Field],
    unknown: list[str],
    ids: Any,
    src: str,
    trusted: bool,
) -> tuple[list[Problem], set[int]]:
    """What the JSONL reader would say of each row before the table's rules, and those rows."""
    problems: list[Problem] = []
    bad: set[int] = set()
    tasks = got.get("task_id", ())

    def prefix(i: int) -> str:
        task = tasks[i] if i < len(tasks) else None
        return f"task {task!r}: " if isinstance(task, str) and task else ""

    for name in unknown:
        match = difflib.get_close_matches(name, list(FIELD_BY_NAME), n=1, cutoff=0.75)
        hint = f" (did you mean {match[0]!r}?)" if match else ""
        for i in [i for i, v in enumerate(got[name]) if v is not None]:
            problems.append(Problem(int(ids[i]), f"unknown field {name!r}{hint}", src))
            bad.add(i)
    listed_rows = {
        i: unrecorded_names(v) for i, v in enumerate(got.get("not_recorded", ())) if v is not None
    }
    missing: dict[int, list[str]] = {}
    for f in fetched:
        col = got[f.name]
        if not trusted:
            for i, v in enumerate(col):
                if v is None:
                    if f.required and f.name not in listed_rows.get(i, set()):
                        missing.setdefault(i, []).append(f.name)
                elif (error := _type_error(f, v)) is not None:
                    problems.append(Problem(int(ids[i]), prefix(i) + error, src))
                    bad.add(i)
        if f.kind == "int" and not f.required:
            for i, v in enumerate(col):
                if isinstance(v, int) and abs(v) > EXACT_INT and i not in bad:
                    problems.append(
                        Problem(
                            int(ids[i]),
                            prefix(i)
                            + (
                                f"field {f.name!r}: {v} is beyond 2**53, the largest an optional whole"
                                " number keeps exactly"
                            ),
                            src,
                        )
                    )
                    bad.add(i)
    for i, listed in listed_rows.items():
        for name in sorted(n for n in listed if n in got and got[n][i] is not None):
            problems.append(
                Problem(
                    int(ids[i]),
                    prefix(i)
                    + (f"contradiction: field {name!r} has a value but 'not_recorded' names it"),
                    src,
                )
            )
            bad.add(i)
    for i, names in missing.items():
        shown = ", ".join(repr(m) for m in names)
        plural = "s" if len(names) > 1 else ""
        problems.append(
            Problem(int(ids[i]), f"{prefix(i)}missing required field{plural} {shown}", src)
        )
        bad.add(i)
    return problems, bad
