"""Many systems on one suite: ranks with intervals that hold jointly, the cost-accuracy frontier, and
the paired task bootstrap of cost differences.

Ranks from pairwise decisions (Klein, Wright and Wieczorek 2020, "A joint confidence region for an
overall ranking of populations", JRSS C 69(3)): when every pair is tested and the family-wise error
of the decisions is at most alpha (Holm 1979's step-down adjustment over all N(N-1)/2 pairs), the
intervals [1 + #systems decided better, N - #systems decided worse] hold for every system at once
with probability at least 1 - alpha. Without a false decision, each system's decided-better count
is at most its truly-better count and its decided-worse count at most its truly-worse count, so
every interval contains that system's true rank.

The frontier (the Pareto set of Kapoor et al. 2025, "Holistic Agent Leaderboard", on point
estimates): the systems that no other system matches or beats on both the metric (higher) and the
cost (lower), strictly on one of them.

The paired cost bootstrap: one set of task resamples for every system (the same tasks drawn for
all), so the difference of two systems' resampled costs is the paired bootstrap of their per-task
cost differences (Efron and Tibshirani 1993, ch. 13); percentile intervals as in
:func:`trialbook.stats.task_bootstrap`. A resample is a vector of draw counts per task (T indices
drawn with replacement, counted): a system's resampled total is the counts times its per-task
totals, for every system in one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError

__all__ = [
    "CostBootstrap",
    "RankIntervals",
    "paired_cost_bootstrap",
    "pareto_front",
    "rank_intervals",
]

_MAX_CELLS = 1 << 22  # resample x task draw counts held at once (32 MiB as float64)


@dataclass(frozen=True)
class RankIntervals:
    """Each system's rank and the interval that holds jointly with all the others."""

    rank: NDArray[np.int64]
    """1 + the number of systems with a higher estimate (ties share the better rank)."""
    low: NDArray[np.int64]
    """1 + the number of systems decided better than this one."""
    high: NDArray[np.int64]
    """N - the number of systems this one is decided better than."""


def rank_intervals(estimates: ArrayLike, better: ArrayLike) -> RankIntervals:
    """Ranks and joint rank intervals from point estimates and pairwise decisions.

    ``better[i, j]`` is True when system i is decided better than system j (by a family of tests
    whose family-wise error is controlled, e.g. Holm-adjusted); it must be antisymmetric in the
    sense that i and j are never both decided better than each other, and False on the diagonal.
    """
    est = np.asarray(estimates, dtype=np.float64)
    dec = np.asarray(better, dtype=bool)
    n = est.size
    if est.ndim != 1 or n == 0 or not np.isfinite(est).all():
        raise ArgumentError(
            "estimates must be a non-empty 1-D array of finite numbers", argument="estimates"
        )
    if dec.shape != (n, n):
        raise ArgumentError(
            f"better must be {n} x {n} (one row and column per system), got {dec.shape}",
            argument="better",
        )
    if dec.diagonal().any() or (dec & dec.T).any():
        raise ArgumentError(
            "better must be False on the diagonal and never True both ways for a pair",
            argument="better",
        )
    rank = 1 + (est[None, :] > est[:, None]).sum(axis=1)
    low = 1 + dec.sum(axis=0)  # column i: the systems decided better than i
    high = n - dec.sum(axis=1)  # row i: the systems i is decided better than
    return RankIntervals(rank.astype(np.int64), low.astype(np.int64), high.astype(np.int64))


def pareto_front(metric: ArrayLike, cost: ArrayLike) -> NDArray[np.bool_]:
    """Which systems no other system matches or beats on both metric (higher is better) and cost
    (lower is better), strictly on one. A system whose cost is NaN (not measured) is on no
    frontier, and no system is compared with it."""
    m = np.asarray(metric, dtype=np.float64)
    c = np.asarray(cost, dtype=np.float64)
    if m.ndim != 1 or m.shape != c.shape or np.isnan(m).any():
        raise ArgumentError(
            "metric and cost must be 1-D arrays of one length (metric without NaN)",
            argument="cost",
        )
    known = ~np.isnan(c)
    # dominates[j, i]: j at least as good on both and strictly better on one
    at_least = (m[:, None] >= m[None, :]) & (c[:, None] <= c[None, :])
    strictly = (m[:, None] > m[None, :]) | (c[:, None] < c[None, :])
    dominates = at_least & strictly & known[:, None] & known[None, :]
    return known & ~dominates.any(axis=0)


@dataclass(frozen=True)
class CostBootstrap:
    """Each system's cost with its task-bootstrap interval, and every pair's paired difference."""

    estimate: NDArray[np.float64]
    """Cost per task (or per successful task), one per system."""
    ci_low: NDArray[np.float64]
    """Lower percentile bound per system (NaN when resamples were undefined, see ``undefined``)."""
    ci_high: NDArray[np.float64]
    """Upper percentile bound per system."""
    diff_low: NDArray[np.float64]
    """diff_low[i, j]: lower bound of cost_i - cost_j (paired: the same resampled tasks)."""
    diff_high: NDArray[np.float64]
    """diff_high[i, j]: upper bound of cost_i - cost_j."""
    undefined: NDArray[np.int64]
    """Per system, resamples with no successful task (cost per success undefined there); the
    percentiles are over the others."""
    confidence: float
    """Two-sided level."""
    resamples: int
    """Task resamples."""
    seed: int
    """Seed of ``numpy.random.default_rng``."""

    @property
    def cheaper(self) -> NDArray[np.bool_]:
        """cheaper[i, j]: system i's cost is significantly lower than j's (the interval of
        cost_i - cost_j lies below 0)."""
        return np.asarray(self.diff_high < 0, dtype=bool)


def paired_cost_bootstrap(
    cost: ArrayLike,
    *,
    successes: ArrayLike | None = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> CostBootstrap:
    """Cost per task (``successes`` None) or per successful task of each system, with
    percentile intervals and the paired differences of every pair, from one task resample set.

    ``cost`` is (T, N): per task and system, the total cost of its attempts. ``successes`` (T, N)
    is 1 where the system passed the task at least once: the cost per success of a resample is
    its total cost over its successful tasks (undefined, and left out, when it has none).
    """
    c = np.asarray(cost, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] < 1 or c.shape[1] < 1 or not np.isfinite(c).all():
        raise ArgumentError(
            "cost must be a (tasks, systems) array of finite numbers", argument="cost"
        )
    s = None if successes is None else np.asarray(successes, dtype=np.float64)
    if s is not None and s.shape != c.shape:
        raise ArgumentError(
            f"successes must have the shape of cost {c.shape}, got {s.shape}", argument="successes"
        )
    if not 0 < confidence < 1:
        raise ArgumentError(
            f"confidence must lie strictly between 0 and 1, got {confidence!r}",
            argument="confidence",
        )
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 2:
        raise ArgumentError(
            f"resamples must be >= 2 (a whole number), got {resamples!r}", argument="resamples"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ArgumentError(f"seed must be >= 0 (a whole number), got {seed!r}", argument="seed")
    t, n = c.shape
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, n))
    batch = max(1, _MAX_CELLS // t)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        # T task indices drawn with replacement per resample, counted per task (the same
        # distribution as Multinomial(T; 1/T, ...), and many times quicker to draw)
        drawn = rng.integers(0, t, size=(size, t)) + (np.arange(size) * t)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * t).reshape(size, t)
        counts = counts.astype(np.float64)
        total = counts @ c
        if s is None:
            draws[start : start + size] = total / t
        else:
            solved = counts @ s
            with np.errstate(divide="ignore", invalid="ignore"):
                draws[start : start + size] = np.where(solved > 0, total / solved, np.nan)
    if s is None:
        estimate = c.mean(axis=0)
    else:
        solved_total = s.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate = np.where(solved_total > 0, c.sum(axis=0) / solved_total, np.nan)
    tail = 100 * (1 - confidence) / 2
    q = (tail, 100 - tail)
    undefined = np.isnan(draws).sum(axis=0)
    with np.errstate(all="ignore"):
        bounds = _nan_percentiles(draws, q)
        diff_low = np.full((n, n), np.nan)
        diff_high = np.full((n, n), np.nan)
        for i in range(n - 1):
            d = draws[:, i : i + 1] - draws[:, i + 1 :]  # cost_i - cost_j, paired, for j > i
            lo_hi = _nan_percentiles(d, q)
            diff_low[i, i + 1 :], diff_high[i, i + 1 :] = lo_hi[0], lo_hi[1]
            # cost_j - cost_i is its negation: its percentiles are the others', negated
            diff_low[i + 1 :, i], diff_high[i + 1 :, i] = -lo_hi[1], -lo_hi[0]
        np.fill_diagonal(diff_low, 0.0)
        np.fill_diagonal(diff_high, 0.0)
    return CostBootstrap(
        estimate=estimate,
        ci_low=bounds[0],
        ci_high=bounds[1],
        diff_low=diff_low,
        diff_high=diff_high,
        undefined=undefined.astype(np.int64),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )


def _nan_percentiles(x: NDArray[np.float64], q: tuple[float, float]) -> NDArray[np.float64]:
    """Percentiles per column over the defined (non-NaN) resamples; NaN where none is defined."""
    if not np.isnan(x).any():
        # each column made contiguous first: partitioning along the strided axis is far slower
        return np.asarray(np.percentile(np.ascontiguousarray(x.T), q, axis=1), dtype=np.float64)
    out = np.full((2, x.shape[1]), np.nan)
    for j in range(x.shape[1]):
        col = x[:, j]
        col = col[~np.isnan(col)]
        if col.size:
            out[:, j] = np.percentile(col, q)
    return out
