"""Paired comparison of two runs on the same suite: the policy between ledgers and the paired statistics.

- Runs are named ``LEDGER`` (a ledger holding one run) or ``LEDGER:RUN_ID``.
- Pairing is by task: only tasks in both runs count; how many were dropped on each side is reported.
- A differing ``dataset_id`` is an error unless ``allow_different_suites``; a differing grader version
  is an error unless ``allow_grader_change``; differing model, harness or sandbox are warnings.
- One procedure gives the p-value, the interval and the decision: the paired sign-flip test over
  tasks and the score interval that agrees with it (mid-p McNemar and Tango's interval with
  single attempts; see trialbook.stats.paired_test). Never a test that treats attempts of one task as independent.
- The decision rule (docs/methodology.md, "Paired comparison and the decision rule"): improvement when the interval lies above 0, regression when below, else no
  detectable difference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from trialbook.analysis._checks import CheckMove, check_moves
from trialbook.analysis._compare_load import _load, _metric_values, _Run, _split_spec
from trialbook.analysis._options import IntervalOptions
from trialbook.analysis._protocol import side_metric
from trialbook.errors import ArgumentError
from trialbook.ledger import Ledger, read_ledger
from trialbook.stats import (
    McNemarResult,
    PairedDifference,
    PairedTest,
    holm,
    mcnemar_exact,
    paired_difference,
    paired_test,
)

__all__ = [
    "CompareOptions",
    "Comparison",
    "RunSide",
    "StratumDifference",
    "TaskDifference",
    "compare_runs",
]

Decision = Literal[
    "improvement", "regression", "no detectable difference", "not enough tasks to decide"
]


@dataclass(frozen=True)
class CompareOptions(IntervalOptions):
    """How to compare: the interval settings, the metric, and what differences to accept."""

    metric: str = "pass@1"
    """pass@K or pass^K; for runs of the repair protocol, within@K (success within K rounds),
    and pass@K is read as within@K there (a repair run has no pass@K)."""
    allow_different_suites: bool = False
    """Compare runs on different dataset_ids (the report then says so first)."""
    allow_grader_change: bool = False
    """Compare runs graded by different grader versions."""
    mixed_protocols: bool = False
    """Compare runs whose attempt protocols differ (independent, repair, human-selected): each
    side is then measured by its own protocol's figure, and the comparison is labelled so."""


@dataclass(frozen=True)
class RunSide:
    """One side of a comparison."""

    source: str
    """The ledger file."""
    run_id: str
    """The run."""
    system: str | None
    """The system, if recorded."""
    dataset_id: str | None
    """The suite hash, if recorded."""
    tasks: int
    """Tasks in the run."""
    estimate: float
    """The metric over the paired tasks."""
    earlier_runs: int
    """Other runs of the same system on the same suite in this ledger (re-runs are visible)."""


@dataclass(frozen=True)
class StratumDifference:
    """The paired difference within one stratum."""

    stratum: str
    """Its name."""
    tasks: int
    """Paired tasks in it."""
    estimate: float
    """Mean difference (candidate - baseline)."""
    ci_low: float
    """Lower bound."""
    ci_high: float
    """Upper bound."""
    p_value: float | None
    """Unadjusted p-value."""
    p_holm: float | None
    """Holm-adjusted over the strata."""


@dataclass(frozen=True)
class TaskDifference:
    """One paired task: its metric value in each run."""

    task_id: str
    """The task."""
    stratum: str | None
    """Its stratum in the baseline run, if recorded."""
    baseline: float
    """The metric of the task in the baseline run (0 or 1 with one attempt)."""
    candidate: float
    """The metric of the task in the candidate run."""

    @property
    def difference(self) -> float:
        """candidate - baseline."""
        return self.candidate - self.baseline


@dataclass(frozen=True)
class Comparison:
    """Everything ``trialbook compare`` prints."""

    metric: str
    """The metric compared."""
    tasks: int
    """Paired tasks."""
    dropped_baseline_only: int
    """Tasks only the baseline ran (not compared)."""
    dropped_candidate_only: int
    """Tasks only the candidate ran (not compared)."""
    baseline: RunSide
    """The baseline run."""
    candidate: RunSide
    """The candidate run."""
    difference: PairedDifference
    """Candidate minus baseline, paired by task, with the bootstrap interval."""
    ci_method: str
    """What produced the deciding interval."""
    ci_low: float
    """Lower bound of the deciding interval."""
    ci_high: float
    """Upper bound of the deciding interval."""
    p_value: float | None
    """p-value of the one procedure (the mid-p sign-flip test; mid-p McNemar for single attempts)."""
    mcnemar: McNemarResult | None
    """The 2x2 table, when both runs have a single attempt per task."""
    decision: Decision
    """The decision rule applied to the deciding interval: act only when it excludes 0."""
    strata: tuple[StratumDifference, ...]
    """Per-stratum differences with Holm-adjusted p-values."""
    warnings: tuple[str, ...]
    """Provenance differences and other things to know, most important first."""
    confidence: float
    """Interval level."""
    resamples: int
    """Bootstrap resamples."""
    seed: int
    """Bootstrap seed."""
    per_task: tuple[TaskDifference, ...] = ()
    """Every paired task, in the baseline's order."""
    fault_tasks_left_out: int = 0
    """Fault-case tasks (stratum fault:<type> or regression:<type>) kept out of the comparison."""
    protocols: tuple[str | None, str | None] = (None, None)
    """The attempt protocol of the baseline and of the candidate (None: not recorded, read as
    independent); they differ only when ``mixed_protocols`` allowed it."""
    checks: tuple[CheckMove, ...] = ()
    """Per named check both runs record: its paired difference over the shared tasks."""
    checks_not_compared: tuple[str, ...] = ()
    """Checks both runs record, but on fewer than two shared tasks (no interval): not compared."""
    p_value_mc_se: float | None = None
    """Monte Carlo standard error of ``p_value`` when it comes from random sign patterns (more
    than 16 tasks with several attempts); None when it is exact."""

    @property
    def improved_tasks(self) -> tuple[str, ...]:
        """Tasks whose metric rose (with one attempt each: failed in the baseline, passed now)."""
        return tuple(t.task_id for t in self.per_task if t.candidate > t.baseline)

    @property
    def worsened_tasks(self) -> tuple[str, ...]:
        """Tasks whose metric fell (with one attempt each: passed in the baseline, failed now)."""
        return tuple(t.task_id for t in self.per_task if t.candidate < t.baseline)


def _decide(test: PairedTest) -> Decision:
    """The decision rule on the one procedure's result: act only when its interval excludes 0
    (equivalently, its p-value is below 1 - confidence); never on a design that cannot decide."""
    if not test.decidable:
        return "not enough tasks to decide"
    if test.rejects:
        return "improvement" if test.estimate > 0 else "regression"
    return "no detectable difference"


def compare_runs(
    baseline: str,
    candidate: str,
    options: CompareOptions | None = None,
    *,
    read: Callable[[Path], Ledger] | None = None,
) -> Comparison:
    """Compare two runs task by task (``LEDGER`` or ``LEDGER:RUN_ID`` each).

    ``read`` turns a path into a validated ledger (default :func:`trialbook.ledger.read_ledger`;
    the command line passes one that also reads other harnesses' files).
    """
    options = options or CompareOptions()
    reader = read or read_ledger
    a, b = _load(baseline, reader), _load(candidate, reader)
    warnings: list[str] = [
        f"{role} run {run.run_id} is {run.incomplete}: compared on the attempts made so far"
        for role, run in (("baseline", a), ("candidate", b))
        if run.incomplete
    ]
    metric_a = side_metric(a.protocol, a.run_id, options.metric)
    metric_b = side_metric(b.protocol, b.run_id, options.metric)
    pa, pb = a.protocol or "independent", b.protocol or "independent"
    if pa != pb:
        text = (
            f"the runs' attempt protocols differ (baseline {pa}, candidate {pb}): "
            f"{metric_a} and {metric_b} answer different questions"
        )
        if not options.mixed_protocols:
            raise ArgumentError(f"{text}; pass --mixed-protocols to compare them anyway")
        warnings.insert(0, f"MIXED PROTOCOLS: {text}")
    ds_a, ds_b = a.meta["dataset_id"], b.meta["dataset_id"]
    if ds_a != ds_b:
        text = f"the runs are on different suites (dataset_id {sorted(ds_a)} vs {sorted(ds_b)})"
        if not options.allow_different_suites:
            raise ArgumentError(f"{text}; pass --allow-different-suites to compare them anyway")
        warnings.append(f"NOT THE SAME SUITE: {text}")
    ga, gb = a.meta["grader_version"], b.meta["grader_version"]
    if ga != gb:
        text = f"grader_version differs ({sorted(ga)} vs {sorted(gb)})"
        if not options.allow_grader_change:
            raise ArgumentError(
                f"{text}: scores are not comparable; pass --allow-grader-change to compare anyway"
            )
        warnings.append(f"{text}: differences may come from the grader")
    changed = [
        name
        for name in ("system", "model_version", "harness_version", "sandbox")
        if a.meta[name] != b.meta[name]
    ]
    if len(changed) > 1:
        warnings.append(
            "more than one factor differs between the runs ("
            + ", ".join(f"{n}: {sorted(a.meta[n])} vs {sorted(b.meta[n])}" for n in changed)
            + "): the difference cannot be credited to one of them"
        )
    elif changed and changed[0] != "system":
        n0 = changed[0]
        warnings.append(f"{n0} differs ({sorted(a.meta[n0])} vs {sorted(b.meta[n0])})")

    pos_b = {label: i for i, label in enumerate(b.task_ids)}
    # in task-id order, not the order the baseline's attempts finished in: every figure and list
    # is then the same whatever order the ledger's rows came in
    pairs = sorted(
        ((i, pos_b[label]) for i, label in enumerate(a.task_ids) if label in pos_b),
        key=lambda pair: a.task_ids[pair[0]],
    )
    if not pairs:
        raise ArgumentError("the runs share no task: nothing to compare")
    ia = np.array([p[0] for p in pairs], dtype=np.intp)
    ib = np.array([p[1] for p in pairs], dtype=np.intp)
    dropped_a, dropped_b = len(a.task_ids) - len(pairs), len(b.task_ids) - len(pairs)
    if dropped_a or dropped_b:
        warnings.append(
            f"{dropped_a} baseline-only and {dropped_b} candidate-only task(s) were not compared"
        )
    va = _metric_values(a, ia, metric_a)
    vb = _metric_values(b, ib, metric_b)
    # the paired and unpaired SEs, the correlation and the MDE: what pairing bought (they do not
    # decide; the test below does)
    diff = paired_difference(
        va, vb, confidence=options.confidence, resamples=options.resamples, seed=options.seed
    )
    single = bool((a.n[ia] == 1).all() and (b.n[ib] == 1).all())
    test = paired_test(
        vb - va, confidence=options.confidence, resamples=options.resamples, seed=options.seed
    )
    mcn = None
    if single:
        fa, fb = a.first[ia], b.first[ib]
        both, only_a = int((fa & fb).sum()), int((fa & ~fb).sum())
        only_b, neither = int((~fa & fb).sum()), int((~fa & ~fb).sum())
        mcn = McNemarResult(
            both=both,
            only_baseline=only_a,
            only_candidate=only_b,
            neither=neither,
            p_value=test.p_value,
            difference=test.estimate,
            ci_low=test.ci_low,
            ci_high=test.ci_high,
            exact_p_value=mcnemar_exact(only_a, only_b),
        )
    ci_method, low, high, p_value = test.method, test.ci_low, test.ci_high, test.p_value

    strata: list[StratumDifference] = []
    names = sorted({s for s in (a.strata[i] for i in ia) if s is not None})
    if names:
        sa = np.array([a.strata[i] or "" for i in ia], dtype=object)
        raw: list[StratumDifference] = []
        for s in names:
            sel = sa == s
            sd = paired_test(
                vb[sel] - va[sel],
                confidence=options.confidence,
                resamples=options.resamples,
                seed=options.seed,
            )
            p = sd.p_value
            raw.append(
                StratumDifference(s, int(sel.sum()), sd.estimate, sd.ci_low, sd.ci_high, p, None)
            )
        known = [r.p_value for r in raw if r.p_value is not None]
        adjusted = iter(holm(known).tolist()) if known else iter(())
        strata = [
            StratumDifference(
                r.stratum,
                r.tasks,
                r.estimate,
                r.ci_low,
                r.ci_high,
                r.p_value,
                next(adjusted) if r.p_value is not None else None,
            )
            for r in raw
        ]
    left_out = max(a.fault_tasks, b.fault_tasks)
    if left_out:
        warnings.append(
            f"{left_out} fault-injection/regression-set task(s) (stratum fault:<type> or "
            "regression:<type>) kept out of the comparison: see each run's fault table in score"
        )
    if b.earlier:
        warnings.append(
            f"the ledger holds {b.earlier} other run(s) of this candidate system on this suite: "
            "re-running until a gate passes measures persistence, not quality"
        )

    moves, few = check_moves(
        a.rows,
        b.rows,
        confidence=options.confidence,
        resamples=options.resamples,
        seed=options.seed,
    )

    def side(run: _Run, spec: str, estimate: float) -> RunSide:
        path, _ = _split_spec(spec)
        system = next(iter(run.meta["system"]), None)
        dataset = next(iter(run.meta["dataset_id"]), None)
        return RunSide(
            str(path), run.run_id, system, dataset, len(run.task_ids), estimate, run.earlier
        )

    return Comparison(
        metric=metric_a if metric_a == metric_b else f"{metric_a} vs {metric_b}",
        protocols=(a.protocol, b.protocol),
        tasks=len(pairs),
        dropped_baseline_only=dropped_a,
        dropped_candidate_only=dropped_b,
        baseline=side(a, baseline, diff.baseline),
        candidate=side(b, candidate, diff.candidate),
        difference=diff,
        ci_method=ci_method,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        mcnemar=mcn,
        decision=_decide(test),
        strata=tuple(strata),
        warnings=tuple(warnings),
        confidence=options.confidence,
        resamples=options.resamples,
        seed=options.seed,
        per_task=tuple(
            TaskDifference(a.task_ids[i], a.strata[i], float(x), float(y))
            for i, x, y in zip(ia.tolist(), va.tolist(), vb.tolist(), strict=True)
        ),
        fault_tasks_left_out=left_out,
        checks=moves,
        checks_not_compared=few,
        p_value_mc_se=test.p_value_mc_se,
    )
