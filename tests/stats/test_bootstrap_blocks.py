"""The bootstrap's resample means are computed in place (no block-sized temporaries beside them),
with the same draws, products and quotients as before: the intervals are the same to the bit
(the scorecard of a 1,000,000-attempt store peaked at 309 MB with those temporaries, against a
300 MB target; benchmarks/bench_ledger_db.py)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

from trialbook.stats._bootstrap import (
    _MAX_CELLS,
    _as_float,
    _distinct_columns,
    _distinct_rows,
    task_bootstrap,
)


def _before(values: Any, weights: Any, resamples: int, seed: int) -> dict[str, Any]:
    """The multinomial draw as it was written before (a product, a quotient, a copy per block)."""
    v = np.asarray(values, dtype=np.float64)
    w = np.ones((v.shape[0], 1)) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w[:, None] if w.ndim == 1 else w
    t, m = v.shape
    wcols, wmap = _distinct_columns(w)
    profiles, counts = _distinct_rows(np.column_stack([v, wcols]))
    pv, pwd = profiles[:, :m], profiles[:, m:]
    pw = pwd[:, wmap]
    assert len(profiles) * 4 <= t  # the multinomial branch
    rng = np.random.default_rng(seed)
    theta = np.empty((resamples, m))
    batch = max(1, _MAX_CELLS // len(profiles))
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        draws = rng.multinomial(t, counts / t, size=size).astype(np.float64)
        theta[start : start + size] = (draws @ (pv * pw)) / (draws @ pwd)[:, wmap]
    estimate = (w * v).sum(axis=0) / w.sum(axis=0)
    low, high = np.percentile(theta, [2.5, 97.5], axis=0)
    flat = np.ptp(theta, axis=0) == 0
    return {
        "estimate": estimate,
        "ci_low": np.where(flat, estimate, low),
        "ci_high": np.where(flat, estimate, high),
        "standard_error": theta.std(axis=0, ddof=1),
    }


def _values(tasks: int, metrics: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    c = rng.integers(0, 11, tasks)  # 11 distinct tasks: the multinomial draw
    ks = np.arange(1, metrics + 1)
    values = np.minimum(1.0, c[:, None] / 10 * (1 + ks[None, :] / metrics))
    return values, np.where(c % 2 == 0, 1.0, 2.0)


@pytest.mark.parametrize("weighting", ["equal", "shared", "per column"])
def test_the_resample_means_are_those_computed_before_to_the_bit(weighting: str) -> None:
    values, weights = _values(400, 12)
    w: Any = {"equal": None, "shared": weights}.get(weighting)
    if weighting == "per column":  # a ratio's weights (n) beside equal ones: two weight columns
        w = np.column_stack([np.ones((400, 6)), np.repeat(weights[:, None], 6, axis=1)])
    result = task_bootstrap(values, weights=w, resamples=2_001, seed=3)
    expected = _before(values, w, 2_001, 3)
    for name, want in expected.items():
        assert getattr(result, name).tobytes() == want.tobytes(), name


def test_memory_is_the_resample_means_and_little_more() -> None:
    values, _ = _values(2000, 202)
    resamples = 10_000
    theta = resamples * values.shape[1] * 8  # the (resamples, metrics) means every interval needs
    tracemalloc.start()
    try:
        task_bootstrap(values, resamples=resamples)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the means and their copy sorted for the percentiles: 2.1x the means (32 MiB); before, a
    # product and a quotient of the block's size stood beside them too: 3.1x (47 MiB)
    assert peak < 2.5 * theta, f"peak {peak / 2**20:.1f} MiB for {theta / 2**20:.1f} MiB of means"


def _old_draws(t: int, p: np.ndarray, size: int, seed: int) -> np.ndarray:
    """The draw as it was computed before the in-place conversion (kept verbatim)."""
    return np.random.default_rng(seed).multinomial(t, p, size=size).astype(np.float64)


@pytest.mark.parametrize(("t", "profiles", "size"), [(40, 7, 1), (10_000, 198, 1000), (50, 3, 513)])
def test_the_draws_converted_in_place_are_astypes_numbers(t: int, profiles: int, size: int) -> None:
    rng = np.random.default_rng(profiles)
    p = rng.random(profiles)
    p /= p.sum()
    counts = np.random.default_rng(5).multinomial(t, p, size=size)
    got = _as_float(counts)
    want = _old_draws(t, p, size, 5)
    assert got.dtype == np.float64
    assert got.flags.c_contiguous
    assert got.tobytes() == want.tobytes()
