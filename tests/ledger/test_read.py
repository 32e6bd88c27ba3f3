"""Reading ledgers: the fast (pyarrow) and precise (row by row) paths must agree exactly."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import base_row, write_jsonl
from trialbook.errors import LedgerError
from trialbook.ledger import FIELDS, read_ledger
from trialbook.ledger._rows import from_rows as _from_rows
from trialbook.ledger.formats._arrow import line_numbers as _line_numbers
from trialbook.ledger.formats._jsonl import _read_jsonl_fast, _rows_jsonl


def _fast(path: Path) -> Any:
    return _read_jsonl_fast(path.read_bytes(), str(path), path.stem)


def _precise(path: Path) -> Any:
    rows = _rows_jsonl(path.read_bytes(), str(path))
    return _from_rows(str(path), rows, from_csv=False, default_run=path.stem)


def _same(a: Any, b: Any) -> None:
    assert len(a) == len(b)
    for f in FIELDS:
        if f.name in a.values:
            np.testing.assert_array_equal(a.values[f.name], b.values[f.name], err_msg=f.name)
            assert a.values[f.name].dtype == b.values[f.name].dtype, f.name
        else:
            assert list(a.text(f.name)) == list(b.text(f.name)), f.name


optional = st.fixed_dictionaries(
    {},
    optional={
        "cost": st.floats(min_value=0, max_value=10, allow_nan=False),
        "tokens_in": st.integers(min_value=0, max_value=10**9),
        "stratum": st.sampled_from(["repair", "greenfield"]),
        "cache_hit": st.booleans(),
        "error": st.text(max_size=5),
        "started_at": st.just("2026-11-30T10:00:00+00:00"),
    },
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.booleans(), optional), min_size=1, max_size=12))
def test_fast_and_precise_paths_agree(
    tmp_path: Path, rows: list[tuple[bool, dict[str, Any]]]
) -> None:
    records = []
    for i, (ok, extra) in enumerate(rows):
        extra = dict(extra)
        extra.pop("stratum", None)  # stratum must be constant per task; tasks here are distinct
        records.append(base_row(f"t{i}", 0, passed=ok, **extra))
    path = write_jsonl(tmp_path / "l.jsonl", records)
    fast = _fast(path)
    assert fast is not None
    precise = _precise(path)
    _same(fast, precise)


def test_fast_path_declines_what_the_precise_path_rejects(tmp_path: Path) -> None:
    cases = [
        '{"task_id":"a","attempt_index":1.0}',  # 1.0 is not a whole number
        json.dumps(base_row("a", 0, passed=True, cost=float("nan"))),  # NaN literal
        json.dumps(base_row("a", 0, passed=True, cots=1)),  # unknown field
        json.dumps(base_row("a", 0, passed=1)),  # 1 is not a boolean
    ]
    for text in cases:
        path = tmp_path / "x.jsonl"
        path.write_text(text + "\n")
        assert _fast(path) is None, text
        with pytest.raises(LedgerError):
            read_ledger(path)


def test_csv_reads_like_jsonl(tmp_path: Path) -> None:
    rows = [
        base_row("a", 0, passed=True, cost=0.5, cache_hit=True, run_id="r"),
        base_row("a", 1, passed=False, run_id="r"),
    ]
    jl = read_ledger(write_jsonl(tmp_path / "l.jsonl", rows))
    path = tmp_path / "l.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {
                    k: ("" if v is None else str(v).lower() if isinstance(v, bool) else v)
                    for k, v in r.items()
                }
            )
    cv = read_ledger(path)
    _same(jl, cv)
    assert np.isnan(cv.values["cost"][1])  # an empty cell is "not recorded", not 0


def test_blank_lines_keep_true_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    good = json.dumps(base_row("a", 0, passed=True))
    bad = json.dumps(base_row("b", 0, passed=True, helper_calls=-1))
    path.write_text(f"{good}\n\n\n{bad}\n")
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    assert info.value.details[0].line == 4


def test_fields_first_seen_after_the_sample_are_inferred_then_checked(tmp_path: Path) -> None:
    # the fast path declares the keys of the first 64 KiB; later keys are inferred by arrow and
    # must still come out typed exactly as the precise path types them
    rows = [base_row(f"t{i}", 0, passed=i % 2 == 0) for i in range(2000)]
    rows += [base_row("late-int", 0, passed=True, cost=2, tool_calls=3, error="x")]
    rows += [base_row("late-float", 0, passed=False, cost=0.5)]
    path = write_jsonl(tmp_path / "late.jsonl", rows)
    assert path.stat().st_size > 1 << 16
    fast = _fast(path)
    assert fast is not None
    _same(fast, _precise(path))
    assert np.nansum(fast.values["cost"]) == 2.5
    # a whole number where an int belongs is fine; 1.5 where an int belongs is not
    bad = write_jsonl(
        tmp_path / "late-bad.jsonl", [*rows, base_row("z", 0, passed=True, tool_calls=1.5)]
    )
    assert _fast(bad) is None
    with pytest.raises(LedgerError, match=r"field 'tool_calls': expected a whole number, got 1\.5"):
        read_ledger(bad)


@pytest.mark.parametrize("attempt", [3, 10**9])
def test_a_repeated_attempt_is_found_whether_keys_are_dense_or_sparse(
    tmp_path: Path, attempt: int
) -> None:
    # small keys are checked by counting, large ones by sorting: both must name the repeat
    rows = [base_row("a", attempt, passed=True, k=attempt + 1)] * 2
    rows.insert(1, base_row("b", attempt, passed=False, k=attempt + 1))
    path = write_jsonl(tmp_path / "dup.jsonl", rows)
    with pytest.raises(LedgerError) as info:
        read_ledger(path)
    (problem,) = info.value.details
    assert problem.line == 3
    assert f"attempt_index {attempt} duplicates line 1" in problem.message


def test_the_arrow_path_keeps_true_line_numbers_around_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    rows = [json.dumps(base_row(t, 0, passed=True)) for t in ("a", "b", "c")]
    path.write_text(f"\n{rows[0]}\n \n\n{rows[1]}\n\t\n{rows[2]}")  # no newline at the end
    fast = _fast(path)
    assert fast is not None
    assert fast.lines.tolist() == [2, 5, 7]
    assert _precise(path).lines.tolist() == [2, 5, 7]


@pytest.mark.parametrize(
    "data",
    [
        b"a\nb\n",
        b"a\nb",
        b"a\n\nb\n",
        b"\na\n",
        b" \na",
        b"a\n \n",
        b"a\n ",
        b"a\r\n\r\nb",
        b"\x0c\na",
    ],
)
def test_line_numbers_skip_exactly_the_blank_lines(data: bytes) -> None:
    # first principles: the file's lines are what lies between newlines; a blank one holds no row
    expected = [i for i, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    assert _line_numbers(data, 1).tolist() == expected
