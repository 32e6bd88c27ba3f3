"""Render a ScoreReport as JSON: the versioned ``trialbook.score/1`` contract.

Renderers compute no statistics: every number comes from the report object.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from trialbook.analysis import MetricEstimate, RunScore, ScoreReport
from trialbook.report._json import json_safe
from trialbook.stats import Total

__all__ = ["SCORE_SCHEMA", "SE_METHOD", "score_to_dict"]

SCORE_SCHEMA = "trialbook.score/1"
SE_METHOD = "task-clustered (CR1)"


def _metric(m: MetricEstimate) -> dict[str, Any]:
    return asdict(m)


def _run_dict(run: RunScore) -> dict[str, Any]:
    boot = run.bootstrap
    return {
        "run_id": run.run_id,
        "system": run.system,
        "dataset_id": run.dataset_id,
        "tasks": run.tasks,
        "attempts": run.attempts,
        "ks": list(run.ks),
        # independent (or null: not recorded, read as independent): metrics holds pass@K and
        # pass^K; repair: within@K (success within K rounds); human-selected: delivered
        "protocol": run.protocol,
        "metrics": {name: _metric(m) for name, m in run.metrics.items()},
        "rates": {
            "pooled_attempt": _metric(run.pooled_attempt_rate),
            "first_attempt": _metric(run.first_attempt_rate),
        },
        "mean_score": None if run.mean_score is None else _metric(run.mean_score),
        "passes_after_timeout": run.passes_after_timeout,
        "weights": run.weights,
        "ci": {
            "method": run.interval_method,
            "confidence": boot.confidence,
            "resamples": boot.resamples,
            "seed": boot.seed,
            "unit": "task",
            "se_method": SE_METHOD,
            "distinct_task_profiles": boot.distinct_profiles,
        },
        "variance": None if run.variance is None else asdict(run.variance),
        "effort": asdict(run.effort),
        "cost": _cost_dict(run),
        "strata": [
            {
                "stratum": s.stratum,
                "tasks": s.tasks,
                "attempts": s.attempts,
                "metrics": {name: _metric(m) for name, m in s.metrics.items()},
            }
            for s in run.strata
        ],
        # built by hand: dataclasses.asdict deep-copies, which costs seconds on 10,000 tasks
        "per_task": [
            {
                "task_id": t.task_id,
                "stratum": t.stratum,
                "weight": t.weight,
                "attempts": t.attempts,
                "passes": t.passes,
                "first_attempt_passed": t.first_attempt_passed,
                "timeouts": t.timeouts,
                "infra_errors": t.infra_errors,
            }
            for t in run.per_task
        ],
        "quarantined": [{"task_id": t, "attempt_index": a} for t, a in run.quarantined],
        "infra_errors": {"attempts": run.infra_errors, "dropped": run.infra_errors_dropped},
        "reruns": run.reruns,
        "not_recorded": dict(run.not_recorded),
        "source": None
        if run.source is None
        else {
            "source": run.source.source,
            "version": run.source.source_version,
            "files": [{"path": f.path, "sha256": f.sha256} for f in run.source.files],
        },
        "notes": list(run.notes),
        "selection": _selection_dict(run),
        "failures": _failures_dict(run),
        "faults": _faults_dict(run),
        "checks": _checks_dict(run),
        "completion": None
        if run.completion is None
        else {
            "status": run.completion.status,
            "complete": run.completion.complete,
            "attempts": run.completion.attempts,
            "planned": run.completion.planned,
        },
    }


def _count(t: Total) -> dict[str, Any]:
    """A token total as whole numbers: tokens are counts (629540, never 629540.0)."""

    def whole(x: float | None) -> int | float | None:
        return int(x) if x is not None and float(x).is_integer() else x

    return {
        "value": whole(t.value),
        "known_attempts": t.known_attempts,
        "partial": whole(t.partial),
    }


def _cost_dict(run: RunScore) -> dict[str, Any]:
    doc = asdict(run.cost)
    doc["tokens_in"], doc["tokens_out"] = _count(run.cost.tokens_in), _count(run.cost.tokens_out)
    return doc


def _failures_dict(run: RunScore) -> dict[str, Any] | None:
    f = run.failures
    if f is None:
        return None
    return {
        "attempts": f.attempts,
        "by_outcome": dict(f.by_outcome),
        "by_error": [{"error": text, "attempts": n} for text, n in f.by_error],
        "other_errors": f.other_errors,
        "no_error": f.no_error,
    }


def _selection_dict(run: RunScore) -> dict[str, Any] | None:
    sel = run.selection
    if sel is None:
        return None
    return {
        "tasks": sel.tasks,
        "tasks_unmarked": sel.tasks_unmarked,
        "pool_covered": sel.pool_covered,
        "delivered": sel.delivered,
        "misses": sel.misses,
        "nothing_selected": sel.nothing_selected,
        "pool_coverage": _metric(sel.pool_coverage),
        "delivered_success": _metric(sel.delivered_success),
        "miss_rate": _metric(sel.miss_rate),
        "misses_of_covered": sel.misses_of_covered,
        "miss_task_ids": list(sel.miss_task_ids),
    }


def _faults_dict(run: RunScore) -> dict[str, Any] | None:
    faults = run.faults
    if faults is None:
        return None
    return {
        "tasks": faults.tasks,
        "attempts": faults.attempts,
        "in_headline": False,
        "rows": [
            {
                "kind": r.kind,
                "fault_type": r.fault_type,
                "tasks": r.tasks,
                "attempts": r.attempts,
                "outcomes": dict(r.outcomes),
                "pass_rate": r.pass_rate,
                "tasks_always_passed": r.tasks_always_passed,
                "tasks_never_passed": r.tasks_never_passed,
                "task_ids": list(r.task_ids),
                # the outcome kinds, apart (empty objects when no attempt records them)
                "protection": dict(r.protection),
                "task_outcome": dict(r.task_outcome),
                "protected_but_failed": r.protected_but_failed,
                "stop_reasons": dict(r.stop_reasons),
            }
            for r in faults.rows
        ],
    }


def _checks_dict(run: RunScore) -> dict[str, Any]:
    """Per named check: its rate over tasks with the interval, counts, and failure reasons."""
    return {
        c.name: {
            "estimate": c.rate.estimate,
            "ci_low": c.rate.ci_low,
            "ci_high": c.rate.ci_high,
            "se": c.rate.se,
            "tasks": c.tasks,
            "attempts": c.attempts,
            "passed": c.passed,
            "lacking": c.lacking,
            "reasons": dict(c.reasons),
            "other_reasons": c.other_reasons,
        }
        for c in run.checks
    }


def score_to_dict(report: ScoreReport) -> dict[str, Any]:
    """The ``trialbook.score/1`` document (unknown values are None)."""
    runs = []
    for r in report.runs:
        doc = _run_dict(r)
        per_task = doc.pop("per_task")  # holds no float that could be NaN: skip the walk
        cleaned = json_safe(doc)
        cleaned["per_task"] = per_task
        runs.append(cleaned)
    return {
        "schema": SCORE_SCHEMA,
        "source": report.source,
        "runs": runs,
        "across_runs": json_safe([asdict(a) for a in report.across_runs]),
    }
