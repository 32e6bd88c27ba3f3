"""The score interval of a mean paired difference on its known support [-1, 1].

Per-task differences d_t = candidate_t - baseline_t of pass rates lie in [-1, 1]. The interval is
every delta whose score test (the mean's deviation from delta over its standard error under the
distribution that fits the data best among those with mean delta) does not reject:

    z(delta) = (mean(d) - delta) / sqrt(V(delta) / T),

where V(delta) is the variance of that restricted distribution. It is the maximum-likelihood
distribution of the tasks' differences (a multinomial on the observed values) with mean delta,
which may put mass on the support's ends -1 and +1 even where no task lies: what ties cannot show
is how far the difference could reach, and the ends of the support are where it could. For one
attempt per task (d in {-1, 0, 1}) this is Tango's score interval for a difference of paired
proportions (Tango 1998, Statistics in Medicine 17:891-908; recommended by Fagerland, Lydersen and
Laake 2014, Statistical Methods in Medical Research 23:1-33); with several attempts it is the same
restricted-likelihood score interval on the values the differences take.

Unlike an interval that inverts a test conditional on the discordant count, or a shift model,
neither the number of discordant tasks nor the tied tasks is taken as known: with no task that
differs, the interval still says how large a difference T tasks can rule out.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "clopper_pearson_zero",
    "restricted_variance",
    "support_score_interval",
    "trinomial_variance",
]

_EDGE = 1e-12  # how close to the support's end a hypothesised mean is taken (share of its width)


def restricted_variance(
    values: NDArray[np.float64],
    counts: NDArray[np.float64],
    delta: float,
    support: tuple[float, float] = (-1.0, 1.0),
) -> float:
    """Variance of the maximum-likelihood distribution with mean ``delta`` of tasks whose
    differences take ``values`` ``counts`` times, mass at the ends of ``support`` allowed (see the
    module doc; the support holds every value).

    The weights are w_v = n_v / (T (1 + lam (v - delta))), lam solving sum w_v (v - delta) = 0 on
    the range where every point of the support keeps a positive denominator; where no root lies there,
    lam sits at the end of that range and the support's end takes the remaining mass.
    """
    t = float(counts.sum())
    x = values - delta
    low, high = support
    lam_lo, lam_hi = -1.0 / (high - delta), 1.0 / (delta - low)

    def g(lam: float) -> float:
        return float(np.sum(counts * x / (1.0 + lam * x)))

    atom: float | None = None  # where the remaining mass goes: an end of the support
    at_high, at_low = bool((values >= high).any()), bool((values <= low).any())
    if not at_high and g(lam_lo) <= 0.0:
        lam, atom = lam_lo, high
    elif not at_low and g(lam_hi) >= 0.0:
        lam, atom = lam_hi, low
    else:
        from scipy.optimize import brentq

        # g decreases in lam. At an end with a task on the support's end, g is infinite there,
        # but no weight exceeds 1, so 1 + lam (v - delta) >= n_v / T >= 1 / T keeps the root
        # inside the end moved by half that; at an end without one, g is finite there
        shrink = 1.0 - 0.5 / t
        a = lam_lo * shrink if at_high else lam_lo
        b = lam_hi * shrink if at_low else lam_hi
        lam = float(brentq(g, a, b, xtol=1e-15, rtol=1e-14))
    w = counts / (t * (1.0 + lam * x))
    variance = float(np.sum(w * x * x))
    if atom is not None:
        variance += max(0.0, 1.0 - float(w.sum())) * (atom - delta) ** 2
    return variance


def trinomial_variance(only_baseline: int, only_candidate: int, tasks: int, delta: float) -> float:
    """:func:`restricted_variance` of single attempts in closed form: with b tasks only the
    baseline passed and c only the candidate, the restricted estimate of P(only the baseline) is
    the root of 2T q^2 + B q + C = 0, B = -b - c + (2T - c + b) delta, C = -b delta (1 - delta)
    (Tango 1998, eq. 2), and the variance of a difference is 2q + delta - delta^2."""
    b, c, n = only_baseline, only_candidate, tasks
    big_b = -b - c + (2 * n - c + b) * delta
    big_c = -b * delta * (1 - delta)
    q = (math.sqrt(max(0.0, big_b * big_b - 8 * n * big_c)) - big_b) / (4 * n)
    return max(0.0, 2 * q + delta - delta * delta)


def clopper_pearson_zero(tasks: int, alpha: float) -> float:
    """The two-sided Clopper-Pearson upper bound of a rate seen 0 times in ``tasks``:
    1 - (alpha / 2)^(1 / tasks) (Clopper and Pearson 1934)."""
    return float(1.0 - (alpha / 2.0) ** (1.0 / tasks))


def support_score_interval(differences: NDArray[np.float64], alpha: float) -> tuple[float, float]:
    """The set of means delta whose score test does not reject at ``alpha``, on the support
    [-1, 1] (stretched to the differences where one lies beyond it).

    With no task that differs (every difference 0), the interval is +-the Clopper-Pearson upper
    bound of the share of tasks that differ, seen 0 times: |mean| cannot exceed that share.
    """
    from scipy.stats import norm

    d = np.asarray(differences, dtype=np.float64)
    t = int(d.size)
    if not np.any(d):
        bound = clopper_pearson_zero(t, alpha)
        return -bound, bound
    values, counts = np.unique(d, return_counts=True)
    score = _Score(values, counts.astype(np.float64), float(d.mean()))
    support = (min(-1.0, float(values[0])), max(1.0, float(values[-1])))
    crit = float(norm.ppf(1.0 - alpha / 2.0))
    return score.end(support, crit, 0), score.end(support, crit, 1)


class _Score:
    """The score statistic of a fixed sample as a function of the hypothesised mean."""

    def __init__(self, values: NDArray[np.float64], counts: NDArray[np.float64], mean: float):
        self.values, self.counts, self.mean = values, counts, mean
        self.discordant: tuple[int, int] | None = None  # (b, c) when every value is -1, 0 or 1
        if np.isin(values, (-1.0, 0.0, 1.0)).all():
            by = dict(zip(values.tolist(), counts.tolist(), strict=True))
            self.discordant = int(by.get(-1.0, 0)), int(by.get(1.0, 0))

    def z(self, delta: float, support: tuple[float, float]) -> float:
        t = float(self.counts.sum())
        if self.discordant is not None and support == (-1.0, 1.0):
            v = trinomial_variance(*self.discordant, int(t), delta)
        else:
            v = restricted_variance(self.values, self.counts, delta, support)
        if v <= 0.0:
            if math.isclose(self.mean, delta, abs_tol=1e-15):
                return 0.0
            return math.copysign(math.inf, self.mean - delta)
        return (self.mean - delta) / math.sqrt(v / t)

    def end(self, support: tuple[float, float], crit: float, side: int) -> float:
        """Where |z(delta)| reaches ``crit`` between the mean and ``support[side]`` (Brent's
        method: z falls from 0 at the mean to beyond -crit or crit at the end)."""
        from scipy.optimize import brentq

        edge = support[side]
        width = support[1] - support[0]
        if abs(edge - self.mean) <= _EDGE * width:  # every task at that end: none beyond it
            return edge
        outside = edge - math.copysign(_EDGE * width, edge - self.mean)
        target = crit if side == 0 else -crit
        if abs(self.z(outside, support)) <= crit:
            return edge
        return float(
            brentq(
                lambda delta: self.z(delta, support) - target,
                # z is 0 at the mean; kept off the support's ends, where no distribution varies
                min(max(self.mean, support[0] + _EDGE * width), support[1] - _EDGE * width),
                outside,
                xtol=1e-13,
                rtol=1e-13,
            )
        )
