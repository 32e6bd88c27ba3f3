"""From a validated ledger to one scorecard per run: the policy that sits between ledger and stats.

The policy, in one place:
- Rows flagged ``oracle_leak`` are quarantined: counted and listed, never scored.
- Fault-injection and regression-set cases (stratum ``fault:<type>`` / ``regression:<type>``,
  ``_faults``) have their own table and never enter the headline or any rate.
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

from trialbook.analysis._checks import CheckRate, check_rates
from trialbook.analysis._estimate import metric_set
from trialbook.analysis._failures import failures_of
from trialbook.analysis._faults import fault_strata, fault_table, fault_task_mask
from trialbook.analysis._kept import Kept
from trialbook.analysis._options import IntervalOptions
from trialbook.analysis._protocol import (
    independent,
    protocol_metrics,
    protocol_names,
    protocol_notes,
)
from trialbook.analysis._results import (
    AcrossRuns,
    RunScore,
    ScoreReport,
    StratumScore,
    TaskScore,
    Weighting,
)
from trialbook.analysis._score_notes import policy_notes
from trialbook.analysis._selection import SelectionSummary, selection_summary
from trialbook.background import Background
from trialbook.errors import ArgumentError, InsufficientAttemptsError, TrialbookError
from trialbook.ledger import Ledger, RunTally, Tallies, TallyOfLedger, open_tallies
from trialbook.stats import (
    ColumnWeights,
    cost_from_totals,
    effort_from_counts,
    total_of,
    variance_components,
)

__all__ = ["FEW_TASKS", "ScoreOptions", "kept_rows", "score_file", "score_ledger", "score_tallies"]

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


def _headline(
    source: Tallies, run_id: str, options: ScoreOptions
) -> tuple[RunTally, Ledger | None]:
    """The run tallied as its headline scores it, and the attempts of its fault cases (None when
    it has none): the one place of the row policy (quarantine, fault cases, infrastructure
    errors) that score, budget replay and selection share."""
    drop = "infra_error" if options.drop_infra_errors else None
    tally = source.tally(run_id, drop_status=drop)
    aside = fault_strata(tally.strata)
    if not aside:
        return tally, None
    rows = source.rows(run_id)
    groups = rows.tasks()
    leaked = groups.count(rows.column("oracle_leak")) > 0
    faulty = fault_task_mask(groups) & ~leaked
    if not (~faulty & ~leaked).any():
        raise TrialbookError(
            f"run {run_id!r}: no attempts left to score after quarantine and drops (the rest are "
            "fault cases, stratum fault:<type> or regression:<type>: they have no headline rate, "
            "only their own table)"
        )
    headline = source.tally(run_id, drop_status=drop, set_aside=aside)
    return headline, rows.where(faulty[groups.task])


def _rows_scored(rows: Ledger, tally: RunTally, options: ScoreOptions) -> Ledger:
    """The attempts of ``rows`` (one run) that ``tally`` counted: its tasks, less any dropped
    infrastructure errors."""
    groups = rows.tasks()
    scored = np.isin(
        np.array(groups.task_ids, dtype=object), np.array(tally.task_ids, dtype=object)
    )
    keep = scored[groups.task]
    if options.drop_infra_errors:
        keep &= ~rows.has_status("infra_error")
    return rows.where(keep)


def kept_rows(ledger: Ledger, run_id: str, options: ScoreOptions) -> Kept:
    """The rows of one run's ``ledger`` that score, by score's own policy (``_headline``), with
    the notes that say what was kept out: budget replay reads them, so that a budget curve and a
    scorecard of a run always speak of the same attempts."""
    tally, fault_rows = _headline(TallyOfLedger(ledger), run_id, options)
    rows = _rows_scored(ledger, tally, options)
    return Kept(
        rows=rows,
        groups=rows.tasks(),
        fault_rows=fault_rows
        if fault_rows is not None
        else ledger.where(np.zeros(len(ledger), bool)),
        notes=policy_notes(tally, fault_rows, drop_infra_errors=options.drop_infra_errors),
        quarantined=tally.quarantined,
        infra_count=tally.status_rows,
    )


def _rounds(
    source: Tallies, run_id: str, tally: RunTally, options: ScoreOptions
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per scored task, the attempts that bound k and those before its first pass. A repair run's
    attempts are rounds in order: dropping an infrastructure error from the denominator does not
    renumber the rounds after it (fail, infra error, pass is success within 3 rounds, not 2), so
    they are counted over every round the task had."""
    if tally.protocol != "repair" or not options.drop_infra_errors:
        return tally.attempts, tally.before_first_pass
    every = source.tally(run_id)
    aside = fault_strata(every.strata)
    if aside:
        every = source.tally(run_id, set_aside=aside)
    at = {task: i for i, task in enumerate(every.task_ids)}
    idx = np.array([at[task] for task in tally.task_ids], dtype=np.intp)
    return every.attempts[idx], every.before_first_pass[idx]


def _score_run(source: Tallies, run_id: str, options: ScoreOptions) -> RunScore:
    tally, fault_rows = _headline(source, run_id, options)
    notes = policy_notes(tally, fault_rows, drop_infra_errors=options.drop_infra_errors)
    provenance, completion = tally.provenance, tally.completion
    quarantined, infra_count = tally.quarantined, tally.status_rows
    labels, n, c = tally.task_ids, tally.attempts, tally.passes
    t = n.size
    rows = tally.rows
    first_pass = tally.first_passed.astype(np.float64)
    after_timeout = tally.passes_after_timeout
    if after_timeout:
        notes.append(
            f"{after_timeout} pass(es) after timeout: the run's grader judged the workspace after "
            "the agent's timeout (graded_after_timeout), and they count as passes"
        )
    weight_col = tally.weight
    strata_of_task = tally.stratum

    protocol = tally.protocol
    rounds, before_first_pass = _rounds(source, run_id, tally, options)
    ks = options.ks if options.ks is not None else tuple(range(1, int(rounds.min()) + 1))
    for k in ks:
        if k > rounds.min():
            raise _short_tasks_error(k, labels, rounds, run_id)
    if t < FEW_TASKS:
        notes.append(
            f"too few tasks for a reliable interval: {t} task(s) (below {FEW_TASKS}, an interval "
            "says little about tasks not seen; read it as rough)"
        )
    budget = tally.k_budget
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

    names = protocol_names(protocol, ks)
    notes.extend(protocol_notes(protocol))
    # one resample set for every figure: the metrics (task weights), the pooled attempt rate (c/n
    # weighted by n, i.e. sum c / sum n) and the first-attempt rate (equal weights), filled in
    # place (at 100,000 tasks and k up to 10, the matrix is 160 MB; its weights are kept once per
    # distinct column)
    m = len(names)
    joint_values = np.empty((t, m + 2))
    protocol_metrics(protocol, ks, n, c, before_first_pass, out=joint_values[:, :m])
    joint_values[:, m], joint_values[:, m + 1], values = c / n, first_pass, joint_values[:, :m]
    # the metrics weighted alike (by the declared weights, or equally), the pooled rate by n
    joint_weights = ColumnWeights(
        columns=np.column_stack([np.ones(t) if weights is None else weights, n, np.ones(t)]),
        of=np.array([0] * m + [1, 2]),
    )
    # the outcomes behind each figure: every attempt, but one per task for the first attempt
    outcomes = np.array([*([float(n.sum())] * len(names)), float(n.sum()), float(t)])
    # the draws of the task bootstrap (most of a large run's time: numpy draws them without the
    # interpreter's lock) run on a second thread while the rest of the scorecard is made
    joint_set = Background(
        metric_set, joint_values, [*names, "pooled", "first"], joint_weights, options, outcomes
    )
    with joint_set.first():  # an error of the bootstrap, called first before, still comes first
        selection, checks = _row_views(source, run_id, tally, options)
        mean_score = None
        if tally.score_rows:
            if tally.score is not None:
                per_task_score = tally.score / n
                scored, _ = metric_set(
                    per_task_score[:, None], ["mean_score"], weights, options, float(n.sum())
                )
                mean_score = scored["mean_score"]
            else:
                notes.append(
                    f"partial credit ('score') recorded on {tally.score_rows} of {rows} attempts: "
                    "no mean score (a missing score is not a 0)"
                )

        strata: list[StratumScore] = []
        if names and any(name is not None for name in strata_of_task):
            # tasks without a stratum first, then the strata in order of first appearance
            stratum_col = np.array([name or "(none)" for name in strata_of_task], dtype=object)
            order = (["(none)"] if None in strata_of_task else []) + list(tally.strata)
            for name in order:
                sel = stratum_col == name
                stratum_metrics, _ = metric_set(
                    values[sel],
                    names,
                    None if weights is None else weights[sel],
                    options,
                    float(n[sel].sum()),
                )
                strata.append(
                    StratumScore(name, int(sel.sum()), int(n[sel].sum()), stratum_metrics)
                )
            small = [s.stratum for s in strata if s.tasks < FEW_TASKS]
            if small:
                notes.append(
                    f"too few tasks for a reliable interval in stratum(s) {', '.join(small)} "
                    f"(each below {FEW_TASKS} tasks)"
                )

        not_recorded = dict(tally.not_recorded)
        # a task none of whose attempts recorded timed_out has no timeout count (not a 0)
        timeouts: list[int | None] = [
            None if "timed_out" in not_recorded and known == 0 else int(count)
            for count, known in zip(
                tally.timeouts.tolist(), tally.timeouts_recorded.tolist(), strict=True
            )
        ]
        task_scores = tuple(
            TaskScore(
                task_id=label,
                stratum=stratum,
                weight=None if math.isnan(wt) else wt,
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
                timeouts,
                tally.infra_errors.tolist(),
                strict=True,
            )
        )
        effort = effort_from_counts(
            attempts=n,
            before_first_pass=tally.before_first_pass,
            timed_out=(tally.timed_out.total, tally.timed_out.rows),
            infra_errors=tally.infra_rows,
            helper_calls=(float(tally.helper_calls.total), tally.helper_calls.rows),
            cache_hits=(float(tally.cache_hit.total), tally.cache_hit.rows),
            tool_calls=(float(tally.tool_calls.total), tally.tool_calls.rows),
            elapsed_s=tally.elapsed_s,
        )
        if options.drop_infra_errors and tally.kept_rows:
            # the rate of the run's own attempts, as the note says it: dropping the errors from
            # the pass rates' denominator does not make them not have happened
            effort = replace(effort, infra_error_rate=tally.status_rows / tally.kept_rows)
        if "oracle_leak" in not_recorded:
            share = (
                ""
                if not_recorded["oracle_leak"] == rows
                else f" for {not_recorded['oracle_leak']} of {rows} attempts"
            )
            notes.append(
                f"oracle leaks: not recorded by the source{share} (a leak there cannot be quarantined)"
            )
    joint, boot = joint_set.result()
    metrics = {name: joint[name] for name in names}
    if protocol == "human-selected" and selection is not None:
        metrics["delivered"] = selection.delivered_success
    cost_values = tally.cost
    cost_known = ~np.isnan(cost_values)
    cost = cost_from_totals(
        total_cost=total_of(float(cost_values[cost_known].sum()), int(cost_known.sum()), rows),
        tokens_in=total_of(float(tally.tokens_in.total), tally.tokens_in.rows, rows),
        tokens_out=total_of(float(tally.tokens_out.total), tally.tokens_out.rows, rows),
        successful_tasks=int((c > 0).sum()),
    )

    return RunScore(
        run_id=run_id,
        system=tally.system,
        dataset_id=tally.dataset_id,
        tasks=t,
        attempts=rows,
        ks=tuple(ks),
        metrics=metrics,
        pooled_attempt_rate=joint["pooled"],
        first_attempt_rate=joint["first"],
        mean_score=mean_score,
        passes_after_timeout=after_timeout,
        bootstrap=boot,
        interval_method=options.method,
        weights=options.weights,
        # within-task variance assumes exchangeable attempts: rounds of repair are not
        variance=variance_components(n, c, weights=weights) if independent(protocol) else None,
        effort=effort,
        cost=cost,
        strata=tuple(strata),
        per_task=task_scores,
        quarantined=quarantined,
        infra_errors=infra_count,
        infra_errors_dropped=options.drop_infra_errors,
        reruns=tally.reruns,
        notes=tuple(notes),
        not_recorded=not_recorded,
        source=provenance,
        completion=completion,
        selection=selection,
        protocol=protocol,
        checks=checks,
        failures=failures_of(tally.failed, tally.failed_errors),
        faults=None if fault_rows is None else fault_table(fault_rows),
    )


def _row_views(
    source: Tallies, run_id: str, tally: RunTally, options: ScoreOptions
) -> tuple[SelectionSummary | None, tuple[CheckRate, ...]]:
    """The views read off the scored rows themselves, loaded only where some row records what
    they need: the selection (``selected``) and the per-check rates (``checks``)."""
    if not (tally.selected_rows or tally.checks_rows):
        return None, ()
    rows = _rows_scored(source.rows(run_id), tally, options)
    groups = rows.tasks()
    selection = selection_summary(
        rows, groups, lambda v, names: metric_set(v, names, None, options, float(v.shape[0]))[0]
    )
    checks = check_rates(
        rows, groups, lambda v, names, n: metric_set(v, names, None, options, n)[0]
    )
    return selection, checks


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
    return score_tallies(TallyOfLedger(ledger), run=run, options=options)


def score_tallies(
    source: Tallies, *, run: str | None = None, options: ScoreOptions | None = None
) -> ScoreReport:
    """Score every run of a ledger asked for its tallies run by run (or only ``run``): the
    in-memory :class:`Ledger`, or the SQLite store (its kept columns, or ``GROUP BY`` queries).

    A figure that needs the attempts themselves, in order (budget replay), reads them with
    ``source.rows(run_id)``: the run's validated :class:`Ledger`, with its whole query API.
    """
    options = options or ScoreOptions()
    _validate_options(options)
    if run is not None:
        run_ids: tuple[str, ...] = (run,)
        if not source.has_run(run):
            known = ", ".join(repr(r) for r in source.run_ids()[:10])
            raise ArgumentError(
                f"run {run!r} is not in {source.source} (runs: {known})", argument="run"
            )
    else:
        run_ids = source.run_ids()
    scores = [_score_run(source, rid, options) for rid in run_ids]
    return ScoreReport(source=source.source, runs=tuple(scores), across_runs=_across(scores))


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
    path: str | Path,
    *,
    run: str | None = None,
    options: ScoreOptions | None = None,
    default_run: str | None = None,
) -> ScoreReport:
    """Read, validate and score a ledger file as tallies (``trialbook score``): SQLite's for a .db,
    a chunk at a time for JSONL and CSV (``default_run``: the run of a file without run_id)."""
    source = open_tallies(path, default_run=default_run)
    try:
        return score_tallies(source, run=run, options=options)
    finally:
        source.close()
