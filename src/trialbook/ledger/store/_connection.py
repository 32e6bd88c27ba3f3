"""The store's SQLite connection: its settings, and the clock that bounds a reader's statements.

A ``.db`` from someone else may hold a view named ``attempts`` whose query never ends (a recursive
view), or a table so large no read of it ends in time: every statement of a read-only connection is
stopped once it runs past :data:`QUERY_SECONDS` (``TRIALBOOK_QUERY_SECONDS`` sets another bound),
and :func:`reading` turns that, and SQLite's other errors, into one line naming the file.
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, Protocol, TypeVar

from trialbook.errors import LedgerError, Problem
from trialbook.ledger.store._records import BadRecord

__all__ = [
    "BUSY_TIMEOUT_MS",
    "QUERY_SECONDS",
    "QUERY_SECONDS_ENV",
    "connect",
    "read_method",
    "reading",
]

BUSY_TIMEOUT_MS = 60_000
QUERY_SECONDS = 600.0
"""How long one statement of a reader may run before it is stopped (a ``.db`` from someone else
may hold a recursive view named ``attempts``); ``TRIALBOOK_QUERY_SECONDS`` sets another bound."""
QUERY_SECONDS_ENV = "TRIALBOOK_QUERY_SECONDS"
_TICKS = 20_000  # SQLite virtual machine steps between two looks at the clock


class _Clock:
    """Stops any one statement of a read-only connection that runs past its bound: SQLite calls
    :meth:`tick` every few thousand steps of a statement, and :meth:`start` as each begins."""

    def __init__(self) -> None:
        text = os.environ.get(QUERY_SECONDS_ENV, "")
        try:
            limit = float(text) if text else QUERY_SECONDS
        except ValueError:
            limit = math.nan
        if not limit > 0:  # NaN too
            raise LedgerError(
                [Problem(0, f"{QUERY_SECONDS_ENV}: expected seconds > 0, got {text!r}")]
            )
        self.limit = limit
        self.began = time.monotonic()
        self.fired = False

    def start(self, _: str) -> None:
        self.began = time.monotonic()

    def tick(self) -> int:
        if time.monotonic() - self.began > self.limit:
            self.fired = True
            return 1  # SQLite stops the statement: sqlite3.OperationalError "interrupted"
        return 0


class _Clocked(sqlite3.Connection):
    """A read-only connection with the clock that bounds its statements."""

    clock: _Clock | None = None


def connect(path: Path, readonly: bool) -> sqlite3.Connection:
    if readonly:
        clock = _Clock()
        uri = path.resolve().as_uri() + "?mode=ro"
        clocked = sqlite3.connect(
            uri,
            uri=True,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            factory=_Clocked,
        )
        clocked.clock = clock
        clocked.set_trace_callback(clock.start)
        clocked.set_progress_handler(clock.tick, _TICKS)
        conn: sqlite3.Connection = clocked
    else:
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    # In WAL mode NORMAL syncs at checkpoints, not at every commit: a commit survives the process
    # being killed (the OS has it), and only a power cut can lose the last commits, never corrupt.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def reading(conn: sqlite3.Connection, path: str) -> Iterator[None]:
    """What goes wrong in a read of the store as one line naming the file: a statement stopped
    by the clock, a runs row the store would not have written, SQLite's own errors."""
    try:
        yield
    except BadRecord as exc:
        raise LedgerError([Problem(0, str(exc), path)]) from None
    except sqlite3.DatabaseError as exc:
        clock = getattr(conn, "clock", None)
        if clock is not None and clock.fired:
            message = (
                f"cannot read the ledger: a query ran past {clock.limit:g} s and was stopped "
                f"(a view or a table another tool made?); {QUERY_SECONDS_ENV} sets the bound"
            )
        else:
            message = f"cannot read the ledger: {exc}"
        raise LedgerError([Problem(0, message, path)]) from None


class _Reader(Protocol):
    @property
    def connection(self) -> sqlite3.Connection: ...

    @property
    def source(self) -> str: ...


_F = TypeVar("_F", bound=Callable[..., Any])


def read_method(method: _F) -> _F:
    """A method of a reader of the store (one with ``connection`` and ``source``) whose SQLite
    errors, a statement stopped by the clock among them, and bad runs rows are one line naming
    the file (:func:`reading`)."""

    @wraps(method)
    def wrapper(self: _Reader, *args: Any, **kwargs: Any) -> Any:
        with reading(self.connection, self.source):
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
