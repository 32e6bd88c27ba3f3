"""One procedure per paired comparison: the test, its p-value and an interval that agrees with it.

The paired randomization (sign-flip) test. Under the null that the two systems are exchangeable on
every task, each per-task difference d_t = candidate_t - baseline_t is as likely to carry either
sign, so the mean difference is compared with the means of the same differences under every (or
``resamples`` random) sign pattern (Fisher 1935; Good 2005, ch. 3). It makes no normal
approximation and holds at any number of tasks; with single attempts (d_t in {-1, 0, 1}) it is
McNemar's test. Its p-value is the mid-p (patterns as extreme as the observed one count half:
Lancaster 1961): the exact test's discreteness makes it reject far below its level with few
informative tasks, and the mid-p version keeps the level much closer to nominal (for McNemar's
test: Fagerland, Lydersen and Laake 2013, BMC Medical Research Methodology 13:91).

The interval is the score interval of the mean difference on its known support [-1, 1]
(trialbook.stats._support_score): every delta whose score statistic, with the variance of the
best-fitting distribution whose mean is delta, stays within the normal critical value. With single
attempts it is Tango's score interval for a difference of paired proportions (Tango 1998). Neither
the number of discordant tasks nor the tied tasks are taken as known (an interval that inverts the
test given the discordant count, or a shift model, takes them so and undercovers where tasks tie;
issue 26): with nothing that differs it is still +-the largest share of differing tasks T tasks
cannot rule out. It is then made to agree with the test: where the test does not reject it is
stretched to hold 0, and where the test rejects but the score interval still holds 0, the end on
0's side is that of the interval inverting the test itself (the mid-p Clopper-Pearson interval of
the discordant tasks, or the shifts the sign-flip test does not reject), so the decision read off
one can never contradict the other. Both target the mean difference over this suite's tasks.

When even the most lopsided outcome of so few tasks could not reach the level (mid-p 2^-m >= 1 -
confidence, m the tasks whose difference is not 0), no data can decide: the result says so.
See docs/methodology.md, "Paired comparison and the decision rule".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError
from trialbook.stats._sign_patterns import (
    TOLERANCE,
    all_bits,
    all_signs,
    bit_blocks,
    pattern_counts,
    sign_blocks,
)
from trialbook.stats._support_score import support_score_interval

__all__ = [
    "EXACT_UP_TO",
    "PairedPValues",
    "PairedTest",
    "mcnemar_interval",
    "mcnemar_mid_p",
    "paired_p_values",
    "paired_test",
]

EXACT_UP_TO = 16
"""Tasks up to which every sign pattern is enumerated (2^16 = 65,536); above, random patterns."""


@dataclass(frozen=True)
class PairedTest:
    """The paired test of a difference and the interval that agrees with it."""

    estimate: float
    """Mean per-task difference, candidate - baseline."""
    ci_low: float
    """Lower end of the interval that inverts the test."""
    ci_high: float
    """Upper end."""
    p_value: float
    """Two-sided p-value of 'no difference'."""
    method: str
    """What produced the interval and the p-value, in words."""
    confidence: float
    """Interval level; the test's level is 1 - confidence."""
    tasks: int
    """Paired tasks."""
    informative: int
    """Tasks whose difference is not 0 (discordant tasks with single attempts)."""
    decidable: bool
    """Whether any outcome of this many informative tasks could reach the level."""
    exact: bool
    """Every sign pattern enumerated (or the exact binomial), not a random sample of them."""
    resamples: int | None
    """Random sign patterns drawn (None when exact)."""
    seed: int
    """Seed of the random patterns."""
    p_value_mc_se: float | None = None
    """Monte Carlo standard error of ``p_value`` from random patterns, sqrt(p (1 - p) / patterns)
    (None when exact). Where the p-value lies within three of them of the level, the patterns are
    drawn again, ten and then a hundred times as many, so that the seed does not decide."""

    @property
    def alpha(self) -> float:
        """The test's level, 1 - confidence (rounded so that 0.95 gives exactly 0.05)."""
        return _level(self.confidence)

    @property
    def rejects(self) -> bool:
        """Whether the test rejects 'no difference' (p < alpha), i.e. the interval excludes 0."""
        return self.decidable and self.p_value < self.alpha


@dataclass(frozen=True)
class PairedPValues:
    """Many paired tests at once (:func:`paired_p_values`): per comparison, the p-value, its Monte
    Carlo error and the words :func:`paired_test` gives for the same differences, without an
    interval."""

    estimate: NDArray[np.float64]
    """Mean per-task difference of each comparison."""
    p_value: NDArray[np.float64]
    """Two-sided mid-p of 'no difference': :func:`paired_test`'s ``p_value`` of the column."""
    p_value_mc_se: NDArray[np.float64]
    """Monte Carlo standard error of ``p_value`` from random patterns (NaN where exact)."""
    resamples: NDArray[np.int64]
    """Random sign patterns behind ``p_value`` (0 where exact), after any redraw near the level."""
    informative: NDArray[np.int64]
    """Tasks whose difference is not 0."""
    decidable: NDArray[np.bool_]
    """Whether any outcome of this many informative tasks could reach the level."""
    exact: NDArray[np.bool_]
    """Every sign pattern enumerated, or McNemar's binomial."""
    mcnemar: NDArray[np.bool_]
    """Single attempts (every difference -1, 0 or 1): the mid-p McNemar test."""
    confidence: float
    """The test's level is 1 - confidence."""
    tasks: int
    """Paired tasks (rows of the differences)."""
    seed: int
    """Seed of the random patterns."""

    @property
    def alpha(self) -> float:
        """The test's level, 1 - confidence."""
        return _level(self.confidence)

    def method(self, j: int) -> str:
        """What produced comparison ``j``'s p-value, in words (paired_test's, less the interval)."""
        return _test_words(bool(self.mcnemar[j]), bool(self.exact[j]), int(self.resamples[j]))


def _test_words(mcnemar: bool, exact: bool, drawn: int) -> str:
    if mcnemar:
        return "mid-p McNemar test"
    return (
        "sign-flip test over every sign pattern"
        if exact
        else f"sign-flip test, {drawn} random sign patterns"
    )


def _level(confidence: float) -> float:
    return round(1 - confidence, 12)


def _check(confidence: float, resamples: int, seed: int) -> None:
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


def _decidable(informative: int, alpha: float) -> bool:
    """Whether the smallest two-sided mid-p m informative tasks can give, 2^-m, is below alpha."""
    return informative >= 1 and 2.0 ** (-informative) < alpha


def mcnemar_mid_p(only_baseline: int, only_candidate: int) -> float:
    """Two-sided mid-p McNemar test: P(|S| > |s|) + P(|S| = |s|) / 2 for S = 2X - n, X ~ Bin(n, 1/2)
    (twice the smaller tail with the observed count taken half; at b = c, 1 - P(X = n/2) / 2)."""
    from scipy.stats import binom

    b, c = int(only_baseline), int(only_candidate)
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    if b == c:
        return float(1 - 0.5 * binom.pmf(k, n, 0.5))
    return float(2 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5))


def mcnemar_interval(
    only_baseline: int, only_candidate: int, tasks: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Difference of pass rates and the interval that inverts the mid-p McNemar test.

    Given D = only_baseline + only_candidate discordant tasks of ``tasks``, the candidate's share of
    them has the mid-p Clopper-Pearson interval [p_lo, p_hi] (Clopper and Pearson 1934; mid-p:
    Berry and Armitage 1995); the difference is (D / tasks) (2 p - 1). The interval excludes 0
    exactly when the two-sided mid-p test of p = 1/2 rejects at 1 - confidence.
    """
    from scipy.optimize import brentq
    from scipy.stats import binom

    b, c, n = int(only_baseline), int(only_candidate), int(tasks)
    if b < 0 or c < 0 or n < b + c or n < 1:
        raise ArgumentError(
            f"discordant counts must be >= 0 and at most the {n} tasks, got {b} and {c}",
            argument="tasks",
        )
    d = b + c
    if d == 0:
        return 0.0, 0.0, 0.0
    a = _level(confidence) / 2

    def upper_tail(p: float) -> float:  # P(X > c) + P(X = c) / 2
        return float(binom.sf(c, d, p) + 0.5 * binom.pmf(c, d, p))

    def lower_tail(p: float) -> float:  # P(X < c) + P(X = c) / 2
        return float(binom.cdf(c, d, p) - 0.5 * binom.pmf(c, d, p))

    lo = 0.0 if c == 0 else float(brentq(lambda p: upper_tail(p) - a, 0.0, 1.0, xtol=1e-14))
    hi = 1.0 if c == d else float(brentq(lambda p: lower_tail(p) - a, 0.0, 1.0, xtol=1e-14))
    scale = d / n
    return (c - b) / n, scale * (2 * lo - 1), scale * (2 * hi - 1)


def paired_test(
    differences: ArrayLike,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedTest:
    """The sign-flip test of per-task differences and the score interval that agrees with it (see
    the module doc).

    With every difference in {-1, 0, 1} (single attempts) the p-value is McNemar's mid-p and the
    interval Tango's score interval. Otherwise every sign pattern is enumerated for up to
    :data:`EXACT_UP_TO` tasks, else ``resamples`` random patterns are drawn (seeded, the observed
    pattern counted among them); the p-value is the mid-p: (patterns beyond the observed mean +
    half of those equal to it) / patterns. The p-value is :func:`paired_p_values`' for the same
    differences as one column.
    """
    _check(confidence, resamples, seed)
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or d.size == 0 or not np.isfinite(d).all():
        raise ArgumentError(
            "differences must be a non-empty 1-D array of finite numbers", argument="differences"
        )
    # random sign patterns meet the tasks in their order, and a ledger lists tasks in the order
    # their attempts finished: sorted, the result depends on the differences alone
    d = np.sort(d)
    alpha = _level(confidence)
    t = int(d.size)
    test = _p_values(d[None, :], confidence, resamples, seed)
    p0, informative, decidable = (
        float(test.p_value[0]),
        int(test.informative[0]),
        bool(test.decidable[0]),
    )
    estimate = float(test.estimate[0])
    if test.mcnemar[0]:
        b, c = int((d < 0).sum()), int((d > 0).sum())
        lo, hi = _agreeing(
            support_score_interval(d, alpha),
            p0,
            alpha,
            lambda: mcnemar_interval(b, c, t, confidence)[1:],
        )
        return PairedTest(
            estimate,
            lo,
            hi,
            p0,
            "mid-p McNemar test; Tango's score interval of the difference",
            confidence,
            t,
            informative,
            decidable,
            True,
            None,
            seed,
        )

    exact = bool(test.exact[0])
    drawn = int(test.resamples[0])
    mc_se = None if exact else float(test.p_value_mc_se[0])

    def shifts() -> tuple[float, float]:
        # the shifts the test does not reject, the end on 0's side at the test's own crossing;
        # the patterns behind p0 drawn again, only for this (the test rejects, the score
        # interval holds 0), and p at 0 is p0 itself
        mid_p = _mid_p(d, estimate, drawn, seed, exact)

        def p_at(delta: float) -> float:
            return p0 if delta == 0.0 else mid_p(delta)

        toward = 0.0 if p0 < alpha else None
        low = _edge(p_at, estimate, -1.0 if estimate <= 0 or toward is None else 0.0, alpha)
        high = _edge(p_at, estimate, 1.0 if estimate >= 0 or toward is None else 0.0, alpha)
        return low, high

    lo, hi = _agreeing(support_score_interval(d, alpha), p0, alpha, shifts)
    method = _test_words(False, exact, drawn) + "; score interval of the mean difference on [-1, 1]"
    return PairedTest(
        estimate,
        lo,
        hi,
        p0,
        method,
        confidence,
        t,
        informative,
        decidable,
        exact,
        None if exact else drawn,
        seed,
        mc_se,
    )


def paired_p_values(
    differences: ArrayLike,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedPValues:
    """The p-values of many paired tests at once: each column of ``differences`` (tasks x
    comparisons, every comparison on the same tasks) tested as :func:`paired_test` tests it.

    The same p-value for each column as :func:`paired_test` gives for it alone: McNemar's mid-p
    where every difference is -1, 0 or 1; else every sign pattern for up to :data:`EXACT_UP_TO`
    tasks, or the same ``resamples`` seeded random patterns (the observed one counted among them),
    drawn again ten and then a hundred times as many for the columns whose p-value lies within
    three Monte Carlo standard errors of the level. The patterns depend only on the number of
    tasks, the count and the seed, so they are drawn once for every column and the flipped means
    of all columns are one matrix product per block of patterns; no interval is computed. Each
    column is sorted first, as paired_test sorts its differences: the order of the tasks (the
    rows) changes nothing.
    """
    _check(confidence, resamples, seed)
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] == 0 or d.shape[1] == 0 or not np.isfinite(d).all():
        raise ArgumentError(
            "differences must be a non-empty 2-D array (tasks x comparisons) of finite numbers",
            argument="differences",
        )
    # each comparison's differences sorted, as paired_test sorts its vector (random sign patterns
    # meet the tasks in their order): one C-ordered row per comparison
    return _p_values(np.sort(d.T, axis=1), confidence, resamples, seed)


def _p_values(
    rows: NDArray[np.float64], confidence: float, resamples: int, seed: int
) -> PairedPValues:
    """:func:`paired_p_values` of ``rows`` (comparisons x tasks, C order: each comparison's
    differences contiguous, as paired_test holds its one vector)."""
    alpha = _level(confidence)
    count, t = rows.shape
    informative = np.count_nonzero(rows, axis=1).astype(np.int64)
    decidable = (informative >= 1) & (2.0 ** (-informative.astype(np.float64)) < alpha)
    single: NDArray[np.bool_] = np.asarray(np.isin(rows, (-1.0, 0.0, 1.0)).all(axis=1))
    b, c = (rows < 0).sum(axis=1), (rows > 0).sum(axis=1)
    # per comparison as paired_test reduces its vector (pairwise sums of one contiguous row)
    estimate = np.array(
        [(c[j] - b[j]) / t if single[j] else float(rows[j].mean()) for j in range(count)]
    )
    scale = np.array([float(np.abs(rows[j]).mean()) for j in range(count)])
    p = np.empty(count)
    mc_se = np.full(count, np.nan)
    drawn = np.zeros(count, dtype=np.int64)
    known: dict[tuple[int, int], float] = {}
    for j in np.flatnonzero(single).tolist():
        key = (int(b[j]), int(c[j]))
        if key not in known:
            known[key] = mcnemar_mid_p(*key)
        p[j] = known[key]
    flips = np.flatnonzero(~single)
    exact = t <= EXACT_UP_TO
    if exact and flips.size:
        beyond, ties = pattern_counts(all_bits(t), rows[flips], estimate[flips], scale[flips])
        p[flips] = (beyond + 0.5 * ties) / 2**t
    todo = flips if not exact else flips[:0]
    for more in (1, 10, 100):
        if not todo.size:
            break
        n = resamples * more
        beyond, ties = pattern_counts(
            bit_blocks(t, n, seed), rows[todo], estimate[todo], scale[todo]
        )
        ties += 1  # the observed pattern, counted among the patterns as a tie
        p[todo] = (beyond + 0.5 * ties) / (n + 1)
        mc_se[todo] = np.sqrt(p[todo] * (1 - p[todo]) / (n + 1))
        drawn[todo] = n
        todo = todo[np.abs(p[todo] - alpha) < 3 * mc_se[todo]]
    return PairedPValues(
        estimate=estimate,
        p_value=p,
        p_value_mc_se=mc_se,
        resamples=drawn,
        informative=informative,
        decidable=decidable,
        exact=single | np.bool_(exact),
        mcnemar=single,
        confidence=confidence,
        tasks=t,
        seed=seed,
    )


def _agreeing(
    score: tuple[float, float],
    p_value: float,
    alpha: float,
    inverted: Callable[[], tuple[float, float]],
) -> tuple[float, float]:
    """The score interval, made to agree with the test about 0: it holds 0 exactly when the test
    does not reject. Where the test does not reject, the interval is stretched to 0; where it
    rejects and the score interval still holds 0 (its statistic is not the test's), the end on
    0's side is that of the interval that inverts the test itself (``inverted``, which excludes 0
    by construction)."""
    lo, hi = score
    if p_value >= alpha:
        return min(lo, 0.0), max(hi, 0.0)
    if lo <= 0.0 <= hi:
        inv_lo, inv_hi = inverted()
        if inv_lo > 0.0:
            lo = inv_lo
        elif inv_hi < 0.0:
            hi = inv_hi
    return lo, hi


def _mid_p(
    d: NDArray[np.float64], estimate: float, resamples: int, seed: int, exact: bool
) -> Callable[[float], float]:
    """The mid-p of 'the mean difference is delta', as a function of delta, over every sign
    pattern or ``resamples`` seeded ones (the observed pattern counted among them)."""
    flipped, share = _pattern_means(d, resamples, seed, exact)
    total = flipped.size + (0 if exact else 1)
    slack = TOLERANCE * float(np.abs(d).mean())

    def p_at(delta: float) -> float:  # mid-p: ties with the observed mean count half
        observed = abs(estimate - delta)
        stat = np.abs(flipped - delta * share)
        beyond = int((stat > observed * (1 + TOLERANCE) + slack).sum())
        reached = int((stat >= observed * (1 - TOLERANCE) - slack).sum())
        ties = reached - beyond + (0 if exact else 1)
        return float((beyond + 0.5 * ties) / total)

    return p_at


def _pattern_means(
    d: NDArray[np.float64], resamples: int, seed: int, exact: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per sign pattern s: mean(s * d) and mean(s); every pattern, or ``resamples`` seeded ones
    (the same patterns as the p-value's)."""
    t = d.size
    blocks = all_signs(t) if exact else sign_blocks(t, resamples, seed)
    flipped, share = [], []
    for signs in blocks:
        flipped.append(signs @ d / t)
        share.append(signs.sum(axis=1) / t)
    return np.concatenate(flipped), np.concatenate(share)


def _edge(p_at: Callable[[float], float], inside: float, outside: float, alpha: float) -> float:
    """Where p(delta) crosses alpha between ``inside`` (accepted) and ``outside``, by bisection; the
    accepted end of the last bracket (the interval is closed on what the test accepts)."""
    if p_at(outside) >= alpha:
        return outside
    a, b = inside, outside
    for _ in range(60):
        mid = (a + b) / 2
        if p_at(mid) >= alpha:
            a = mid
        else:
            b = mid
        if math.isclose(a, b, abs_tol=1e-12):
            break
    return a
