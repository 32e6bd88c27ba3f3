"""The store's writer side: rows validated and converted to SQL parameters ahead of the write.

The harness's workers call :func:`prepare` in parallel (it is pure); the driver hands the
:class:`Prepared` rows to :meth:`LedgerStore.write`, whose transaction then only inserts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trialbook.ledger._fields import FIELDS
from trialbook.ledger._rows import ledger_from_rows, ledger_tuples
from trialbook.ledger._table import Ledger

__all__ = ["COLUMNS", "INSERT", "Prepared", "insert_params", "prepare"]

_ATTEMPT_COLUMNS = [f for f in FIELDS if f.name != "run_id"]
COLUMNS = ["run_id", *(f.name for f in _ATTEMPT_COLUMNS)]
_QUOTED = ", ".join(f'"{c}"' for c in COLUMNS)
INSERT = f"INSERT INTO attempts ({_QUOTED}) VALUES ({', '.join('?' for _ in COLUMNS)})"


def insert_params(ledger: Ledger) -> list[tuple[object, ...]]:
    """The rows of a validated ledger as SQL parameters, in the attempts table's column order."""
    return list(ledger_tuples(ledger, COLUMNS))


@dataclass(frozen=True)
class Prepared:
    """Validated rows, converted for the store ahead of time (by a worker, off the writer's path):
    :meth:`LedgerStore.write` inserts ``params`` as they are and converts nothing again."""

    ledger: Ledger
    """The rows, validated (the store checks them against the rows it holds)."""
    params: list[tuple[object, ...]]
    """The rows as SQL parameters, in the order of :data:`COLUMNS`."""


def prepare(rows: Sequence[Mapping[str, object]], source: str) -> Prepared:
    """Validate rows (every rule of a ledger file) and convert them for :meth:`LedgerStore.write`.
    Pure: any thread may call it. Raises :class:`LedgerError`."""
    ledger = ledger_from_rows(rows, source, appended=True)
    return Prepared(ledger, insert_params(ledger))
