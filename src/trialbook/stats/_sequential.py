"""Anytime-valid confidence sequences for the mean per-task difference of two systems.

See docs/statistics.md, "Confidence sequences: stopping when the answer is known".

A per-task difference ``d`` (candidate minus baseline, each the mean over the task's k attempts) lies
in [-1, 1]. The betting machinery works on [0, 1], so every difference enters as ``x = (d + 1) / 2``
and every bound leaves as ``d = 2 m - 1``; the mean difference ``delta`` is ``2 mu - 1``.

For each candidate mean ``m`` a gambler bets against "the mean is m". Hedged capital (Waudby-Smith &
Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 2023, Theorem 3 with the
predictable plug-in bets of their eq. (26)):

    K+_t(m) = prod_i (1 + l+_i(m) (x_i - c_i(m)))    K-_t(m) = prod_i (1 - l-_i(m) (x_i - c_i(m)))
    K_t(m)  = max(K+_t(m), K-_t(m)) / 2
    l_t     = min(3/4, sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t))))
    s2_t    = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1),   mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1)
    l+_t(m) = min(l_t, 3 / (4 c_t(m))),  l-_t(m) = min(l_t, 3 / (4 (1 - c_t(m))))

``K+`` and ``K-`` are non-negative martingales at the true mean (the bets use only the past), so
is ``(K+ + K-) / 2``, which bounds ``K_t`` from above; by Ville's inequality
``P(exists t: K_t(true mean) >= 1/alpha) <= alpha``; the set ``{m: K_t(m) < 1/alpha}`` is a
confidence sequence, valid at every look at once, and so is its running intersection (kept here).

Two estimands, two centres ``c_t(m)``:

- ``population`` (with replacement, ``total=None``): the tasks are independent draws from a task
  population; the sequence covers the population's mean difference. ``c_t(m) = m``.
- ``suite`` (without replacement, ``total=N``): the tasks of a finite suite of N are taken in a
  uniformly random order; the sequence covers the mean difference the *whole suite* would show with
  these attempts (Waudby-Smith & Ramdas, "Confidence sequences for sampling without replacement",
  NeurIPS 2020): the mean of what remains is ``c_t(m) = (N m - S_{t-1}) / (N - t + 1)``,
  and m is impossible once c leaves [0, 1]. The interval is also cut to what the unseen tasks could
  still make of the mean, ``[S_t / N, (S_t + N - t) / N]``, so after the last task it is the
  full-suite value exactly.

The interval is read off a grid of candidate means (the decision points 0 and +-min_effect are on
it exactly); at each look the set of grid points not rejected is widened by one grid step on each
side, which still holds every non-rejected mean (the set is an interval: the hedged capital is
quasi-convex in m). An update costs one pass over the grid points still inside the running
interval (those outside were rejected at some look): O(grid) arithmetic at most, no history.

For single-attempt pairs, :func:`discordant_evalue` is the mixture sequential test on discordant
pairs (Robbins 1970; a Beta(a, a) mixture of binomial likelihood ratios against p = 1/2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError

__all__ = [
    "SEQUENCE_METHODS",
    "BettingState",
    "PairedSequence",
    "SequenceLook",
    "SequenceMethod",
    "race_stops",
    "task_order",
]

SequenceMethod = Literal["spending", "betting-population", "betting-suite", "discordant"]
SEQUENCE_METHODS: tuple[SequenceMethod, ...] = (
    "spending",
    "betting-population",
    "betting-suite",
    "discordant",
)
"""``spending`` (a race's default): the group-sequential test over the race's known horizon
(Lan-DeMets O'Brien-Fleming-type alpha spending, :mod:`trialbook.stats._spending`), its repeated
confidence interval for the task population's mean difference; ``betting-population`` (the default
of ``compare --sequential``, whose runs have no horizon): the betting confidence sequence, with
replacement, covers the task population's mean difference for an unbounded stream;
``betting-suite``: without replacement, covers the full suite's; ``discordant``: the Beta-mixture
test on discordant single-attempt pairs (a decision, no interval)."""

_CAP = 0.75
"""The largest bet (the paper's c, which it suggests at 1/2 or 3/4): at most three quarters of the
capital rides on one task. 3/4 by measurement (benchmarks/bench_race.py): on the simulated 500-task
designs a race stops on 32% of the suite instead of 38% (single attempt, +0.10) and 24% instead of
34% (3 attempts), the null error rate still well below alpha."""


def check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1 or math.isnan(alpha):
        raise ArgumentError(f"alpha must be in (0, 1), got {alpha}", argument="alpha")


def check_min_effect(min_effect: float | None) -> None:
    if min_effect is not None and not 0 < min_effect < 1:
        raise ArgumentError(
            f"min_effect must be in (0, 1) (a difference of pass rates), got {min_effect}",
            argument="min_effect",
        )


def task_order(task_ids: Sequence[str], seed: int) -> tuple[str, ...]:
    """The seeded uniformly random order in which a race takes the tasks: the ids sorted by the
    SHA-256 digest of ``"trialbook.task_order/1\0{seed}\0{task_id}"`` (ties, which SHA-256 makes
    practically impossible, by id). It depends on the seed and the set of ids only (never on the
    order they were listed in), and, unlike a generator's permutation (numpy does not promise to
    keep its streams across versions), on no library's version: a replay of two runs years later
    takes the tasks in the same order as the race that made them."""
    import hashlib

    def key(task_id: str) -> tuple[bytes, str]:
        text = f"trialbook.task_order/1\0{int(seed)}\0{task_id}"
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), task_id

    return tuple(sorted(set(task_ids), key=key))


class BettingState:
    """Hedged betting capital for many races (rows) at many candidate means (columns) at once.

    Mutable on purpose: one :meth:`update` per task pair, O(races x points), no history kept.
    """

    def __init__(
        self, points: NDArray[np.float64], *, races: int, alpha: float, total: int | None
    ) -> None:
        check_alpha(alpha)
        if total is not None and total < 1:
            raise ArgumentError(f"total must be >= 1, got {total}", argument="total")
        self.points = np.asarray(points, dtype=np.float64)
        """Candidate means on the [0, 1] scale."""
        self.alpha = alpha
        self.total = total
        self.t = 0
        """Task pairs seen."""
        self.sum = np.zeros(races)
        self._sq = np.zeros(races)
        self._log_bet = math.log(2 / alpha)
        self._threshold = math.log(2 / alpha)  # log(1/alpha) for K = max(K+, K-) / 2
        shape = (races, self.points.size)
        self.log_plus = np.zeros(shape)
        self.log_minus = np.zeros(shape)
        self.rejected_now = np.zeros(shape, dtype=bool)
        """Rejected at the latest look."""
        self.rejected_ever = np.zeros(shape, dtype=bool)
        """Rejected at some look (the running intersection's complement)."""
        with np.errstate(divide="ignore"):  # the caps of the bets at m = 0 and 1 are infinite
            self._cap_plus = _CAP / self.points
            self._cap_minus = _CAP / (1 - self.points)

    def update(self, x: NDArray[np.float64], cols: slice | None = None) -> None:
        """Take one task pair per race: ``x`` on the [0, 1] scale, shape (races,).

        ``cols``: update only these candidate means, the others counting as rejected at this
        look (a sequence that keeps a running intersection passes the points still inside it:
        the cost of a look falls as the interval narrows).
        """
        cols = cols if cols is not None else slice(None)
        t = self.t + 1
        var = (0.25 + self._sq) / t  # s2_{t-1}
        lam = np.minimum(_CAP, np.sqrt(2 * self._log_bet / (var * t * math.log1p(t))))[:, None]
        m = self.points[None, cols]
        if self.total is None:  # the caps are fixed: no division, no warnings to silence
            lam_plus = np.minimum(lam, self._cap_plus[None, cols])
            lam_minus = np.minimum(lam, self._cap_minus[None, cols])
            step = x[:, None] - m
            self.log_plus[:, cols] += np.log1p(lam_plus * step)
            self.log_minus[:, cols] += np.log1p(-lam_minus * step)
            now = np.maximum(self.log_plus[:, cols], self.log_minus[:, cols]) >= self._threshold
        else:
            left = self.total - (t - 1)
            centre = (self.total * m - self.sum[:, None]) / left
            possible = (centre >= 0) & (centre <= 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                lam_plus = np.minimum(lam, _CAP / centre)
                lam_minus = np.minimum(lam, _CAP / (1 - centre))
                step = x[:, None] - centre
                self.log_plus[:, cols] += np.where(possible, np.log1p(lam_plus * step), 0.0)
                self.log_minus[:, cols] += np.where(possible, np.log1p(-lam_minus * step), 0.0)
            log_k = np.maximum(self.log_plus[:, cols], self.log_minus[:, cols])
            now = ~possible | (log_k >= self._threshold)
        self.sum += x
        mean = (0.5 + self.sum) / (t + 1)
        self._sq += (x - mean) ** 2
        self.t = t
        if self.total is not None:
            now |= ~self._feasible()[:, cols]
        self.rejected_now.fill(True)
        self.rejected_now[:, cols] = now
        self.rejected_ever[:, cols] |= now

    def bounds(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """What the unseen tasks could still make of the mean ([0, 1] without a finite total)."""
        if self.total is None:
            return np.zeros_like(self.sum), np.ones_like(self.sum)
        return self.sum / self.total, (self.sum + self.total - self.t) / self.total

    def _feasible(self) -> NDArray[np.bool_]:
        low, high = self.bounds()
        eps = 1e-12
        m = self.points[None, :]
        return (m >= low[:, None] - eps) & (m <= high[:, None] + eps)


def race_stops(
    differences: ArrayLike,
    *,
    alpha: float = 0.05,
    total: int | None = None,
    min_effect: float | None = None,
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Run many races at once, a look after every task pair: each race's decision and stop.

    ``differences``: shape (races, tasks), per-task differences in [-1, 1], in race order.
    ``total``: the suite's size for the without-replacement (``betting-suite``) sequence, None for
    the population one. Returns ``(decision, used)``: decision +1 (the sequence excludes 0 from
    below: improvement), -1 (regression), 2 (every difference of at least ``min_effect`` excluded:
    no meaningful difference), 0 (no stop before the tasks ran out); ``used`` is the number of
    task pairs seen at the stop (all of them without one).

    Only the decision points are tracked (0 and +-min_effect), O(races) per look: the same capital
    as :class:`PairedSequence`, which also tracks a grid for the interval it prints.
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] < 1:
        raise ArgumentError("differences must be a (races, tasks) array", argument="differences")
    check_min_effect(min_effect)
    if np.any(np.abs(d) > 1) or np.isnan(d).any():
        raise ArgumentError("differences must lie in [-1, 1]", argument="differences")
    points = [0.5] if min_effect is None else [0.5, 0.5 - min_effect / 2, 0.5 + min_effect / 2]
    state = BettingState(np.array(points), races=d.shape[0], alpha=alpha, total=total)
    decision = np.zeros(d.shape[0], dtype=np.int8)
    used = np.full(d.shape[0], d.shape[1], dtype=np.int64)
    open_ = np.ones(d.shape[0], dtype=bool)
    for t in range(d.shape[1]):
        state.update((d[:, t] + 1) / 2)
        rejected = state.rejected_ever
        mean = state.sum / state.t
        zero = rejected[:, 0] & open_
        decision[zero] = np.where(mean[zero] > 0.5, 1, -1)
        if min_effect is not None:
            small = rejected[:, 1] & rejected[:, 2] & ~rejected[:, 0] & open_
            decision[small] = 2
            zero |= small
        used[zero] = t + 1
        open_ &= ~zero
        if not open_.any():
            break
    return decision, used


@dataclass(frozen=True)
class SequenceLook:
    """The confidence sequence after a look: the running interval and what it decides."""

    tasks: int
    """Task pairs seen."""
    estimate: float
    """Mean difference of the pairs seen (candidate - baseline)."""
    ci_low: float | None
    """Lower bound of the running interval for the mean difference (None: the method gives a
    decision only)."""
    ci_high: float | None
    """Upper bound."""
    decision: Literal["improvement", "regression", "no meaningful difference", "undecided"]
    """improvement / regression: the sequence excluded 0; no meaningful difference: it excluded
    every difference of at least min_effect; undecided: neither yet."""


class PairedSequence:
    """A confidence sequence for the mean per-task difference, one :meth:`update` per task pair.

    ``total``: the suite's size (the ``betting-suite`` estimand, the mean difference over the
    whole suite); None: the ``betting-population`` estimand (tasks as draws from a population).
    ``grid``: candidate means for the interval (its resolution is 2/(grid-1) in difference).
    Once decided, the decision stays (a race stops there); the interval keeps narrowing.
    """

    def __init__(
        self,
        *,
        alpha: float = 0.05,
        total: int | None = None,
        min_effect: float | None = None,
        grid: int = 2001,
    ) -> None:
        check_alpha(alpha)
        check_min_effect(min_effect)
        if grid < 3:
            raise ArgumentError(f"grid must be >= 3, got {grid}", argument="grid")
        decide = [0.5] if min_effect is None else [0.5, 0.5 - min_effect / 2, 0.5 + min_effect / 2]
        points = np.unique(np.concatenate([np.linspace(0, 1, grid), decide]))
        self._index = [int(np.searchsorted(points, p)) for p in decide]
        self._step = 1 / (grid - 1)
        self._state = BettingState(points, races=1, alpha=alpha, total=total)
        self._low, self._high = 0.0, 1.0
        self.min_effect = min_effect
        self.look = SequenceLook(0, 0.0, -1.0, 1.0, "undecided")

    @property
    def tasks(self) -> int:
        """Task pairs seen."""
        return self._state.t

    def update(self, difference: float) -> SequenceLook:
        """Take one task pair's difference (in [-1, 1]) and return the new look."""
        if not -1 <= difference <= 1:
            raise ArgumentError(
                f"a per-task difference must lie in [-1, 1], got {difference}",
                argument="difference",
            )
        if self.tasks >= (self._state.total or math.inf):
            raise ArgumentError(
                f"the suite has {self._state.total} tasks: no pair is left to take",
                argument="difference",
            )
        state = self._state
        # only the candidate means still inside the running interval can matter again (those
        # outside it were rejected at some look); the decision points are among them until then
        lo = int(np.searchsorted(state.points, self._low - 1e-12))
        hi = int(np.searchsorted(state.points, self._high + 1e-12, side="right"))
        state.update(np.array([(difference + 1) / 2]), slice(lo, hi))
        keep = ~state.rejected_now[0]
        if keep.any():
            where = np.flatnonzero(keep)
            low = float(state.points[where[0]]) - self._step
            high = float(state.points[where[-1]]) + self._step
            self._low, self._high = max(self._low, low), min(self._high, high)
        b_low, b_high = state.bounds()
        self._low = max(self._low, float(b_low[0]), 0.0)
        self._high = min(self._high, float(b_high[0]), 1.0)
        if self._low > self._high:  # only by rounding at the closing look of a finite suite
            self._low = self._high = float(state.sum[0] / (state.total or state.t))
        mean = float(state.sum[0]) / state.t
        decision = self.look.decision
        if decision == "undecided":
            ever = state.rejected_ever[0]
            if ever[self._index[0]]:
                decision = "improvement" if mean > 0.5 else "regression"
            elif self.min_effect is not None and ever[self._index[1]] and ever[self._index[2]]:
                decision = "no meaningful difference"
        self.look = SequenceLook(
            tasks=state.t,
            estimate=2 * mean - 1,
            ci_low=2 * self._low - 1,
            ci_high=2 * self._high - 1,
            decision=decision,
        )
        return self.look
