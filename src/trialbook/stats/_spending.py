"""A group-sequential race over a known horizon: Lan-DeMets alpha spending, O'Brien-Fleming type.

See docs/statistics.md, "Confidence sequences: stopping when the answer is known".

A race knows its horizon before the first task: the suite's size (or ``--max-tasks``), N looks, one
after each task pair. A design that spends its error rate over those N looks, instead of over an
unbounded stream as a betting confidence sequence must, loses only a few points of power against
the fixed design on the whole suite while still stopping early when the difference is large.

**The boundaries.** Per side alpha/2 is spent along the information fraction t = j/N by the
O'Brien-Fleming-type function of Lan & DeMets (1983),

    a(t) = 2 - 2 Phi(z_{alpha/4} / sqrt(t))   (per side; a(1) = alpha/2),

and the boundary c_j of look j is the z such that a standardised Brownian motion observed at
t_1, ..., t_j first crosses +c_j at look j with probability a(t_j) - a(t_{j-1}) (Jennison &
Turnbull 2000, ch. 7 and ch. 19: the density of W(t_j) on the continuation region is carried from
look to look by convolution with the N(0, t_j - t_{j-1}) kernel). Here the density lives on a fixed
grid (spacing sd/12 of one increment, at most 0.01) and the truncation at the boundary weights the
boundary cell by the part of it inside; with 5 looks this reproduces the published boundaries
4.877, 3.357, 2.680, 2.290, 2.031 to 4 decimals (tests/stats/test_spending.py also checks 2 looks
against scipy's bivariate normal). Early looks whose share of the error rate is below 1e-15 get
no boundary (an infinite c): the race cannot stop there.

**The statistic.** After j pairs with differences d_i in [-1, 1] (candidate minus baseline, each a
task's pass rate over its k attempts), a candidate difference delta0 is rejected when

    |S_j - j delta0| > c_j sqrt(V_j(delta0)),   S_j = sum d_i,
    V_j(delta0) = max(sum (d_i - delta0)^2, j L(delta0)) + 1.

At delta0 = 0 this is the sign-flip score test: under "the two systems are equal" the signs of the
d_i are exchangeable, S_j is a martingale whose conditional variance is sum d_i^2 exactly, and S
over its variance tends to the Brownian motion the boundaries are computed for (the error rate is
kept asymptotically; tests/stats/test_spending.py measures it at 20, 50, 200 and 500 tasks). The
``+ 1`` is one maximal pseudo-pair: it keeps a run of ties from proving anything (two identical
runs give an interval of half-width c_j / j, never [0, 0]) and makes the small suites conservative.
``L(delta0)`` is the least variance a difference on the lattice of k attempts (steps of 1/k) can
have with mean delta0 (the two neighbouring lattice points: (delta0 - l)(u - delta0)): without it
a run of ties would rule out small differences in a few tasks, which a task population with rare
discordance produces easily. The values not rejected form a repeated confidence interval (Jennison
& Turnbull 1989): at every look at once it covers the mean difference with probability about
1 - alpha, and the race reports its running intersection.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError
from trialbook.stats._sequential import SequenceLook, check_alpha, check_min_effect

__all__ = ["SpendingSequence", "obrien_fleming_bounds", "spending_stops"]

_NO_BOUNDARY = 1e-15
"""Error rate below which a look gets no boundary (the race cannot stop there)."""


def _side_spent(t: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """Lan-DeMets O'Brien-Fleming-type spending, per side (alpha/2 at t = 1)."""
    from scipy import stats

    return np.asarray(2 * stats.norm.sf(stats.norm.isf(alpha / 4) / np.sqrt(t)), dtype=float)


@lru_cache(maxsize=32)
def _bounds(looks: int, alpha: float) -> tuple[float, ...]:
    from scipy import optimize, signal, stats

    step = 1.0 / looks
    sd = math.sqrt(step)
    h = min(sd / 12, 0.01)
    w = np.arange(-8.0, 8.0 + h / 2, h)  # W(t) for t <= 1: 8 sd covers all but 1e-15
    reach = math.ceil(8.5 * sd / h)
    kernel = stats.norm.pdf(np.arange(-reach, reach + 1) * h / sd) / sd * h
    cumulative = _side_spent(np.arange(1, looks + 1, dtype=np.float64) / looks, alpha)
    density = stats.norm.pdf(w / sd) / sd  # of W(t_1)
    spent = 0.0
    out: list[float] = []

    def tail(b: float, j: int, current: NDArray[np.float64]) -> float:
        """The chance of first crossing +b at look j (index) from the continuation density."""
        if j == 0:
            return float(stats.norm.sf(b / sd))
        lo = int(np.searchsorted(w, b - 9 * sd))
        return float(np.sum(current[lo:] * stats.norm.sf((b - w[lo:]) / sd)) * h)

    for j in range(looks):
        target = float(cumulative[j]) - spent
        if target < _NO_BOUNDARY:
            b = math.inf
        else:
            b = float(
                optimize.brentq(
                    lambda x, j, current, target: tail(x, j, current) - target,
                    1e-9,
                    9.0,
                    args=(j, density, target),
                    xtol=1e-10,
                )
            )
            spent += tail(b, j, density)
        if j > 0:
            density = signal.fftconvolve(density, kernel, mode="same")
        if math.isfinite(b):  # the continuation region (-b, b), its boundary cells in part
            density = density * np.clip((b - np.abs(w)) / h + 0.5, 0.0, 1.0)
        out.append(b / math.sqrt((j + 1) * step))
    return tuple(out)


def obrien_fleming_bounds(looks: int, alpha: float = 0.05) -> NDArray[np.float64]:
    """The two-sided z boundaries c_1..c_looks of N equally spaced looks (Lan-DeMets O'Brien-
    Fleming-type spending of alpha/2 per side); ``inf`` where a look may not stop."""
    check_alpha(alpha)
    if looks < 1:
        raise ArgumentError(f"looks must be >= 1, got {looks}", argument="looks")
    return np.array(_bounds(int(looks), float(alpha)))


def _check_attempts(attempts: int) -> None:
    if attempts < 1:
        raise ArgumentError(f"attempts must be >= 1, got {attempts}", argument="attempts")


def lattice_floor(delta: NDArray[np.float64], attempts: int) -> NDArray[np.float64]:
    """The least variance of a difference on the lattice of steps 1/attempts with mean delta."""
    low = np.floor(delta * attempts) / attempts
    return np.maximum((delta - low) * (low + 1 / attempts - delta), 0.0)


def _rejects(
    s: NDArray[np.float64],
    q: NDArray[np.float64],
    j: int,
    c: float,
    delta: NDArray[np.float64],
    attempts: int,
) -> NDArray[np.bool_]:
    """Which candidate differences ``delta`` the look rejects (s, q: sum d and sum d^2)."""
    around = q - 2 * delta * s + j * delta * delta  # sum (d_i - delta)^2
    var = np.maximum(around, j * lattice_floor(delta, attempts)) + 1.0
    return np.abs(s - j * delta) > c * np.sqrt(var)


def spending_stops(
    differences: ArrayLike,
    *,
    alpha: float = 0.05,
    min_effect: float | None = None,
    attempts: int = 1,
    horizon: int | None = None,
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Run many races at once, a look after every task pair: each race's decision and stop.

    ``differences``: shape (races, tasks) in race order; ``horizon``: the looks the design spends
    its error rate over (default: the tasks given). Returns ``(decision, used)`` as
    :func:`~trialbook.stats.race_stops` does: +1 improvement, -1 regression, 2 no meaningful
    difference, 0 no stop; ``used`` the pairs seen at the stop (all of them without one).
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] < 1:
        raise ArgumentError("differences must be a (races, tasks) array", argument="differences")
    if np.any(np.abs(d) > 1) or np.isnan(d).any():
        raise ArgumentError("differences must lie in [-1, 1]", argument="differences")
    check_min_effect(min_effect)
    _check_attempts(attempts)
    looks = d.shape[1] if horizon is None else horizon
    if looks < d.shape[1]:
        raise ArgumentError(
            f"horizon {looks} is shorter than the {d.shape[1]} tasks given", argument="horizon"
        )
    c = obrien_fleming_bounds(looks, alpha)
    s, q = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    decision = np.zeros(d.shape[0], dtype=np.int8)
    used = np.full(d.shape[0], d.shape[1], dtype=np.int64)
    open_ = np.ones(d.shape[0], dtype=bool)
    zero = np.zeros(1)
    sides = None if min_effect is None else np.array([-min_effect, min_effect])
    for j in range(d.shape[1]):
        if not math.isfinite(c[j]):
            continue
        sj, qj = s[:, j], q[:, j]
        hit = _rejects(sj[:, None], qj[:, None], j + 1, float(c[j]), zero, attempts)[:, 0]
        hit &= open_
        decision[hit] = np.where(sj[hit] > 0, 1, -1)
        if sides is not None:
            small = _rejects(sj[:, None], qj[:, None], j + 1, float(c[j]), sides, attempts)
            small = small.all(axis=1) & ~hit & open_
            decision[small] = 2
            hit |= small
        used[hit] = j + 1
        open_ &= ~hit
        if not open_.any():
            break
    return decision, used


class SpendingSequence:
    """The group-sequential race, one :meth:`update` per task pair, over ``horizon`` looks.

    The interval is the running intersection of the repeated confidence intervals, read off a
    grid of candidate differences (the decision points 0 and +-min_effect on it exactly) and
    widened by one grid step on each side. Once decided, the decision stays.
    """

    def __init__(
        self,
        *,
        horizon: int,
        alpha: float = 0.05,
        min_effect: float | None = None,
        attempts: int = 1,
        grid: int = 2001,
    ) -> None:
        check_min_effect(min_effect)
        _check_attempts(attempts)
        if grid < 3:
            raise ArgumentError(f"grid must be >= 3, got {grid}", argument="grid")
        self._c = obrien_fleming_bounds(horizon, alpha)
        self.horizon = horizon
        self.min_effect = min_effect
        self.attempts = attempts
        decide = [0.0] if min_effect is None else [0.0, -min_effect, min_effect]
        self._points = np.unique(np.concatenate([np.linspace(-1, 1, grid), decide]))
        self._index = [int(np.searchsorted(self._points, p)) for p in decide]
        self._step = 2 / (grid - 1)
        self._alive = np.ones(self._points.size, dtype=bool)
        self._ever = np.zeros(self._points.size, dtype=bool)
        self._s = 0.0
        self._q = 0.0
        self._low, self._high = -1.0, 1.0
        self.tasks = 0
        """Task pairs seen."""
        self.look = SequenceLook(0, 0.0, -1.0, 1.0, "undecided")

    def update(self, difference: float) -> SequenceLook:
        """Take one task pair's difference (in [-1, 1]) and return the new look."""
        if not -1 <= difference <= 1:
            raise ArgumentError(
                f"a per-task difference must lie in [-1, 1], got {difference}",
                argument="difference",
            )
        if self.tasks >= self.horizon:
            raise ArgumentError(
                f"the race's horizon is {self.horizon} task pairs: no look is left",
                argument="difference",
            )
        self.tasks += 1
        self._s += difference
        self._q += difference * difference
        j, c = self.tasks, float(self._c[self.tasks - 1])
        if math.isfinite(c):
            now = _rejects(np.array(self._s), np.array(self._q), j, c, self._points, self.attempts)
            self._ever |= now
            self._alive &= ~now
            keep = np.flatnonzero(self._alive)
            if keep.size:
                low = float(self._points[keep[0]]) - self._step
                high = float(self._points[keep[-1]]) + self._step
                self._low, self._high = max(self._low, low), min(self._high, high)
            else:  # every grid point ruled out by rounding: the estimate itself stays
                self._low = self._high = self._s / j
        mean = self._s / j
        decision = self.look.decision
        if decision == "undecided":
            if self._ever[self._index[0]]:
                decision = "improvement" if mean > 0 else "regression"
            elif (
                self.min_effect is not None
                and self._ever[self._index[1]]
                and self._ever[self._index[2]]
            ):
                decision = "no meaningful difference"
        self.look = SequenceLook(
            tasks=j, estimate=mean, ci_low=self._low, ci_high=self._high, decision=decision
        )
        return self.look
