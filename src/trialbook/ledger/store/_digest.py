"""Whether a run's kept columns are its rows' own: one digest, computed by SQLite over the rows and by
numpy over the columns read from the blobs, compared (docs/ledger.md, "The kept columns").

A blob is a copy the store makes of the rows it writes; a ``.db`` from someone else may hold the blob
of another run with the same row ids (the red team's: ``score`` said 100% while ``runs``, ``export``
and SQL said 0%). Nothing kept beside a blob can vouch for it (whoever wrote the file could have
written that too), so the digest is taken from both sides at read time: per row and field, the
field's value (a number scaled to an integer, a text by its code or its shape) times a weight drawn
from the row id, modulo a prime, summed. A value that differs on any row, in any field, changes the
sum (unless chosen to collide: the digest is a check against copies, not a MAC).

Text fields of up to :data:`_EXACT_LABELS` distinct values are compared exactly (their codes); a
text of more values by its byte length and its first and last characters; one of more than
:data:`_SHAPED_LABELS` (timestamps, free text) is not compared: no figure is made of it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from trialbook.errors import LedgerError, Problem
from trialbook.ledger._fields import FIELDS, NOT_RECORDABLE
from trialbook.ledger._table import Ledger
from trialbook.ledger.store._sql import literal, quoted

__all__ = ["columns_are_the_rows", "vouch_for"]

_P = 2_147_483_647  # 2**31 - 1: every product below stays under 2**62
_FRACTION = 4503599627370496.0  # 2**52: the bits of a float's fraction, as a whole number
_CLIP = 1e12
_EXACT_LABELS = 64
_SHAPED_LABELS = 65_536


def _shape(text: str) -> int:
    raw = text.encode()
    first, last = (ord(text[0]), ord(text[-1])) if text else (0, 0)
    return (len(raw) * 1_000_003 + first * 1009 + last) % _P + 1


def _terms(ledger: Ledger, present: set[str]) -> tuple[list[str], np.ndarray[Any, Any]]:
    """The SQL of each row's value per field, and the same values from the columns (int64)."""
    sql: list[str] = []
    values: list[np.ndarray[Any, Any]] = []
    n = len(ledger)
    for f in FIELDS:
        if f.name not in present:
            continue
        c = quoted(f.name)
        if f.kind in ("str", "time"):
            labels = ledger.labels[f.name]
            codes = np.asarray(ledger.codes[f.name], dtype=np.int64)
            if len(labels) <= _EXACT_LABELS:
                cases = " ".join(
                    f"WHEN {c} = {literal(x)} THEN {i + 1}" for i, x in enumerate(labels)
                )
                sql.append(f"CASE WHEN {c} IS NULL THEN 0 {cases} ELSE -1 END")
                values.append(codes + 1)
            elif len(labels) <= _SHAPED_LABELS:
                sql.append(
                    f"coalesce((length(CAST({c} AS BLOB)) * 1000003 + coalesce(unicode({c}), 0)"
                    f" * 1009 + coalesce(unicode(substr({c}, -1)), 0)) % {_P} + 1, 0)"
                )
                shapes = np.array([_shape(x) for x in labels] + [0], dtype=np.int64)
                values.append(shapes[codes])  # code -1 (not recorded) picks the trailing 0
            continue
        col = np.asarray(ledger.values[f.name])
        recorded = ~np.isnan(col) if col.dtype.kind == "f" else np.ones(n, dtype=bool)
        if f.name in NOT_RECORDABLE:  # NULL in the table where not_recorded names it
            recorded &= ~ledger.unrecorded_mask(f.name)
        if f.kind == "float":
            # the whole part and 52 bits of the fraction, each exact in both (clipped to +-1e12)
            x = f"min(max({c}, -{_CLIP:.0f}.0), {_CLIP:.0f}.0)"
            sql.append(
                f"coalesce(((CAST({x} AS INTEGER) % {_P}) * 1000003 + CAST(({x} - CAST({x} AS "
                f"INTEGER)) * {_FRACTION} AS INTEGER)) % {_P} + {_P}, 0)"
            )
            clipped = np.clip(np.where(recorded, col, 0.0), -_CLIP, _CLIP)
            whole = np.trunc(clipped)
            scaled = np.fmod(whole.astype(np.int64), _P) * 1000003 + (
                (clipped - whole) * _FRACTION
            ).astype(np.int64)
        else:  # whole numbers and flags (optional ones are float64 with NaN in a Ledger)
            sql.append(f"coalesce({c} % {_P} + {_P}, 0)")
            scaled = np.where(recorded, col, 0).astype(np.int64)
        values.append(np.where(recorded, np.fmod(scaled, _P) + _P, 0))
    return sql, np.stack(values) if values else np.zeros((0, n), dtype=np.int64)


def columns_are_the_rows(
    conn: sqlite3.Connection, ledger: Ledger, present: set[str], where: str, args: tuple[Any, ...]
) -> bool:
    """Whether the columns ``ledger`` (read from a run's blobs; line = row id) hold the values of
    the rows ``where`` selects, by the digest above."""
    sql, values = _terms(ledger, present)
    ids = np.asarray(ledger.lines, dtype=np.int64) % _P
    weights = [(ids + 7919 * (j + 1)) % _P for j in range(len(sql))]
    expected = sum(int(((w * v) % _P).sum()) for w, v in zip(weights, values, strict=True))
    parts = [f"((id % {_P} + {7919 * (j + 1)}) % {_P}) * ({s}) % {_P}" for j, s in enumerate(sql)]
    row = conn.execute(
        f"SELECT count(*), coalesce(sum({' + '.join(parts) or '0'}), 0) FROM attempts "
        f"WHERE {where}",
        args,
    ).fetchone()
    return bool(int(row[0]) == len(ledger) and int(row[1]) == expected)


def vouch_for(
    conn: sqlite3.Connection, ledger: Ledger, present: set[str], run_id: str, source: str
) -> None:
    """Refuse, in one line, a run whose kept columns are not its rows' own."""
    if not columns_are_the_rows(conn, ledger, present, '"run_id" = ?', (run_id,)):
        raise LedgerError(
            [
                Problem(
                    0,
                    f"run {run_id!r}: its kept columns (attempt_columns) do not hold its rows' "
                    "values: the file was altered; not scored (export, runs and SQL read the rows)",
                    source,
                )
            ]
        )
