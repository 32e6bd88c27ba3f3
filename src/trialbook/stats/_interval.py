"""Intervals for a mean over tasks of per-task rates in 0..1 that stay honest at few tasks.

The Wilson score interval with the effective number of tasks (Wilson 1927; the design effect of
Kish 1965): a mean m of per-task rates with task-clustered standard error se carries as much
information as n = m(1 - m) / se^2 independent yes/no outcomes, and the Wilson interval for m out
of n is the interval. Unlike a normal or percentile-bootstrap interval it never leaves 0..1 and keeps
its coverage near the bounds and at few tasks (Dean and Pagano 2015 compared such intervals for
clustered proportions; Bowyer, Aitchison and Ivanova 2025 measured how normal and bootstrap intervals
fail in small evaluations). Measured here (tests/stats/test_calibration.py): 93-97% coverage of
pass@1, pass@3 and pass^3 at 10, 20 and 40 tasks.

When every task has the same value, se is 0 and says nothing about tasks not seen: the interval is
then the Clopper-Pearson interval of m x T successes in T tasks (T the effective number of tasks of
the weights, Kish's (sum w)^2 / sum w^2), e.g. 20 tasks that all pass give 83.2%-100% at 95%.

Where successes are rare, n is a poor guide on its own, and two corrections keep the coverage
(tests/stats/test_rare_coverage.py measures both, cell by cell):

* The spread between tasks is itself estimated, and when one or two tasks carry every pass it is
  estimated from them alone: 40 tasks x 3 attempts with one pass in one task has n = 119.6, as if
  all 120 attempts were independent. The variance estimate's degrees of freedom nu follow from the
  kurtosis of the task scores (Bonett 2006: var(ln s^2) ~ (kappa - (T - 3)/T) / (T - 1), so
  nu = 2 / var(ln s^2)), and n is scaled by (t_{T-1} / t_nu)^2, the effective-n correction of Korn
  and Graubard (1998) relative to a normal sample of T tasks: 1 wherever the spread is as well
  estimated as that (nu >= T - 1), so the ordinary case is unchanged. n never falls below T
  (Kish's), the information of T tasks whose values are all 0 or 1, the largest variance values in
  0..1 can have. That suite's interval goes from [0.15%, 4.6%] to [0.0002%, 10.2%].
* Wilson's lower bound is too high when the count m x n is one to three (Brown, Cai and DasGupta
  2001, section 4.1.1, who replace it there by the Poisson bound lambda_x / n, with
  P(Poisson(lambda_x) >= x) = 1 - confidence); the upper bound likewise where (1 - m) x n is.
  10 tasks with one all-pass task: a lower bound of 1.99% without, 0.39% with.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError
from trialbook.stats._bootstrap import _validate, clustered_se
from trialbook.stats._weights import (
    ColumnWeights,
    Weights,
    chained_sums,
    rows_of,
    scale,
    totals,
    weighted_sums,
)

__all__ = ["wilson_task_interval"]


def wilson_task_interval(
    values: ArrayLike,
    *,
    weights: ArrayLike | ColumnWeights | None = None,
    confidence: float = 0.95,
    max_n: ArrayLike | None = None,
    se: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds per column of ``values`` (T,) or (T, M), each value in 0..1.

    ``max_n`` (one number, or one per column) caps the effective number of outcomes: pass the
    attempts behind each column, so that a task spread that happens to look tiny in a small sample
    never buys more information than every attempt being independent would. ``se``: the
    columns' :func:`~trialbook.stats.clustered_se` (same values and weights), when the caller has
    it already (at 100,000 tasks it is half a second to work out again).
    """
    # no scipy on the common path: importing it costs more than scoring a million attempts
    from statistics import NormalDist

    v, w = _validate(values, weights)
    if v.size and (v.min() < 0 or v.max() > 1):  # finite, checked above
        raise ArgumentError("values must lie in 0..1 (per-task rates)", argument="values")
    m = weighted_sums(v, w) / totals(w)
    if se is None:
        se = clustered_se(v, w if weights is not None else None)
    tasks = (totals(w) ** 2) / totals(w, power=2)  # Kish's effective number of tasks
    tasks = np.broadcast_to(tasks, m.shape)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    a = (1 - confidence) / 2
    cap = np.broadcast_to(np.inf if max_n is None else np.asarray(max_n, dtype=float), m.shape)
    shrink = _spread_shrink(v, w, m, 0.5 + confidence / 2)
    low, high = np.empty_like(m), np.empty_like(m)
    for j in range(m.size):
        mj, sj, tj = float(m[j]), float(se[j]), float(tasks[j])
        if not np.isfinite(sj) or sj <= 0 or mj <= 0 or mj >= 1:
            from scipy.special import betaincinv  # only every-task-alike columns need it

            x = mj * tj
            # Beta quantiles (the Clopper-Pearson bounds), as the regularized incomplete beta inverse
            low[j] = 0.0 if x <= 0 else float(betaincinv(x, tj - x + 1, a))
            high[j] = 1.0 if x >= tj else float(betaincinv(x + 1, tj - x, 1 - a))
            continue
        n = min(mj * (1 - mj) / (sj * sj), float(cap[j]))
        n = max(n * float(shrink[j]), min(n, tj))
        centre = (mj + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(mj * (1 - mj) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        low[j], high[j] = _few_counts(max(0.0, centre - half), min(1.0, centre + half), mj, n, a)
    return low, high


def _spread_shrink(
    v: NDArray[np.float64], w: Weights, m: NDArray[np.float64], q: float
) -> NDArray[np.float64]:
    """Per column, (t_{T-1} / t_nu)^2 <= 1 at quantile ``q``: how much less the task spread tells
    than it would from T normal tasks, nu being its variance estimate's degrees of freedom from
    the kurtosis of the task scores w_t (v_t - m) (Bonett 2006). 1 below 4 tasks, where a
    kurtosis says nothing."""
    t = v.shape[0]
    if t < 4:
        return np.ones(m.shape)

    def powers(power: int) -> NDArray[np.float64]:
        def block(start: int, stop: int) -> NDArray[np.float64]:
            part = v[start:stop] - m
            scale(part, rows_of(w, start, stop))
            part **= power
            return part

        return chained_sums(t, v.shape[1], block)

    second, fourth = powers(2), powers(4)
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = t * fourth / (second * second) - (t - 3) / t
        nu = np.where(excess > 0, 2 * (t - 1) / excess, np.inf)
    shrink = np.ones(m.shape)
    short = np.flatnonzero(np.isfinite(nu) & (nu < t - 1))
    if short.size:
        from scipy.special import stdtrit  # only where the spread is poorly estimated

        shrink[short] = (stdtrit(t - 1, q) / stdtrit(nu[short], q)) ** 2
    return shrink


def _few_counts(low: float, high: float, m: float, n: float, a: float) -> tuple[float, float]:
    """Brown, Cai and DasGupta's (2001) modified Wilson bounds: where m x n (or (1 - m) x n) is at
    most x* (2 up to n = 50, 3 beyond), the bound on that side is the Poisson one, if lower."""
    most = 2.0 if n <= 50 else 3.0
    x, y = m * n, (1 - m) * n
    if not (0 < x <= most or 0 < y <= most):
        return low, high
    from scipy.special import gammaincinv

    if 0 < x <= most:
        low = min(low, float(gammaincinv(x, 2 * a)) / n)
    if 0 < y <= most:
        high = max(high, 1 - float(gammaincinv(y, 2 * a)) / n)
    return low, high
