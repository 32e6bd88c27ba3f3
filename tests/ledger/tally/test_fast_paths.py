"""The shortcuts of the .db fast path (issue 17) against the computations they replace, kept here
verbatim: the same answers, to the bit, on random inputs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from tests.conftest import base_row
from trialbook import report as render
from trialbook.ledger import Ledger, LedgerStore, RunRecord, import_files, read_ledger
from trialbook.ledger._rules import _repeats, retry_of
from trialbook.ledger.store import StoreTallies
from trialbook.ledger.store._columns import _alone, covered
from trialbook.ledger.store._queries import completions


def _old_distinct(codes: NDArray[np.int64], labels: tuple[str, ...]) -> tuple[str, ...]:
    present, first = np.unique(codes, return_index=True)
    ordered = present[np.argsort(first)]
    return tuple(labels[c] for c in ordered.tolist() if c >= 0)


def _old_repeats(key: NDArray[np.int64]) -> bool:
    if key.size < 2:
        return False
    if int(key.max()) < 8 * key.size + 1024:
        return bool(np.bincount(key).max() > 1)
    ordered = np.sort(key)
    return bool((ordered[1:] == ordered[:-1]).any())


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(-1, n - 1))))
)
def test_distinct_is_the_sorting_one(case: tuple[int, list[int]]) -> None:
    n, values = case
    labels = tuple(f"label-{i}" for i in range(n))
    codes = np.array(values, dtype=np.int64)
    fake: Any = SimpleNamespace(
        codes={"stratum": codes}, labels={"stratum": labels}, _field=lambda name, text: name
    )
    assert Ledger.distinct(fake, "stratum") == _old_distinct(codes, labels)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 10**12), max_size=60), st.booleans(), st.booleans())
def test_repeats_is_the_counting_one(values: list[int], ordered: bool, small: bool) -> None:
    key = np.array(values, dtype=np.int64)
    if small:
        key %= 50
    if ordered:
        key = np.sort(key)
    assert _repeats(key) == _old_repeats(key)


def _rows(run: str, tasks: int = 3, k: int = 2) -> list[dict[str, Any]]:
    return [
        base_row(f"t{t}", a, passed=(t + a) % 2 == 0, k=k, run_id=run)
        for t in range(tasks)
        for a in range(k)
    ]


def _import(db: Path, tmp: Path, run: str) -> None:
    src = tmp / f"{run}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in _rows(run)))
    import_files(db, [read_ledger(src)])


def _old_covered(conn: sqlite3.Connection, run_id: str) -> bool:
    kept = conn.execute(
        "SELECT coalesce(sum(rows), 0), max(last_id) FROM attempt_columns WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    stored = conn.execute(
        "SELECT count(*), max(id) FROM attempts WHERE run_id = ?", (run_id,)
    ).fetchone()
    return bool(kept[0]) and tuple(kept) == tuple(stored)


def test_a_run_alone_is_covered_as_when_counted_by_run(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    _import(db, tmp_path, "a")
    with StoreTallies(db) as tallies:
        conn = tallies.store.connection
        assert _alone(conn, "a")
        assert covered(conn, "a") == _old_covered(conn, "a") is True
    _import(db, tmp_path, "b")
    with StoreTallies(db) as tallies:
        conn = tallies.store.connection
        for run in ("a", "b"):
            assert not _alone(conn, run)
            assert covered(conn, run) == _old_covered(conn, run) is True
    # a row another tool added, without columns: neither way calls its run covered, alone or not
    for name in ("alone.db", "l.db"):
        db = tmp_path / name
        if not db.exists():
            _import(db, tmp_path, "a")
        raw = sqlite3.connect(db, isolation_level=None)
        names = [r[1] for r in raw.execute("PRAGMA table_info(attempts)") if r[1] != "id"]
        picked = ", ".join("'t-new'" if n == "task_id" else n for n in names)
        raw.execute(
            f"INSERT INTO attempts ({', '.join(names)}) SELECT {picked} FROM attempts "
            "WHERE run_id = 'a' ORDER BY id LIMIT 1"
        )
        assert covered(raw, "a") is _old_covered(raw, "a") is False
        raw.close()


def test_completion_is_read_only_for_a_run_of_our_harness(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    _import(db, tmp_path, "imported")
    with LedgerStore(db) as store:
        store.create_run(RunRecord(run_id="ours", k_budget=2, origin="trialbook run", planned=8))
        store.append(_rows("ours"))
    with StoreTallies(db) as tallies:
        for run in ("imported", "ours", "absent"):
            status = tallies.store.run(run)
            old = None if status is None else completions([status]).get(run)
            assert tallies._completion(run) == old
        assert tallies._completion("ours") is not None


def test_every_renderer_name_resolves() -> None:
    for name in render.__all__:
        assert getattr(render, name) is not None


@pytest.mark.parametrize("fill", [np.nan, 0.0, 1.0, 3.0])
def test_retry_of_a_column_of_one_value_is_the_general_one(fill: float) -> None:
    col = np.broadcast_to(np.array(fill), (7,))
    fake: Any = SimpleNamespace(values={"retry": col})
    assert np.array_equal(
        retry_of(fake), np.where(np.isnan(col), 0.0, col).astype(np.int64), equal_nan=False
    )
    assert retry_of(fake).dtype == np.int64


@pytest.mark.parametrize("code", [-1, 0, 2])
def test_distinct_of_a_column_of_one_code_is_the_sorting_one(code: int) -> None:
    labels = ("x", "y", "z")
    codes = np.broadcast_to(np.array(code, dtype=np.int64), (5,))
    fake: Any = SimpleNamespace(
        codes={"stratum": codes}, labels={"stratum": labels}, _field=lambda name, text: name
    )
    assert Ledger.distinct(fake, "stratum") == _old_distinct(codes, labels)


@pytest.mark.parametrize("value", [0, 3, float("nan"), 2.0**52, -1.0])
def test_a_count_of_one_value_per_row_is_the_count_of_its_copy(value: float) -> None:
    # _known takes the total of a column of one value seen per row as a product when every
    # partial sum is exact (below 2**53), else sums it as a copy would be summed
    from trialbook.ledger._tally import _known

    column = np.broadcast_to(np.float64(value), (1000,))
    assert _known(column) == _known(np.array(column))
