"""The frozen results of ``trialbook board``: the board, its systems and its pairs, and its options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trialbook.analysis._estimate import MetricEstimate
from trialbook.analysis._options import IntervalOptions
from trialbook.analysis._protocol import METRIC
from trialbook.errors import ArgumentError

__all__ = [
    "Board",
    "BoardMcNemar",
    "BoardOptions",
    "BoardPair",
    "BoardSystem",
    "CostBasis",
    "Frontier",
    "PairDecision",
]

CostBasis = Literal["per-task", "per-success"]
Frontier = Literal["on", "off", "dominated"]
PairDecision = Literal[
    "a better", "b better", "no detectable difference", "not enough tasks to decide"
]


@dataclass(frozen=True)
class BoardOptions(IntervalOptions):
    """How to rank: the interval settings (their level is 1 - alpha), the metric and the cost."""

    metric: str = "pass@1"
    """pass@K, pass^K, or mean-score (the mean partial credit; every attempt must record one)."""
    cost: CostBasis = "per-task"
    """Cost per task (all attempts' cost / tasks) or per success (/ tasks with a pass)."""
    allow_different_suites: bool = False
    """Rank runs on different dataset_ids over the tasks they all share (said first)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.metric != "mean-score" and not (
            (m := METRIC.match(self.metric)) and m.group(1) != "within@"
        ):
            raise ArgumentError(
                f"metric must be pass@K, pass^K or mean-score, got {self.metric!r}",
                argument="metric",
            )
        if self.cost not in ("per-task", "per-success"):
            raise ArgumentError(
                f"cost must be per-task or per-success, got {self.cost!r}", argument="cost"
            )

    @property
    def alpha(self) -> float:
        """The family-wise level of the pairwise decisions, 1 - confidence."""
        return round(1 - self.confidence, 12)


@dataclass(frozen=True)
class BoardSystem:
    """One system (one run) on the board."""

    run_id: str
    """The run."""
    system: str | None
    """The system, if recorded."""
    source: str
    """The ledger (or result file) it came from."""
    dataset_id: str | None
    """The suite hash, if recorded."""
    tasks: int
    """Tasks ranked (the shared ones)."""
    attempts: int
    """Attempts scored on them."""
    metric: MetricEstimate
    """The metric with score's interval."""
    cost: float | None
    """Cost per task or per success; None when not measured (or, per success, none passed)."""
    cost_low: float | None
    """Lower bound of its task-bootstrap interval."""
    cost_high: float | None
    """Upper bound."""
    cost_note: str | None
    """Why there is no cost (not measured on some attempts, nothing passed), else None."""
    rank: int
    """1 + the number of systems with a higher estimate (ties share the better rank)."""
    rank_low: int
    """1 + the number of systems decided better (Holm-adjusted, at alpha)."""
    rank_high: int
    """N - the number of systems decided worse."""
    frontier: Frontier | None
    """on: on the point frontier (no system beats it on both metric and cost); dominated: another
    system is decided better and significantly cheaper; off: neither; None: no cost."""
    dominated_by: tuple[str, ...]
    """The runs that dominate it with confidence."""
    notes: tuple[str, ...] = ()
    """What its source says of this run alone (an import's notes: a publisher's figure that its
    instances do not give, what the source does not record; an unfinished run); a note every
    run on the board shares is the board's instead."""

    @property
    def leader(self) -> bool:
        """Whether its rank interval contains 1."""
        return self.rank_low == 1


@dataclass(frozen=True)
class BoardMcNemar:
    """A pair's 2x2 table of single attempts, a as the candidate and b as the baseline (as
    ``trialbook compare B A`` prints it)."""

    both: int
    """Tasks both passed."""
    only_baseline: int
    """Tasks only b passed."""
    only_candidate: int
    """Tasks only a passed."""
    neither: int
    """Tasks neither passed."""
    p_value: float
    """The mid-p McNemar p-value: the pair's own."""
    exact_p_value: float
    """The exact conditional p-value (McNemar 1947), for reference: not what decides."""


@dataclass(frozen=True)
class BoardPair:
    """One pair of systems, a ranked above (or level with) b, by compare's paired test."""

    a: str
    """The run ranked higher."""
    b: str
    """The other run."""
    difference: float
    """Metric of a minus metric of b over the shared tasks (no interval: a board decides pairs by
    their adjusted p-values, and compare draws a pair's interval)."""
    p_value: float
    """The paired test's p-value: ``trialbook compare B A``'s."""
    p_adjusted: float
    """Holm-adjusted over all pairs."""
    decision: PairDecision
    """At alpha on the adjusted p-value."""
    mcnemar: BoardMcNemar | None
    """The 2x2 table (a as the candidate: only_candidate is only a) with single attempts."""
    method: str = ""
    """What the pair's test was, in words (random patterns: how many were drawn)."""
    p_value_mc_se: float | None = None
    """Monte Carlo standard error of ``p_value`` from random sign patterns; None when exact."""


@dataclass(frozen=True)
class Board:
    """Everything ``trialbook board`` prints."""

    metric: str
    """The metric ranked."""
    cost_basis: CostBasis
    """per-task or per-success."""
    systems: tuple[BoardSystem, ...]
    """By rank, then run id."""
    pairs: tuple[BoardPair, ...]
    """Every pair, in board order."""
    tasks: int
    """Tasks every run shares (the ones ranked)."""
    alpha: float
    """Family-wise level of the decisions."""
    confidence: float
    """Level of every interval (1 - alpha)."""
    resamples: int
    """Bootstrap resamples (and random sign patterns of the paired test)."""
    seed: int
    """Seed of both."""
    interval_method: str
    """Score's interval of the metric (wilson, percentile or bca)."""
    test_method: str
    """What the paired test was, in words: the most pairs' (each pair has its own)."""
    notes: tuple[str, ...]
    """What the reader should know, most important first."""
    adjustment: str = "holm"
    """The multiplicity adjustment over the pairs."""

    @property
    def leaders(self) -> tuple[BoardSystem, ...]:
        """The systems whose rank interval contains 1."""
        return tuple(s for s in self.systems if s.leader)

    @property
    def no_cost(self) -> tuple[BoardSystem, ...]:
        """The systems off the cost axis."""
        return tuple(s for s in self.systems if s.cost is None)
