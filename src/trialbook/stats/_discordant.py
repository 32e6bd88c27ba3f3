"""The mixture sequential test on discordant pairs, for single-attempt comparisons.

See docs/statistics.md, "Confidence sequences: stopping when the answer is known".

With one attempt per task, only discordant tasks (one system passed, the other failed) carry
information about the difference. Given a discordant task, let p be the chance that it is the
candidate that passed; "no difference" is p = 1/2. After n discordant tasks, s of them won by the
candidate, the Beta(a, a) mixture of likelihood ratios (Robbins 1970, "Statistical methods related
to the law of the iterated logarithm")

    E_n = B(a + s, a + n - s) / B(a, a) / (1/2)^n

is a non-negative martingale under p = 1/2 (an e-process), so by Ville's inequality
``P(exists n: E_n >= 1/alpha) <= alpha``: rejecting the first time it reaches 1/alpha keeps the
error rate at every look. It tests the population estimand (the task population's discordant
tasks); it gives no interval for the mean difference, only the decision.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from trialbook.errors import ArgumentError
from trialbook.stats._sequential import SequenceLook, check_alpha

__all__ = ["DiscordantSequence", "discordant_evalue", "discordant_stops"]


def discordant_evalue(wins: int, losses: int, *, prior: float = 1.0) -> float:
    """The Beta(prior, prior) mixture e-value against p = 1/2 after ``wins`` discordant tasks won
    by the candidate and ``losses`` won by the baseline."""
    if wins < 0 or losses < 0:
        raise ArgumentError(f"wins and losses must be >= 0, got {wins}, {losses}")
    if not prior > 0:
        raise ArgumentError(f"prior must be > 0, got {prior}", argument="prior")
    from scipy.special import betaln  # scipy loads on first use, as in the other stats modules

    n = wins + losses
    log_e = betaln(prior + wins, prior + losses) - betaln(prior, prior) + n * math.log(2)
    return float(math.exp(min(log_e, 700.0)))


def discordant_stops(
    outcomes: ArrayLike, *, alpha: float = 0.05, prior: float = 1.0
) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Many single-attempt races at once, a look after every task pair.

    ``outcomes``: shape (races, tasks), each task's difference in {-1, 0, 1} (candidate minus
    baseline). Returns ``(decision, used)`` as :func:`trialbook.stats.race_stops` does: +1
    improvement, -1 regression, 0 no stop; ``used`` the task pairs seen at the stop.
    """
    from scipy.special import betaln

    check_alpha(alpha)
    o = np.asarray(outcomes)
    if o.ndim != 2 or not np.isin(o, (-1, 0, 1)).all():
        raise ArgumentError(
            "outcomes must be a (races, tasks) array of -1, 0, 1", argument="outcomes"
        )
    wins = np.cumsum(o == 1, axis=1)
    losses = np.cumsum(o == -1, axis=1)
    log_e = (
        betaln(prior + wins, prior + losses) - betaln(prior, prior) + (wins + losses) * math.log(2)
    )
    hit = log_e >= math.log(1 / alpha)
    stopped = hit.any(axis=1)
    first = np.where(stopped, hit.argmax(axis=1), o.shape[1] - 1)
    rows = np.arange(o.shape[0])
    sign = np.sign(wins[rows, first] - losses[rows, first]).astype(np.int8)
    return np.where(stopped, sign, 0).astype(np.int8), (first + 1).astype(np.int64)


class DiscordantSequence:
    """The discordant-pair test as a race's sequence: one :meth:`update` per single-attempt pair
    (difference -1, 0 or +1). Its looks carry the decision and the estimate, no interval."""

    def __init__(self, *, alpha: float = 0.05, prior: float = 1.0) -> None:
        check_alpha(alpha)
        if not prior > 0:
            raise ArgumentError(f"prior must be > 0, got {prior}", argument="prior")
        self.alpha = alpha
        self.prior = prior
        self.wins = 0
        self.losses = 0
        self.tasks = 0
        self.look = SequenceLook(0, 0.0, None, None, "undecided")

    def update(self, difference: float) -> SequenceLook:
        """Take one pair's difference (-1, 0 or +1) and return the new look."""
        if difference not in (-1, 0, 1):
            raise ArgumentError(
                f"the discordant test takes single-attempt pairs (-1, 0, +1), got {difference}",
                argument="difference",
            )
        self.tasks += 1
        self.wins += difference == 1
        self.losses += difference == -1
        decision = self.look.decision
        evidence = discordant_evalue(self.wins, self.losses, prior=self.prior)
        if decision == "undecided" and self.wins != self.losses and evidence >= 1 / self.alpha:
            decision = "improvement" if self.wins > self.losses else "regression"
        estimate = (self.wins - self.losses) / self.tasks
        self.look = SequenceLook(self.tasks, estimate, None, None, decision)
        return self.look
