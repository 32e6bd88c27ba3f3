"""Whether a ledger file holds only the schema its migrations made: a ``.db`` handed over by someone
else may carry triggers, views or indexes of its own (a BEFORE INSERT trigger that stores failed
rows as passed), and a ledger opened for writing refuses any it did not create (docs/ledger.md)."""

from __future__ import annotations

import sqlite3
from functools import cache

from trialbook.ledger.store._schema import MIGRATIONS, statements

__all__ = ["foreign_objects", "own_schema", "refusal"]


# What sqlite_master lists of an object: its type, name, table and SQL (None for SQLite's own
# autoindexes). SQLite's internal objects (sqlite_sequence, sqlite_stat1, autoindexes) are left out.
_OBJECTS = (
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' "
    "ESCAPE '\\' ORDER BY type, name"
)
_Object = tuple[str, str, str, str | None]


def _fresh(version: int) -> sqlite3.Connection:
    """A database in memory holding what the migrations up to ``version`` create."""
    fresh = sqlite3.connect(":memory:")
    for number, _, script in MIGRATIONS:
        if number > version:
            break
        for statement in statements(script):
            fresh.execute(statement)
    return fresh


@cache
def _migrated(version: int) -> frozenset[_Object]:
    """Every schema object the migrations up to ``version`` create, in a fresh database."""
    fresh = _fresh(version)
    try:
        return frozenset(fresh.execute(_OBJECTS).fetchall())
    finally:
        fresh.close()


@cache
def _migrated_attempts(version: int) -> tuple[str, ...]:
    """The attempts table's SQL as the migrations up to ``version`` create it."""
    fresh = _fresh(version)
    try:
        return tuple(_attempts_sql(fresh))
    finally:
        fresh.close()


def foreign_objects(conn: sqlite3.Connection, version: int) -> list[str]:
    """The schema objects of the open file that the migrations up to ``version`` did not create
    as they stand (a trigger, a view, an index or a table added or changed by another hand), and
    those they create that the file lacks, each in words ("trigger 'x'", "no trigger 'y'").

    A trigger runs inside our own INSERT (a BEFORE INSERT trigger may rewrite a failed row as a
    pass), a view or an index can stand in for or shadow a table: a ledger is written to only
    when its schema is exactly ours."""
    stored = set(conn.execute(_OBJECTS).fetchall())
    expected = _migrated(version)
    by_name = {(t, n): sql for t, n, _, sql in expected}
    out = []
    for kind, name, _, _ in sorted(stored - expected, key=lambda o: (o[0], o[1])):
        changed = " changed" if (kind, name) in by_name else ""
        out.append(f"{kind} {name!r}{changed}")
    present = {(t, n) for t, n, _, _ in stored}
    out += [f"no {t} {n!r}" for t, n, _, _ in sorted(expected) if (t, n) not in present]
    return out


def refusal(found: list[str], version: int) -> str:
    """Why a ledger holding the objects ``found`` (:func:`foreign_objects`) is not written to:
    a trigger, view or index someone else added (a BEFORE INSERT trigger may store a failed row as
    passed) is refused by name, before anything is written."""
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    what = (
        "not a trialbook ledger"
        if version == 0
        else f"its schema is not what trialbook's migrations create (schema {version})"
    )
    return f"refused for writing: {what}: {shown}"


def own_schema(conn: sqlite3.Connection, version: int) -> bool:
    """Whether the attempts table is exactly the one the migrations up to ``version`` create, so
    that its CHECK, NOT NULL and UNIQUE constraints held every row written to it, whoever wrote it
    (a table another tool created may hold anything)."""
    expected = _migrated_attempts(version)  # built once per version, not on every read
    return bool(expected) and tuple(_attempts_sql(conn)) == expected


def _attempts_sql(conn: sqlite3.Connection) -> list[str]:
    """The SQL of the attempts table and of its indexes (schema 9 keeps its unique key in one)."""
    return [
        str(sql)
        for (sql,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'attempts' AND type IN "
            "('table', 'index') AND sql IS NOT NULL ORDER BY type DESC, name"
        )
    ]
