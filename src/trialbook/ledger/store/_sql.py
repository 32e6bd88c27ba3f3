"""The SQL the tallies of the store are made of: the row-level doubts and the packed aggregates."""

from __future__ import annotations

import sqlite3

from trialbook.ledger._fields import FIELDS, PROTOCOLS, STATUSES, Field

__all__ = [
    "COUNTED",
    "PACKED",
    "RETRY_BROKEN",
    "RUN_CONSTANT",
    "SUMS",
    "TASK_CONSTANT",
    "WIDTH",
    "columns_in",
    "literal",
    "quoted",
    "row_doubts",
    "type_doubts",
    "unique_key",
]

_MAX_FLOAT = "1.7976931348623157e308"
_EXACT = str(2**53)
_TYPES = {
    "str": "'text'",
    "time": "'text'",
    "int": "'integer'",
    "bool": "'integer'",
    "float": "'real', 'integer'",
}
# a timestamp the json-free precise check (datetime.fromisoformat, with a UTC offset) certainly
# accepts: YYYY-MM-DDTHH:MM:SS, no fraction or 3 or 6 digits of one, then Z or +HH:MM / -HH:MM.
_D = "[0-9]"
_STAMP = f"{_D * 4}-{_D * 2}-{_D * 2}T{_D * 2}:{_D * 2}:{_D * 2}"
_OFFSET = f"[+-]{_D * 2}:{_D * 2}"


def quoted(name: str) -> str:
    """An SQL identifier, quoted: a ``"`` inside it doubled, so that a column name another tool
    chose (``x", (SELECT ...) AS "y``) stays one name and is never spliced into the query."""
    return '"' + name.replace('"', '""') + '"'


def _stamp_ok(col: str) -> str:
    """SQL true when ``col`` is a timestamp of the strict form above with a real date and time."""
    c = quoted(col)
    shape = " OR ".join(
        f"{c} GLOB '{_STAMP}{frac}{tz}'"
        for frac in ("", f".{_D * 3}", f".{_D * 6}")
        for tz in ("Z", _OFFSET)
    )
    return (
        f"(({shape}) AND substr({c}, 1, 4) <> '0000'"
        f" AND strftime('%Y-%m-%dT%H:%M:%S', substr({c}, 1, 19)) = substr({c}, 1, 19)"
        f" AND (substr({c}, -1) = 'Z' OR (CAST(substr({c}, -5, 2) AS INTEGER) < 24"
        f" AND CAST(substr({c}, -2) AS INTEGER) < 60)))"
    )


COUNTED = (
    'NOT EXISTS (SELECT 1 FROM attempts b WHERE b."run_id" IS attempts."run_id" '
    'AND b."task_id" = attempts."task_id" AND b."attempt_index" = attempts."attempt_index" '
    'AND coalesce(b."retry", 0) > coalesce(attempts."retry", 0))'
)
"""SQL true for a row that counts: no row of a higher retry of its attempt follows it."""
RETRY_BROKEN = (
    'coalesce("retry", 0) > 0 AND NOT EXISTS (SELECT 1 FROM attempts b '
    'WHERE b."run_id" IS attempts."run_id" AND b."task_id" = attempts."task_id" '
    'AND b."attempt_index" = attempts."attempt_index" '
    'AND coalesce(b."retry", 0) = attempts."retry" - 1 AND b."status" IS \'infra_error\')'
)
"""SQL true for a re-run that follows no infra_error row of the retry before it (ledger._rules)."""


def row_doubts(present: set[str], trusted: bool) -> str:
    """SQL true (1) for a row that breaks, or may break, a row-level rule."""
    doubts: list[str] = []
    for f in FIELDS:
        if f.name not in present:
            continue
        c = quoted(f.name)
        if not trusted:
            doubts.extend(_type_doubts(f))
        # the CHECKs of the store's own table hold these at >= 0 (score at <= 1): no abs() there
        nonnegative = trusted and f.low is not None
        if f.kind == "float" and not (trusted and f.high is not None):
            doubts.append(f"{c} > {_MAX_FLOAT}" if nonnegative else f"abs({c}) > {_MAX_FLOAT}")
        if f.kind == "int" and not f.required:
            doubts.append(f"{c} > {_EXACT}" if nonnegative else f"abs({c}) > {_EXACT}")
    gat = '"graded_after_timeout" IS 1' if "graded_after_timeout" in present else "0"
    doubts += [
        f'"passed" AND "timed_out" AND NOT ({gat})',
        '"attempt_index" >= "k_budget"',
        "trim(\"task_id\", ' ' || char(9, 10, 11, 12, 13)) = ''",
    ]
    if "status" in present:
        known = ", ".join(f"'{s}'" for s in STATUSES)
        doubts.append(
            f'"status" IS NOT NULL AND ("status" NOT IN ({known})'
            ' OR "passed" <> ("status" = \'passed\')'
            ' OR ("timed_out" <> ("status" = \'timed_out\')'
            f' AND NOT ("passed" AND "timed_out" AND {gat})))'
        )
    if "protocol" in present:
        known_protocols = ", ".join(f"'{p}'" for p in PROTOCOLS)
        doubts.append(f'"protocol" IS NOT NULL AND "protocol" NOT IN ({known_protocols})')
    for name in ("started_at", "finished_at"):
        if name in present:
            doubts.append(f"{quoted(name)} IS NOT NULL AND coalesce({_stamp_ok(name)}, 0) = 0")
    if {"started_at", "finished_at"} <= present:
        # an instant within a millisecond of the start is left to the precise check
        doubts.append('coalesce(julianday("finished_at") < julianday("started_at") + 1e-8, 0)')
    if "checks" in present:  # its structure is the rules' to check, as in JSONL
        doubts.append('"checks" IS NOT NULL')
    if "task_outcome" in present:  # a task outcome false never passes
        doubts.append('"passed" AND "task_outcome" IS 0')
    if "not_recorded" in present:
        doubts.append('"not_recorded" IS NOT NULL')  # read the precise way (as JSONL is)
    if "lost" in present:  # a lost attempt is an infrastructure error (ledger._rules)
        doubts.append('"lost" IS 1 AND "status" IS NOT \'infra_error\'')
    return " OR ".join(f"coalesce({d}, 0)" for d in doubts)  # each is non-NULL when it flags


def type_doubts(present: set[str]) -> str:
    """SQL true (1) for a row holding a value its column's CHECK forbids (a type, a range, a
    missing required value not named in ``not_recorded``): a writer that set
    ``PRAGMA ignore_check_constraints`` may have stored one in a table of the store's own schema."""
    doubts = [d for f in FIELDS if f.name in present for d in _type_doubts(f)]
    return " OR ".join(f"coalesce({d}, 0)" for d in doubts)


def _type_doubts(f: Field) -> list[str]:
    c = quoted(f.name)
    out = [f"typeof({c}) NOT IN ({_TYPES[f.kind]}, 'null')"]
    if f.required:
        out.append(f"{c} IS NULL")
    if f.kind == "bool":
        out.append(f"{c} NOT IN (0, 1)")
    if f.low is not None:
        out.append(f"{c} <= {f.low}" if f.low_open else f"{c} < {f.low}")
    if f.high is not None:
        out.append(f"{c} > {f.high}")
    return out


def unique_key(conn: sqlite3.Connection) -> bool:
    """Whether a unique index forbids two rows of one (run_id, task_id, attempt_index)."""
    key = {"run_id", "task_id", "attempt_index"}
    for index in conn.execute("PRAGMA index_list(attempts)").fetchall():
        if index[2] and not (len(index) > 4 and index[4]):  # unique, not partial
            cols = {r[2] for r in conn.execute(f"PRAGMA index_info({quoted(index[1])})")}
            if cols and cols <= key:
                return True
    return False


# Per-task counts are at most k_budget (attempt indices are distinct and below it), so below
# 2**12 five of them travel packed in one 64-bit sum: one aggregate instead of five.
WIDTH = 12
PACKED = {
    "flags": (
        ("passes", '"passed"'),
        ("timeouts", '"timed_out"'),
        ("infra", "(\"status\" IS 'infra_error')"),
        ("after_timeout", '("passed" AND "timed_out")'),
        ("leak", '"oracle_leak"'),
    ),
    "recorded": (
        ("count_tokens_in", '("tokens_in" IS NOT NULL)'),
        ("count_tokens_out", '("tokens_out" IS NOT NULL)'),
        ("count_cost", '("cost" IS NOT NULL)'),
        ("count_score", '("score" IS NOT NULL)'),
        ("count_tool_calls", '("tool_calls" IS NOT NULL)'),
    ),
    "more": (
        ("count_cache_hit", '("cache_hit" IS NOT NULL)'),
        ("sum_cache_hit", 'coalesce("cache_hit", 0)'),
        ("count_stratum", '("stratum" IS NOT NULL)'),
        ("count_weight", '("weight" IS NOT NULL)'),
    ),
}
SUMS = ("helper_calls", "tool_calls", "tokens_in", "tokens_out")
RUN_CONSTANT = ("k_budget", "system", "dataset_id", "graded_after_timeout", "protocol")
TASK_CONSTANT = ("stratum", "weight")


def columns_in(expr: str) -> list[str]:
    """The quoted column names in an SQL expression."""
    return expr.split('"')[1::2]


def literal(value: object) -> str:
    """A value of a row as an SQL literal (NULL, a number, or a quoted text)."""
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"
