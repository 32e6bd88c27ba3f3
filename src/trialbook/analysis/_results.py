"""The frozen results of scoring: what ``trialbook score`` prints, per run, stratum and task."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from trialbook.analysis._checks import CheckRate
from trialbook.analysis._estimate import MetricEstimate
from trialbook.analysis._failures import Failures
from trialbook.analysis._faults import FaultTable
from trialbook.analysis._selection import SelectionSummary
from trialbook.ledger import Completion, Provenance
from trialbook.stats import BootstrapResult, CostSummary, EffortSummary, VarianceComponents

__all__ = [
    "AcrossRuns",
    "MetricEstimate",
    "RunScore",
    "ScoreReport",
    "StratumScore",
    "TaskScore",
    "Weighting",
]

Weighting = Literal["equal", "declared"]


@dataclass(frozen=True)
class TaskScore:
    """One task's record in one run.

    Its pass@k and pass^k for any k follow from (attempts, passes); they are not repeated here
    (with 100 attempts that would be 200 numbers per task). ``trialbook passk`` computes them.
    """

    task_id: str
    """The task."""
    stratum: str | None
    """Its stratum, if recorded."""
    weight: float | None
    """Its declared weight, if recorded."""
    attempts: int
    """n: scored attempts."""
    passes: int
    """c: passing attempts."""
    first_attempt_passed: bool
    """Whether the attempt with the lowest index passed."""
    timeouts: int | None
    """Attempts stopped by the timeout (None when the source recorded no attempt's)."""
    infra_errors: int
    """Attempts with status infra_error (counted as failures unless dropped)."""


@dataclass(frozen=True)
class StratumScore:
    """The metrics of the tasks of one stratum."""

    stratum: str
    """Its name."""
    tasks: int
    """Tasks in it."""
    attempts: int
    """Scored attempts in it."""
    metrics: dict[str, MetricEstimate]
    """pass@k and pass^k as for the whole run."""


@dataclass(frozen=True)
class RunScore:
    """The scorecard of one run."""

    run_id: str
    """The run."""
    system: str | None
    """The system under test, if recorded."""
    dataset_id: str | None
    """The frozen suite's hash, if recorded."""
    tasks: int
    """Tasks scored."""
    attempts: int
    """Attempts scored (after quarantine and any dropped infrastructure errors)."""
    ks: tuple[int, ...]
    """The budgets reported."""
    metrics: dict[str, MetricEstimate]
    """``pass@K`` and ``pass^K`` for every K in ``ks`` (a repair run: ``within@K``; a
    human-selected run: ``delivered``, when some row records ``selected``; see ``protocol``)."""
    pooled_attempt_rate: MetricEstimate
    """All passes / all attempts: attempt-level, so tasks with more attempts weigh more."""
    first_attempt_rate: MetricEstimate
    """Share of tasks whose lowest-index attempt passed."""
    passes_after_timeout: int
    """Attempts that timed out and still passed (only in runs that declare graded_after_timeout)."""
    mean_score: MetricEstimate | None
    """Mean over tasks of each task's mean partial credit (``score``), when every scored attempt
    records one; None otherwise (a note says why when only some do)."""
    bootstrap: BootstrapResult = field(repr=False)
    """The settings and raw result of the run-level bootstrap."""
    interval_method: str
    """What drew ``ci_low``/``ci_high``: wilson, percentile or bca (see IntervalOptions.method)."""
    weights: Weighting
    """equal, or declared (the suite's weights)."""
    variance: VarianceComponents | None
    """Between/within-task variance of attempt outcomes; None if the design cannot separate them."""
    effort: EffortSummary
    """Companion figures (attempts used, timeouts, helpers, cache, infrastructure errors)."""
    cost: CostSummary
    """Cost, tokens and cost per success."""
    strata: tuple[StratumScore, ...]
    """Per-stratum metrics (empty when no stratum is recorded)."""
    per_task: tuple[TaskScore, ...]
    """Every task's record."""
    quarantined: tuple[tuple[str, int], ...]
    """(task_id, attempt_index) of rows flagged oracle_leak: reported, never scored."""
    infra_errors: int
    """Attempts with status infra_error in the run."""
    infra_errors_dropped: bool
    """Whether they were dropped (True) or counted as failures (False)."""
    notes: tuple[str, ...]
    """Things the reader should know (short tasks, dropped rows, ...); an imported run's source
    notes first."""
    not_recorded: dict[str, int] = field(default_factory=dict)
    """Per required field the run's source did not record, on how many scored attempts; figures
    from such a field are over the attempts that record it, and "not recorded by the source" when
    none does (effort holds NaN then, never a made-up 0)."""
    source: Provenance | None = None
    """Where an imported run came from (source, version, files and their hashes); None for ours."""
    completion: Completion | None = None
    """How far a run of our own harness got (finished, interrupted, not finished; attempts done of
    planned); None where the ledger does not say (a JSONL or CSV file, an imported run)."""
    reruns: int = 0
    """Attempts run again after the harness lost them (``retry`` > 0): each counts once, by its
    re-run; the infra_error rows they superseded stay in the ledger and count in no figure."""
    selection: SelectionSummary | None = None
    """Pool coverage, delivered success and selector misses, where rows record ``selected``."""
    protocol: str | None = None
    """How the attempts were made (independent, repair, human-selected); None: not recorded,
    read as independent. It decides what ``metrics`` holds: ``pass@K`` and ``pass^K`` for
    independent attempts, ``within@K`` (success within K rounds) for repair, ``delivered`` for
    human-selected."""
    failures: Failures | None = None
    """The attempts that did not pass, by outcome and by recorded error."""
    faults: FaultTable | None = None
    """Fault type x outcome of the fault-case tasks (stratum ``fault:<type>`` or
    ``regression:<type>``), which the headline and every other figure leave out; None if none."""
    checks: tuple[CheckRate, ...] = ()
    """Per named check of the grader, its pass rate over tasks and its failure reasons
    (``analysis/_checks.py``); empty when no scored attempt records checks."""


@dataclass(frozen=True)
class AcrossRuns:
    """pass@1 over several runs of one system on one suite: median and 5-95% band, never the best."""

    system: str | None
    """The system."""
    dataset_id: str | None
    """The suite."""
    runs: int
    """How many runs."""
    median: float
    """Median pass@1 over runs."""
    p05: float
    """5th percentile over runs."""
    p95: float
    """95th percentile over runs."""


@dataclass(frozen=True)
class ScoreReport:
    """Everything ``trialbook score`` prints."""

    source: str
    """The ledger scored."""
    runs: tuple[RunScore, ...]
    """One scorecard per run."""
    across_runs: tuple[AcrossRuns, ...]
    """Run-to-run spread for systems with two or more runs on the same suite."""
