"""Paired comparison of two systems on the same tasks (Miller 2024 §2.5).

See docs/methodology.md, "Paired comparison and the decision rule".

A difference measured on the same tasks is far more precise than the two scores it comes from: the
between-task variance cancels. Tasks stay the unit: the per-task differences are resampled together.

Single attempt per task: the 2x2 table of McNemar (1947). Exact conditional test: given b + c
discordant tasks, b ~ Binomial(b + c, 1/2), two-sided p = min(1, 2 P(X <= min(b, c))). Interval for the
difference in proportions: Newcombe (1998) square-and-add, method 10, as in R ``contingencytables``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError
from trialbook.stats._bootstrap import CIMethod, clustered_se, task_bootstrap

__all__ = [
    "McNemarResult",
    "PairedDifference",
    "holm",
    "mcnemar_exact",
    "newcombe_paired_ci",
    "paired_difference",
    "wilson_interval",
]


def _z(confidence: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(0.5 + confidence / 2))


def wilson_interval(x: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for x successes of n (Wilson 1927)."""
    if n < 1 or not 0 <= x <= n:
        raise ArgumentError(f"need 0 <= x <= n and n >= 1, got x={x}, n={n}")
    z = _z(confidence)
    p = x / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return centre - half, centre + half


@dataclass(frozen=True)
class McNemarResult:
    """The paired 2x2 table of single attempts, McNemar's test and the interval that agrees with it."""

    both: int
    """Tasks both systems passed."""
    only_baseline: int
    """Tasks only the baseline passed (b)."""
    only_candidate: int
    """Tasks only the candidate passed (c)."""
    neither: int
    """Tasks neither passed."""
    p_value: float
    """Two-sided mid-p McNemar p-value: the comparison's own (trialbook.stats.paired_test)."""
    difference: float
    """Candidate rate minus baseline rate, (c - b) / N."""
    ci_low: float
    """Lower bound of the difference: Tango's score interval, made to agree with the mid-p test
    (trialbook.stats.paired_test)."""
    ci_high: float
    """Upper bound."""
    exact_p_value: float | None = None
    """The exact conditional p-value (McNemar 1947), for reference: more conservative than the
    mid-p, and not what decides."""


def mcnemar_exact(only_baseline: int, only_candidate: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts (1.0 when there are none)."""
    from scipy.stats import binom

    b, c = int(only_baseline), int(only_candidate)
    if b < 0 or c < 0:
        raise ArgumentError(f"discordant counts must be >= 0, got {b} and {c}")
    if b + c == 0:
        return 1.0
    return float(min(1.0, 2 * binom.cdf(min(b, c), b + c, 0.5)))


def newcombe_paired_ci(table: ArrayLike, confidence: float = 0.95) -> tuple[float, float, float]:
    """Newcombe's square-and-add interval for p_A - p_B from a paired table [[n11, n12], [n21, n22]].

    Rows are A pass / fail, columns B pass / fail (Fagerland's convention). Returns (estimate, low, high).
    The correlation correction psi follows R contingencytables (Fagerland, Lydersen & Laake 2017).
    """
    t = np.asarray(table, dtype=np.int64)
    if t.shape != (2, 2) or (t < 0).any() or t.sum() == 0:
        raise ArgumentError(
            "table must be a 2x2 array of non-negative counts with a positive total"
        )
    n = int(t.sum())
    r1, r2 = int(t[0].sum()), int(t[1].sum())
    c1, c2 = int(t[:, 0].sum()), int(t[:, 1].sum())
    p1, p2 = r1 / n, c1 / n
    l1, u1 = wilson_interval(r1, n, confidence)
    l2, u2 = wilson_interval(c1, n, confidence)
    if min(r1, r2, c1, c2) == 0:
        psi = 0.0
    else:
        a = int(t[0, 0] * t[1, 1] - t[0, 1] * t[1, 0])
        den = math.sqrt(r1 * r2 * c1 * c2)
        psi = (a - n / 2) / den if a > n / 2 else (0.0 if a >= 0 else a / den)
    est = p1 - p2
    low = est - math.sqrt(
        max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2))
    )
    high = est + math.sqrt(
        max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1))
    )
    return est, low, high


def holm(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm (1979) step-down adjusted p-values (family-wise error), in the input order."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class PairedDifference:
    """Candidate minus baseline, task by task, with its interval and what pairing bought."""

    tasks: int
    """Tasks present in both runs."""
    baseline: float
    """Baseline mean over the paired tasks."""
    candidate: float
    """Candidate mean over the paired tasks."""
    estimate: float
    """Mean over tasks of (candidate - baseline)."""
    ci_low: float
    """Paired task-bootstrap lower bound."""
    ci_high: float
    """Paired task-bootstrap upper bound."""
    se_paired: float | None
    """Analytic SE of the mean difference (task-clustered; None with one task)."""
    se_unpaired: float | None
    """sqrt(SE_A^2 + SE_B^2): what the SE would be if the runs were not paired."""
    correlation: float | None
    """Correlation of per-task values between the two runs (None if either is constant)."""
    p_value: float | None
    """Two-sided normal-approximation p-value of estimate / se_paired (None without an SE)."""
    mde: float | None
    """Smallest true difference this design detects at the given alpha with 80% power."""


def paired_difference(
    baseline: ArrayLike,
    candidate: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: CIMethod = "percentile",
    seed: int = 0,
    power: float = 0.8,
) -> PairedDifference:
    """Paired analysis of per-task values (same task order in both arrays)."""
    from scipy.special import ndtr, ndtri

    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(candidate, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ArgumentError(
            "baseline and candidate must be non-empty 1-D arrays of the same length"
        )
    d = b - a
    boot = task_bootstrap(
        d, weights=weights, confidence=confidence, resamples=resamples, method=method, seed=seed
    )
    se_p = float(clustered_se(d, weights)[0])
    se_a, se_b = float(clustered_se(a, weights)[0]), float(clustered_se(b, weights)[0])
    se_u = math.sqrt(se_a**2 + se_b**2)
    corr = None
    if a.size > 1 and a.std() > 0 and b.std() > 0:
        corr = float(np.corrcoef(a, b)[0, 1])
    w = np.ones_like(a) if weights is None else np.asarray(weights, dtype=np.float64)
    est = float(boot.estimate[0])
    p_value = None
    mde = None
    if not math.isnan(se_p):
        if se_p > 0:
            p_value = float(2 * ndtr(-abs(est) / se_p))
        elif est != 0:
            p_value = 0.0
        else:
            p_value = 1.0
        mde = float((ndtri(0.5 + confidence / 2) + ndtri(power)) * se_p)
    return PairedDifference(
        tasks=int(a.size),
        baseline=float(w @ a / w.sum()),
        candidate=float(w @ b / w.sum()),
        estimate=est,
        ci_low=float(boot.ci_low[0]),
        ci_high=float(boot.ci_high[0]),
        se_paired=None if math.isnan(se_p) else se_p,
        se_unpaired=None if math.isnan(se_u) else se_u,
        correlation=corr,
        p_value=p_value,
        mde=mde,
    )
