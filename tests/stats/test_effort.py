"""Companion figures and task grouping, against a row-by-row count written out in plain Python."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import base_row
from trialbook.ledger import ledger_from_rows, per_task
from trialbook.stats import effort_summary

# a task's attempts: distinct attempt indices (with gaps, as after quarantine), each passed or not
_TASK = st.dictionaries(st.integers(0, 30), st.booleans(), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.integers(-(10**12), 10**12), _TASK, min_size=1, max_size=8),
    st.randoms(use_true_random=False),
)
def test_effort_summary_counts_as_a_person_would(
    tasks: dict[int, dict[int, bool]], rnd: Any
) -> None:
    rows = [(code, idx, ok) for code, attempts in tasks.items() for idx, ok in attempts.items()]
    rnd.shuffle(rows)  # the order of rows must not matter
    codes, index, passed = (np.array(c) for c in zip(*rows, strict=True))
    elapsed = np.arange(len(rows), dtype=np.float64)
    got = effort_summary(
        task_codes=codes,
        attempt_index=index,
        passed=passed,
        timed_out=np.zeros(len(rows), bool),
        infra_error=np.zeros(len(rows), bool),
        helper_calls=np.ones(len(rows)),
        elapsed_s=elapsed,
        cache_hit=np.full(len(rows), math.nan),
        tool_calls=np.full(len(rows), math.nan),
    )
    # stop at first pass: walk each task's attempts in attempt order, count until the first pass
    used = []
    for attempts in tasks.values():
        count = 0
        for idx in sorted(attempts):
            count += 1
            if attempts[idx]:
                break
        used.append(count)
    anything_passed = any(ok for attempts in tasks.values() for ok in attempts.values())
    assert got.attempts_to_first_pass == (statistics.mean(used) if anything_passed else None)
    assert got.attempts_per_task == statistics.mean(len(a) for a in tasks.values())
    assert got.median_elapsed_s == statistics.median(elapsed.tolist())
    assert got.cache_hit_rate is None
    assert got.tool_calls_per_attempt is None


def _effort(codes: list[int], index: list[int], passed: list[bool]) -> Any:
    size = len(codes)
    return effort_summary(
        task_codes=codes,
        attempt_index=index,
        passed=passed,
        timed_out=np.zeros(size, bool),
        infra_error=np.zeros(size, bool),
        helper_calls=np.zeros(size),
        elapsed_s=np.ones(size),
        cache_hit=np.full(size, math.nan),
        tool_calls=np.full(size, math.nan),
    )


def test_attempts_to_first_pass_is_undefined_when_nothing_passed() -> None:
    # 2 tasks x 3 failed attempts: there is no first pass to count attempts to (it used to say 3.00)
    got = _effort([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [False] * 6)
    assert got.attempts_to_first_pass is None


def test_attempts_to_first_pass_counts_a_never_passed_task_at_its_n() -> None:
    # task 0 passes at its 2nd attempt (2 used), task 1 never passes (3 used): mean 2.5
    got = _effort([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [False, True, False] + [False] * 3)
    assert got.attempts_to_first_pass == 2.5


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdefgh"), _TASK, min_size=1, max_size=8),
    st.sets(st.sampled_from("abcdefgh")),
    st.randoms(use_true_random=False),
)
def test_per_task_groups_a_subset_as_a_person_would(
    tasks: dict[str, dict[int, bool]], dropped: set[str], rnd: Any
) -> None:
    rows = [
        base_row(task, idx, passed=ok, k=31)
        for task, attempts in tasks.items()
        for idx, ok in attempts.items()
    ]
    rnd.shuffle(rows)
    ledger = ledger_from_rows(rows, "mem")
    keep = np.array([r["task_id"] not in dropped for r in rows])
    if not keep.any():
        return
    groups = per_task(ledger.subset(keep))
    # by hand: tasks in order of first appearance in the file, then each one's counts
    expected: dict[str, list[tuple[int, bool, int]]] = defaultdict(list)
    position = 0
    for row, k in zip(rows, keep.tolist(), strict=True):
        if k:
            expected[row["task_id"]].append((row["attempt_index"], row["passed"], position))
            position += 1
    order = [t for t in dict.fromkeys(r["task_id"] for r in rows) if t in expected]
    assert groups.labels == order
    assert groups.attempts.tolist() == [len(expected[t]) for t in order]
    assert groups.passes.tolist() == [sum(ok for _, ok, _ in expected[t]) for t in order]
    assert groups.first_row.tolist() == [min(expected[t])[2] for t in order]
    assert [order[i] for i in groups.task.tolist()] == [
        r["task_id"] for r, k in zip(rows, keep.tolist(), strict=True) if k
    ]
