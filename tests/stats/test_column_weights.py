"""ColumnWeights stand for a (T, M) weight matrix held once per distinct column: every estimator
given them must return what it returns for the whole matrix, to the bit (stats/_weights.py)."""

from __future__ import annotations

import numpy as np
import pytest

from trialbook.errors import ArgumentError
from trialbook.stats import ColumnWeights, clustered_se, task_bootstrap, wilson_task_interval

CASES = [
    # (tasks, distinct value levels, map of value columns to weight columns)
    (60, 3, [0, 0, 0, 1, 2]),  # the scorecard's shape: metrics alike, pooled by n, first equal
    (60, 3, [1, 0, 1, 0]),  # runs of one column interleaved
    (60, 3, [0]),  # one value column: numpy sums a (T, 1) matrix pairwise
    (60, 3, [2, 2]),  # columns 0 and 1 never used
    (400, 400, [0, 0, 1]),  # most tasks distinct: the index draw, not the profile draw
]


def _case(tasks: int, levels: int, of: list[int]) -> tuple[np.ndarray, ColumnWeights]:
    rng = np.random.default_rng(tasks + len(of))
    values = rng.integers(0, levels, (tasks, len(of))) / max(levels - 1, 1)
    columns = np.column_stack(
        [np.ones(tasks), rng.integers(1, 9, tasks).astype(float), rng.random(tasks) + 0.1]
    )
    columns[:, 0] = columns[:, 2] if of == [2, 2] else columns[:, 0]  # alike columns are one
    return values, ColumnWeights(columns=columns, of=np.array(of))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_column_weights_give_the_whole_matrix_s_bootstrap_to_the_bit(
    case: tuple[int, int, list[int]], method: str
) -> None:
    values, weights = _case(*case)
    full = task_bootstrap(values, weights=weights.full(), resamples=300, method=method, seed=2)
    held = task_bootstrap(values, weights=weights, resamples=300, method=method, seed=2)
    for name in ("estimate", "ci_low", "ci_high", "standard_error"):
        assert getattr(held, name).tobytes() == getattr(full, name).tobytes(), name
    assert held.distinct_profiles == full.distinct_profiles


@pytest.mark.parametrize("case", CASES)
def test_column_weights_give_the_whole_matrix_s_se_and_wilson_bounds_to_the_bit(
    case: tuple[int, int, list[int]],
) -> None:
    values, weights = _case(*case)
    assert clustered_se(values, weights).tobytes() == clustered_se(values, weights.full()).tobytes()
    held = wilson_task_interval(values, weights=weights, max_n=50.0)
    full = wilson_task_interval(values, weights=weights.full(), max_n=50.0)
    assert held[0].tobytes() == full[0].tobytes()
    assert held[1].tobytes() == full[1].tobytes()


def test_column_weights_are_checked_as_a_matrix_is() -> None:
    values = np.full((4, 2), 0.5)
    with pytest.raises(ArgumentError, match="index its 1 column"):
        ColumnWeights(columns=np.ones((4, 1)), of=np.array([0, 1]))
    with pytest.raises(ArgumentError, match="shape"):
        task_bootstrap(values, weights=ColumnWeights(columns=np.ones((3, 1)), of=np.array([0, 0])))
    with pytest.raises(ArgumentError, match="finite and > 0"):
        clustered_se(values, ColumnWeights(columns=np.zeros((4, 1)), of=np.array([0, 0])))


@pytest.mark.parametrize("shape", [(1, 3), (7, 2), (4096, 5), (4097, 5), (10_000, 203), (9, 1)])
def test_column_sums_a_block_of_rows_at_a_time_are_the_whole_matrix_s(
    shape: tuple[int, int],
) -> None:
    # numpy adds the rows of a C-ordered (T, M >= 2) matrix one after another: a block's first row
    # started from the blocks before gives the same additions (a (T, 1) matrix is summed whole)
    from trialbook.stats._weights import chained_sums, weighted_sums

    rng = np.random.default_rng(shape[0])
    values = rng.random(shape) * 10.0 ** rng.integers(-8, 8, shape)
    weights = rng.random((shape[0], 1)) + 0.5
    whole = (weights * values).sum(axis=0)
    assert weighted_sums(values, weights).tobytes() == whole.tobytes()
    held = ColumnWeights(columns=weights, of=np.zeros(shape[1], dtype=np.intp))
    assert weighted_sums(values, held).tobytes() == whole.tobytes()
    squares = chained_sums(shape[0], shape[1], lambda a, b: values[a:b] ** 2)
    assert squares.tobytes() == (values**2).sum(axis=0).tobytes()
