"""Render a ScoreReport as JSON (the versioned contract), markdown or a terminal table.

Renderers compute no statistics: every number comes from the report object.
"""

from __future__ import annotations

import io
from dataclasses import asdict
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from trialbook.analysis import MetricEstimate, RunScore, ScoreReport
from trialbook.report._json import json_safe
from trialbook.stats import Total

__all__ = [
    "SCORE_SCHEMA",
    "render_plain",
    "score_markdown",
    "score_table",
    "score_to_dict",
]

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
        "failures": None if run.failures is None else asdict(run.failures),
        "faults": _faults_dict(run),
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
            }
            for r in faults.rows
        ],
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


_LADDER = (1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 500, 1000)


def _shown(run: RunScore) -> tuple[list[str], str | None]:
    """Metric names for a table: all of them for up to 10 budgets, else a ladder of k and the largest."""
    if len(run.ks) <= 10:
        return list(run.metrics), None
    ks = [k for k in run.ks if k in _LADDER or k == run.ks[-1]]
    names = [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks]
    note = f"showing k = {', '.join(map(str, ks))} of {len(run.ks)} budgets; --format json has all, --k picks"
    return names, note


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def _num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _total(t: Total, digits: int = 2, unit: str = "") -> str:
    if t.value is not None:
        return f"{unit}{t.value:,.{digits}f}"
    if t.known_attempts == 0:
        return "not measured"
    return f"not fully measured ({unit}{t.partial:,.{digits}f} over {t.known_attempts} attempts)"


NOT_RECORDED = "not recorded by the source"


def _recorded(run: RunScore, name: str, text: str) -> str:
    """A companion figure of field ``name``, or what the source left unrecorded, never a made-up 0."""
    lacking = run.not_recorded.get(name, 0)
    if not lacking:
        return text
    if lacking >= run.attempts:
        return NOT_RECORDED
    return f"{text} (over {run.attempts - lacking} of {run.attempts} attempts; rest {NOT_RECORDED})"


def _companions(run: RunScore) -> list[tuple[str, str]]:
    e, c = run.effort, run.cost
    infra = f"{_pct(e.infra_error_rate)} ({'dropped' if run.infra_errors_dropped else 'counted as failures'})"
    seconds = (
        f"{e.mean_elapsed_s:,.1f} / {e.median_elapsed_s:,.1f}"
        if e.mean_elapsed_s == e.mean_elapsed_s  # NaN: no attempt records its time
        else NOT_RECORDED
    )
    return [
        ("attempts per task", _num(e.attempts_per_task)),
        (
            "attempts to first pass (stop at first pass)",
            "not defined (no task passed)"
            if e.attempts_to_first_pass is None
            else _num(e.attempts_to_first_pass),
        ),
        ("timeout rate", _recorded(run, "timed_out", _pct(e.timeout_rate))),
        ("infrastructure-error rate", infra),
        (
            "helper calls per attempt",
            _recorded(run, "helper_calls", _num(e.helper_calls_per_attempt)),
        ),
        ("cache-hit rate", "not recorded" if e.cache_hit_rate is None else _pct(e.cache_hit_rate)),
        (
            "tool calls per attempt",
            "not recorded" if e.tool_calls_per_attempt is None else _num(e.tool_calls_per_attempt),
        ),
        ("mean / median seconds per attempt", _recorded(run, "elapsed_s", seconds)),
        ("total cost (all attempts)", _total(c.total_cost, 2, "$")),
        ("tokens in / out", f"{_total(c.tokens_in, 0)} / {_total(c.tokens_out, 0)}"),
        ("tasks with a pass", str(c.successful_tasks)),
        (
            "cost per solved task",
            f"${c.cost_per_success:,.4f}"
            if c.cost_per_success is not None
            else c.cost_per_success_note,
        ),
    ]


def _header(run: RunScore) -> str:
    parts = [f"run {run.run_id}"]
    if run.system:
        parts.append(f"system {run.system}")
    if run.dataset_id:
        ds = run.dataset_id
        parts.append(f"dataset {ds if len(ds) <= 24 else ds[:12] + '…'}")
    parts.append(f"{run.tasks} tasks, {run.attempts} attempts")
    if run.completion is not None and not run.completion.complete:
        parts.append(run.completion.label)
    return " · ".join(parts)


def _ci_line(run: RunScore) -> str:
    b = run.bootstrap
    weights = "equal task weights" if run.weights == "equal" else "declared task weights"
    if run.interval_method == "wilson":
        how = "Wilson over the effective number of tasks"
    else:
        how = f"{b.method} bootstrap over tasks, {b.resamples:,} resamples, seed {b.seed}"
    return f"{b.confidence:.0%} intervals: {how}; SE {SE_METHOD}; {weights}"


def _pp(x: float) -> str:
    return f"{100 * x:.1f} pp"


def _naive_vs_clustered(naive: float, clustered: float) -> str:
    """The naive SE beside the clustered one, compared as printed (one decimal of a point)."""
    shown_naive, shown_clustered = round(100 * naive, 1), round(100 * clustered, 1)
    if shown_naive < shown_clustered:
        how = "smaller than"
    elif shown_naive > shown_clustered:
        how = "larger than"
    else:
        how = "about equal to"
    return (
        f"naive SE treating attempts as independent {_pp(naive)}, {how} the task-clustered "
        f"{_pp(clustered)}"
    )


def _variance_lines(run: RunScore) -> list[str]:
    v = run.variance
    if v is None:
        return [
            "variance: cannot separate between/within-task parts (need 2+ tasks and 2+ attempts)"
        ]
    icc = "n/a" if v.icc is None else f"{v.icc:.2f}"
    between = (
        f"{v.between_shown:.4f} (estimated below 0, shown as 0)"
        if v.between_below_zero
        else f"{v.between_shown:.4f}"
    )
    unweighted = run.weights == "declared" and not v.weighted
    return [
        f"variance of attempt outcomes: between tasks {between}, within tasks {v.within:.4f} "
        f"(ICC {icc}); {_naive_vs_clustered(v.se_naive, v.se_now)}",
        f"SE of pass@1{' (equal task weights)' if unweighted else ''} now {_pp(v.se_now)}; "
        f"with 2x tasks {_pp(v.se_double_tasks)}; "
        f"with 2x attempts per task {_pp(v.se_double_attempts)}",
    ]


def _unweighted_note(run: RunScore) -> list[str]:
    """Under declared weights, the figures that do not use them, named."""
    if run.weights != "declared":
        return []
    # what analysis.score computes today: these figures take no task weights
    names = ["first-attempt rate (equal task weights)", "pooled attempt rate (per attempt)"]
    if run.variance is not None and not run.variance.weighted:
        names.append("variance split and its SEs (equal task weights)")
    names.append("companion figures and cost (per attempt or per task, unweighted)")
    return [
        f"declared task weights apply to pass@k, pass^k and strata; unweighted: {'; '.join(names)}"
    ]


def _metric_rows(run: RunScore, pooled_label: str) -> list[tuple[str, str, str, str, bool]]:
    """(label, estimate, interval, SE, is_rate) for every metric shown and the two labelled rates."""

    def row(label: str, m: MetricEstimate, rate: bool) -> tuple[str, str, str, str, bool]:
        se = "n/a" if m.se is None else f"{100 * m.se:.1f} pp"
        return label, _pct(m.estimate), f"{_pct(m.ci_low)} – {_pct(m.ci_high)}", se, rate

    rows = [row(name, run.metrics[name], False) for name in _shown(run)[0]]
    rows.append(row(pooled_label, run.pooled_attempt_rate, True))
    rows.append(row("first-attempt rate", run.first_attempt_rate, True))
    if run.mean_score is not None:
        rows.append(row("mean score (partial credit)", run.mean_score, True))
    return rows


def _strata_view(run: RunScore) -> tuple[list[str], list[tuple[str, str, list[str]]]]:
    """Column names (pass@1 and the longest pass^k) and per stratum: name, tasks, cells."""
    names = list(run.metrics)[:1] + [m for m in run.metrics if m.startswith("pass^")][-1:]
    rows = [
        (
            s.stratum,
            str(s.tasks),
            [
                f"{_pct(s.metrics[n].estimate)} ({_pct(s.metrics[n].ci_low, 0)}–{_pct(s.metrics[n].ci_high, 0)})"
                for n in names
            ],
        )
        for s in run.strata
    ]
    return names, rows


def _across_lines(report: ScoreReport) -> list[str]:
    return [
        f"{a.system or 'system'} over {a.runs} runs: pass@1 median {_pct(a.median)}, "
        f"5–95% band {_pct(a.p05)} – {_pct(a.p95)}"
        for a in report.across_runs
    ]


def score_markdown(report: ScoreReport) -> str:
    """Markdown fit for a pull-request comment."""
    out: list[str] = [f"## trialbook score — `{report.source}`", ""]
    for run in report.runs:
        out += [f"### {_header(run)}", ""]
        out += ["| metric | estimate | interval | SE |", "|---|---:|---:|---:|"]
        for label, est, interval, se, _ in _metric_rows(run, "pooled attempt rate (attempt-level)"):
            out.append(f"| {label} | {est} | {interval} | {se} |")
        ladder = _shown(run)[1]
        out += ["", f"_{_ci_line(run)}_"] + ([f"_{ladder}_"] if ladder else [])
        out += ["", "| companion figure | value |", "|---|---|"]
        out += [f"| {k} | {v} |" for k, v in _companions(run)]
        if run.strata:
            names, rows = _strata_view(run)
            out += [
                "",
                "| stratum | tasks | " + " | ".join(names) + " |",
                "|---|---:|" + "---:|" * len(names),
            ]
            out += [
                f"| {name} | {tasks} | " + " | ".join(cells) + " |" for name, tasks, cells in rows
            ]
        out += [""] + [f"- {line}" for line in _variance_lines(run) + _unweighted_note(run)]
        out += [f"- note: {n}" for n in run.notes]
        out.append("")
    out += [f"- {line}" for line in _across_lines(report)]
    return "\n".join(out).rstrip() + "\n"


def score_table(report: ScoreReport) -> Group:
    """A rich renderable for the terminal."""
    parts: list[Any] = []
    for run in report.runs:
        table = Table(title=_header(run), title_justify="left", show_edge=False)
        table.add_column("metric")
        table.add_column("estimate", justify="right")
        table.add_column("interval", justify="right")
        table.add_column("SE", justify="right")
        for label, est, interval, se, rate in _metric_rows(run, "pooled attempt rate"):
            table.add_row(Text(label, style="dim") if rate else label, est, interval, se)
        parts += [table, Text(_ci_line(run), style="dim")]
        ladder = _shown(run)[1]
        if ladder:
            parts.append(Text(ladder, style="dim"))
        comp = Table(show_header=False, show_edge=False, box=None, padding=(0, 2))
        comp.add_column(style="cyan")
        comp.add_column()
        for k, v in _companions(run):
            comp.add_row(k, v)
        parts.append(comp)
        if run.strata:
            names, rows = _strata_view(run)
            st = Table(title="by stratum", title_justify="left", show_edge=False)
            st.add_column("stratum")
            st.add_column("tasks", justify="right")
            for name in names:
                st.add_column(name, justify="right")
            for name, tasks, cells in rows:
                st.add_row(name, tasks, *cells)
            parts.append(st)
        parts += [Text(line) for line in _variance_lines(run) + _unweighted_note(run)]
        parts += [Text(f"note: {n}", style="yellow") for n in run.notes]
        parts.append(Text(""))
    parts += [Text(line) for line in _across_lines(report)]
    return Group(*parts)


def render_plain(renderable: Any, width: int = 100) -> str:
    """Render without colour at a fixed width (for golden tests and files)."""
    console = Console(width=width, color_system=None, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()
