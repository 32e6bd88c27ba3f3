"""From a validated ledger to one scorecard per run: the policy that sits between ledger and stats.

The policy, in one place:
- Rows flagged ``oracle_leak`` are quarantined: counted and listed, never scored.
- Infrastructure errors count as failures unless ``drop_infra_errors``; either way the report says so.
- Per task: n attempts and c passes; pass@k and pass^k per task, then the mean over tasks with equal
  weight (default) or the suite's declared weights. k above some task's n is an error naming the tasks.
- Intervals treat tasks as the unit (Wilson over the effective number of tasks by default, or the
  exact count-based task bootstrap); the analytic SE clusters on tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._failures import failure_breakdown
from trialbook.analysis._faults import fault_table, split_faults
from trialbook.analysis._kept import Kept
from trialbook.analysis._options import IntervalOptions
from trialbook.analysis._results import (
    AcrossRuns,
    MetricEstimate,
    RunScore,
    ScoreReport,
    StratumScore,
    TaskScore,
    Weighting,
)
from trialbook.analysis._selection import selection_summary
from trialbook.errors import ArgumentError, InsufficientAttemptsError, TrialbookError
from trialbook.ledger import Ledger, read_ledger
from trialbook.stats import (
    BootstrapResult,
    EffortSummary,
    clustered_se,
    cost_summary,
    effort_summary,
    pass_k_matrix,
    task_bootstrap,
    variance_components,
    wilson_task_interval,
)

__all__ = ["FEW_TASKS", "ScoreOptions", "kept_rows", "score_file", "score_ledger"]

FEW_TASKS = 10
"""Below this many tasks every format says the interval is not reliable (docs/statistics.md)."""


@dataclass(frozen=True)
class ScoreOptions(IntervalOptions):
    """How to score: the interval settings, the budgets reported, weights and infrastructure errors."""

    ks: tuple[int, ...] | None = None
    """Budgets to report; None means 1 and every k up to the smallest attempts per task."""
    weights: Weighting = "equal"
    """Mean over tasks with equal weight, or with the weights declared in the suite."""
    drop_infra_errors: bool = False
    """Drop attempts with status infra_error instead of counting them as failures."""


def _estimate(boot: BootstrapResult, se: NDArray[np.float64], j: int) -> MetricEstimate:
    s = float(se[j])
    return MetricEstimate(
        estimate=float(boot.estimate[j]),
        ci_low=float(boot.ci_low[j]),
        ci_high=float(boot.ci_high[j]),
        se=None if np.isnan(s) else s,
        se_bootstrap=float(boot.standard_error[j]),
    )


def _metric_set(
    values: NDArray[np.float64],
    names: Sequence[str],
    weights: NDArray[np.float64] | None,
    options: ScoreOptions,
    attempts: float | NDArray[np.float64],
) -> tuple[dict[str, MetricEstimate], BootstrapResult]:
    boot = task_bootstrap(
        values,
        weights=weights,
        confidence=options.confidence,
        resamples=options.resamples,
        method="percentile" if options.method == "wilson" else options.method,
        seed=options.seed,
    )
    se = clustered_se(values, weights)
    if options.method == "wilson":
        low, high = wilson_task_interval(
            values, weights=weights, confidence=options.confidence, max_n=attempts
        )
        boot = replace(boot, ci_low=low, ci_high=high)
    return {name: _estimate(boot, se, j) for j, name in enumerate(names)}, boot


def _short_tasks_error(
    k: int, labels: Sequence[str], n: NDArray[np.int64], run_id: str
) -> TrialbookError:
    short = np.flatnonzero(n < k)
    names = ", ".join(f"{labels[i]!r} (n={int(n[i])})" for i in short[:10])
    more = f" and {short.size - 10} more" if short.size > 10 else ""
    return InsufficientAttemptsError(
        f"run {run_id!r}: k={k} exceeds the attempts of {short.size} task(s): {names}{more}; "
        f"the largest k every task supports is {int(n.min())}"
    )


def kept_rows(ledger: Ledger, run_id: str, options: ScoreOptions) -> Kept:
    """The rows of one run's ``ledger`` that score: quarantine, fault cases and infra errors
    applied (the one place of these rules; budget replay and selection reuse it)."""
    provenance = ledger.source_of(run_id)
    completion = ledger.completion_of(run_id)
    notes: list[str] = []
    if completion is not None and not completion.complete:
        notes.append(
            f"this run is {completion.label}: its figures are of the attempts made so far, "
            "not of the run it set out to be (resume it to finish)"
        )
    if provenance is not None:
        version = f" ({provenance.source_version})" if provenance.source_version else ""
        notes.append(
            f"imported from {provenance.source}{version}: "
            + ", ".join(Path(f.path).name for f in provenance.files[:5])
            + (f" and {len(provenance.files) - 5} more" if len(provenance.files) > 5 else "")
        )
        notes.extend(provenance.notes)
    leak = ledger.column("oracle_leak")
    leaked = ledger.where(leak)
    quarantined = tuple(
        sorted(
            zip(
                leaked.column("task_id").tolist(),
                leaked.column("attempt_index").tolist(),
                strict=True,
            )
        )
    )
    # a task with any leaked attempt is quarantined whole: its other attempts saw the same suite
    everything = ledger.tasks()  # integer task positions: no string per row
    leaked_task = everything.count(leak) > 0
    leaked_tasks = tuple(t for t, bad in zip(everything.task_ids, leaked_task, strict=True) if bad)
    keep = ~leaked_task[everything.task]
    fault_rows, keep = split_faults(ledger, everything, keep, notes)
    infra = ledger.has_status("infra_error")
    infra_count = int((infra & keep).sum())
    if infra_count:
        kept_attempts = int(keep.sum())
        share = f"{infra_count} of {kept_attempts} attempts ({infra_count / kept_attempts:.1%})"
        if options.drop_infra_errors:
            notes.append(
                f"infrastructure errors: {share}, dropped from the denominator as asked (the "
                "rates below are over the remaining attempts)"
            )
            before = everything.count(keep) > 0
            keep &= ~infra
            gone = [
                t
                for t, b, a in zip(
                    everything.task_ids, before, everything.count(keep) > 0, strict=True
                )
                if b and not a
            ]
            if gone:
                shown = ", ".join(repr(g) for g in sorted(gone)[:10])
                more = f" and {len(gone) - 10} more" if len(gone) > 10 else ""
                notes.append(
                    f"{len(gone)} task(s) had only infrastructure errors and are not scored: "
                    f"{shown}{more}"
                )
    if leaked_tasks:
        shown = ", ".join(repr(tid) for tid in leaked_tasks[:10])
        more = f" and {len(leaked_tasks) - 10} more" if len(leaked_tasks) > 10 else ""
        notes.append(
            f"{len(leaked_tasks)} task(s) quarantined whole for an oracle leak "
            f"({len(quarantined)} leaked attempt(s)): {shown}{more}; not scored"
        )
    rows = ledger.where(keep)
    if len(rows) == 0:
        raise TrialbookError(
            f"run {run_id!r}: no attempts left to score after quarantine and drops"
            + (
                " (the rest are fault cases, stratum fault:<type> or regression:<type>: they have "
                "no headline rate, only their own table)"
                if len(fault_rows)
                else ""
            )
        )
    groups = everything if rows is ledger else rows.tasks()  # where() keeps itself when all kept
    return Kept(rows, groups, fault_rows, notes, quarantined, infra_count)


def _score_run(ledger: Ledger, run_id: str, options: ScoreOptions) -> RunScore:
    kept = kept_rows(ledger, run_id, options)
    rows, groups, notes = kept.rows, kept.groups, kept.notes
    task, labels, n, c = groups.task, groups.task_ids, groups.attempts, groups.passes
    t = n.size
    passed = rows.column("passed")
    first_pass = groups.first_passed.astype(np.float64)
    timeouts = groups.count(rows.column("timed_out"))
    after_timeout = int((rows.column("passed") & rows.column("timed_out")).sum())
    if after_timeout:
        notes.append(
            f"{after_timeout} pass(es) after timeout: the run's grader judged the workspace after "
            "the agent's timeout (graded_after_timeout), and they count as passes"
        )
    infra_rows = rows.has_status("infra_error")
    infra_per_task = groups.count(infra_rows)
    weight_col = groups.weight
    strata_of_task = groups.stratum

    ks = options.ks if options.ks is not None else tuple(range(1, int(n.min()) + 1))
    for k in ks:
        if k > n.min():
            raise _short_tasks_error(k, labels, n, run_id)
    if t < FEW_TASKS:
        notes.append(
            f"too few tasks for a reliable interval: {t} task(s) (below {FEW_TASKS}, an interval "
            "says little about tasks not seen; read it as rough)"
        )
    budget = int(rows.column("k_budget")[0])
    if (n < budget).any():
        notes.append(
            f"{int((n < budget).sum())} task(s) have fewer scored attempts than k_budget={budget}"
        )

    weights: NDArray[np.float64] | None = None
    if options.weights == "declared":
        missing = np.isnan(weight_col)
        if missing.any():
            shown = ", ".join(repr(labels[i]) for i in np.flatnonzero(missing)[:10])
            raise ArgumentError(
                f"run {run_id!r}: --weights declared, but {int(missing.sum())} task(s) have no "
                f"'weight': {shown}"
            )
        weights = weight_col

    names = [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks]
    at, hat = pass_k_matrix(n, c, ks)
    values = np.hstack([at, hat])
    # one resample set for every figure: the metrics (task weights), the pooled attempt rate (c/n
    # weighted by n, i.e. sum c / sum n) and the first-attempt rate (equal weights)
    task_w = np.ones(t) if weights is None else weights
    joint, boot = _metric_set(
        np.column_stack([values, c / n, first_pass]),
        [*names, "pooled", "first"],
        np.column_stack([np.repeat(task_w[:, None], len(names), axis=1), n, np.ones(t)]),
        options,
        # the outcomes behind each figure: every attempt, but one per task for the first attempt
        np.array([*([float(n.sum())] * len(names)), float(n.sum()), float(t)]),
    )
    metrics = {name: joint[name] for name in names}
    mean_score = None
    if rows.recorded("score"):
        score = rows.column("score")
        known = ~np.isnan(score)
        if known.all():
            per_task_score = np.bincount(task, weights=score, minlength=t) / n
            scored, _ = _metric_set(
                per_task_score[:, None], ["mean_score"], weights, options, float(n.sum())
            )
            mean_score = scored["mean_score"]
        else:
            notes.append(
                f"partial credit ('score') recorded on {int(known.sum())} of {known.size} attempts: "
                "no mean score (a missing score is not a 0)"
            )

    strata: list[StratumScore] = []
    if any(name is not None for name in strata_of_task):
        # tasks without a stratum first, then the strata in order of first appearance
        stratum_col = np.array([name or "(none)" for name in strata_of_task], dtype=object)
        order = (["(none)"] if None in strata_of_task else []) + list(rows.distinct("stratum"))
        for name in order:
            sel = stratum_col == name
            stratum_metrics, _ = _metric_set(
                values[sel],
                names,
                None if weights is None else weights[sel],
                options,
                float(n[sel].sum()),
            )
            strata.append(StratumScore(name, int(sel.sum()), int(n[sel].sum()), stratum_metrics))
        small = [s.stratum for s in strata if s.tasks < FEW_TASKS]
        if small:
            notes.append(
                f"too few tasks for a reliable interval in stratum(s) {', '.join(small)} "
                f"(each below {FEW_TASKS} tasks)"
            )

    task_scores = tuple(
        TaskScore(
            task_id=label,
            stratum=stratum,
            weight=None if np.isnan(wt) else wt,
            attempts=ni,
            passes=ci,
            first_attempt_passed=bool(fp),
            timeouts=to,
            infra_errors=ie,
        )
        for label, stratum, wt, ni, ci, fp, to, ie in zip(
            labels,
            strata_of_task,
            weight_col.tolist(),
            n.tolist(),
            c.tolist(),
            first_pass.tolist(),
            timeouts.tolist(),
            infra_per_task.tolist(),
            strict=True,
        )
    )
    effort = effort_summary(
        task_codes=task,
        attempt_index=rows.column("attempt_index"),
        passed=passed,
        timed_out=rows.column("timed_out"),
        infra_error=infra_rows,
        helper_calls=rows.column("helper_calls"),
        elapsed_s=rows.column("elapsed_s"),
        cache_hit=rows.column("cache_hit"),
        tool_calls=rows.column("tool_calls"),
    )
    lacking = {name: rows.unrecorded_mask(name) for name in rows.not_recorded()}
    not_recorded = {name: int(mask.sum()) for name, mask in lacking.items() if mask.any()}
    effort = _known_effort(effort, rows, lacking)
    if "oracle_leak" in not_recorded:
        share = (
            ""
            if not_recorded["oracle_leak"] == len(rows)
            else f" for {not_recorded['oracle_leak']} of {len(rows)} attempts"
        )
        notes.append(
            f"oracle leaks: not recorded by the source{share} (a leak there cannot be quarantined)"
        )
    if "timed_out" in lacking:
        known_timeouts = groups.count(rows.column("timed_out") & ~lacking["timed_out"])
        no_record = groups.count(~lacking["timed_out"]) == 0
        task_scores = tuple(
            replace(ts, timeouts=None if none else int(k))
            for ts, k, none in zip(
                task_scores, known_timeouts.tolist(), no_record.tolist(), strict=True
            )
        )
    cost = cost_summary(
        cost=rows.column("cost"),
        tokens_in=rows.column("tokens_in"),
        tokens_out=rows.column("tokens_out"),
        successful_tasks=int((c > 0).sum()),
    )

    def one(name: str) -> str | None:
        value = rows.first(name)
        return value if isinstance(value, str) else None

    return RunScore(
        run_id=run_id,
        system=one("system"),
        dataset_id=one("dataset_id"),
        tasks=t,
        attempts=len(rows),
        ks=tuple(ks),
        metrics=metrics,
        pooled_attempt_rate=joint["pooled"],
        first_attempt_rate=joint["first"],
        mean_score=mean_score,
        passes_after_timeout=after_timeout,
        bootstrap=boot,
        interval_method=options.method,
        weights=options.weights,
        variance=variance_components(n, c, weights=weights),
        effort=effort,
        cost=cost,
        strata=tuple(strata),
        per_task=task_scores,
        quarantined=kept.quarantined,
        infra_errors=kept.infra_count,
        infra_errors_dropped=options.drop_infra_errors,
        notes=tuple(notes),
        not_recorded=not_recorded,
        source=ledger.source_of(run_id),
        completion=ledger.completion_of(run_id),
        selection=selection_summary(
            rows,
            groups,
            lambda v, names: _metric_set(v, names, None, options, float(v.shape[0]))[0],
        ),
        failures=failure_breakdown(rows),
        faults=fault_table(kept.fault_rows),
    )


# which companion figure each not-recordable field feeds
_FIGURES = {
    "timed_out": ("timeout_rate",),
    "helper_calls": ("helper_calls_per_attempt",),
    "elapsed_s": ("mean_elapsed_s", "median_elapsed_s"),
}


def _known_effort(
    effort: EffortSummary, rows: Ledger, lacking: dict[str, NDArray[np.bool_]]
) -> EffortSummary:
    """The companion figures of fields some rows' source did not record, over the rows that record
    them; NaN (shown as "not recorded by the source") when none does. Never the neutral fill."""
    changes: dict[str, float] = {}
    for name, figures in _FIGURES.items():
        mask = lacking.get(name)
        if mask is None or not mask.any():
            continue
        known = rows.column(name)[~mask].astype(np.float64)
        for figure in figures:
            if known.size == 0:
                changes[figure] = math.nan
            elif figure == "median_elapsed_s":
                changes[figure] = float(np.median(known))
            else:
                changes[figure] = float(known.mean())
    if not changes:
        return effort
    return replace(
        effort,
        timeout_rate=changes.get("timeout_rate", effort.timeout_rate),
        helper_calls_per_attempt=changes.get(
            "helper_calls_per_attempt", effort.helper_calls_per_attempt
        ),
        mean_elapsed_s=changes.get("mean_elapsed_s", effort.mean_elapsed_s),
        median_elapsed_s=changes.get("median_elapsed_s", effort.median_elapsed_s),
    )


def _validate_options(options: ScoreOptions) -> None:
    if options.ks is not None:
        if not options.ks:
            raise ArgumentError("ks needs at least one value", argument="ks")
        for k in options.ks:
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                raise ArgumentError(
                    f"ks values must be whole numbers >= 1, got {k!r}", argument="ks"
                )


def score_ledger(
    ledger: Ledger, *, run: str | None = None, options: ScoreOptions | None = None
) -> ScoreReport:
    """Score every run of a validated ledger (or only ``run``)."""
    options = options or ScoreOptions()
    _validate_options(options)
    run_ids = ledger.run_ids
    if run is not None:
        if run not in run_ids:
            known = ", ".join(repr(r) for r in run_ids[:10])
            raise ArgumentError(
                f"run {run!r} is not in {ledger.source} (runs: {known})", argument="run"
            )
        run_ids = (run,)
    scores = [_score_run(ledger.run(rid), rid, options) for rid in run_ids]
    return ScoreReport(source=ledger.source, runs=tuple(scores), across_runs=_across(scores))


def _across(scores: Sequence[RunScore]) -> tuple[AcrossRuns, ...]:
    groups: dict[tuple[str | None, str | None], list[float]] = {}
    for s in scores:
        if "pass@1" in s.metrics:
            groups.setdefault((s.system, s.dataset_id), []).append(s.metrics["pass@1"].estimate)
    out = []
    for (system, dataset), vals in groups.items():
        if len(vals) >= 2:
            arr = np.array(vals)
            out.append(
                AcrossRuns(
                    system=system,
                    dataset_id=dataset,
                    runs=len(vals),
                    median=float(np.median(arr)),
                    p05=float(np.percentile(arr, 5)),
                    p95=float(np.percentile(arr, 95)),
                )
            )
    return tuple(out)


def score_file(
    path: str | Path, *, run: str | None = None, options: ScoreOptions | None = None
) -> ScoreReport:
    """Read, validate and score a ledger file: what ``trialbook score`` does."""
    return score_ledger(read_ledger(path), run=run, options=options)
