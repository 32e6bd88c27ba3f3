"""The interval settings every analysis shares: their defaults and their validation, once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trialbook.errors import ArgumentError

IntervalMethod = Literal["wilson", "percentile", "bca"]
INTERVAL_METHODS: tuple[IntervalMethod, ...] = ("wilson", "percentile", "bca")

__all__ = ["INTERVAL_METHODS", "IntervalMethod", "IntervalOptions"]


@dataclass(frozen=True)
class IntervalOptions:
    """How intervals are drawn: level, method, and the task bootstrap's resamples and seed.

    Every options object of :mod:`trialbook.analysis` extends this one, so the defaults live here
    and nowhere else (the command line reads them from here too). Invalid values raise
    :class:`~trialbook.errors.ArgumentError` naming the argument when the object is made.
    """

    confidence: float = 0.95
    """Two-sided interval level, strictly between 0 and 1."""
    resamples: int = 10_000
    """Bootstrap resamples over tasks (at least 2)."""
    seed: int = 0
    """Bootstrap seed (reported with every interval), a whole number >= 0."""
    method: IntervalMethod = "wilson"
    """A score's interval: ``wilson`` (default: the Wilson interval with the effective number of
    tasks, honest at few tasks; see trialbook.stats.wilson_task_interval), or the task bootstrap's
    ``percentile`` or ``bca`` interval. A comparison's interval always agrees with its test."""

    def __post_init__(self) -> None:
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, int | float) or not 0 < c < 1:
            raise ArgumentError(
                f"confidence must lie strictly between 0 and 1, got {c!r}", argument="confidence"
            )
        for name, low in (("resamples", 2), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ArgumentError(
                    f"{name} must be >= {low} (a whole number), got {value!r}", argument=name
                )
        if self.method not in INTERVAL_METHODS:
            raise ArgumentError(
                f"method must be one of {', '.join(INTERVAL_METHODS)}, got {self.method!r}",
                argument="method",
            )
