"""What the score renderers share: each figure as the words and numbers printed, never computed.

The terminal (``_score_terminal``) and markdown (``_score_markdown``) renderers lay these out; every
number comes from the report object.
"""

from __future__ import annotations

import io
import math
from typing import Any

from rich.console import Console

from trialbook.analysis import MetricEstimate, RunScore, ScoreReport
from trialbook.report._mdtext import md_code as md_code  # the renderers call v.md_code
from trialbook.report._mdtext import md_text as md_text
from trialbook.report._score import SE_METHOD
from trialbook.stats import Total

_LADDER = (1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 500, 1000)


def metric_label(name: str) -> str:
    """A figure's name as printed: pass@k and pass^k as they are; a repair run's ``within@k`` as
    "success within k rounds"; a human-selected run's ``delivered`` in words."""
    if name.startswith("within@"):
        k = int(name.removeprefix("within@"))
        return f"success within {k} round{'s' if k != 1 else ''}"
    if name == "delivered":
        return "delivered success (picked attempt)"
    return name


def shown_metrics(run: RunScore) -> tuple[list[str], str | None]:
    """Metric names for a table: all of them for up to 10 budgets, else a ladder of k and the largest."""
    if len(run.ks) <= 10 or not run.metrics:
        return list(run.metrics), None
    ks = [k for k in run.ks if k in _LADDER or k == run.ks[-1]]
    prefixes = ("within@",) if run.protocol == "repair" else ("pass@", "pass^")
    names = [f"{p}{k}" for p in prefixes for k in ks if f"{p}{k}" in run.metrics]
    note = f"showing k = {', '.join(map(str, ks))} of {len(run.ks)} budgets; --format json has all, --k picks"
    return names, note


def pct(x: float | None, digits: int = 1) -> str:
    """A rate as a percentage, rounded as people round: half away from zero, after the binary
    noise of the sums behind it (47 / 80 computed as a mean of per-task values is
    0.5874999999999999: it prints 58.8%, as the publisher's 58.75% and the pooled 0.5875 do)."""
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return f"{100 * x}%"
    from decimal import ROUND_HALF_UP, Decimal

    shown = Decimal(repr(round(100 * x, 9))).quantize(Decimal(1).scaleb(-digits), ROUND_HALF_UP)
    return f"{abs(shown) if shown == 0 else shown}%"  # never "-0.0%"


def num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def total_text(t: Total, digits: int = 2, unit: str = "") -> str:
    if t.value is not None:
        return f"{unit}{t.value:,.{digits}f}"
    if t.known_attempts == 0:
        return "not measured"
    return f"not fully measured ({unit}{t.partial:,.{digits}f} over {t.known_attempts} attempts)"


NOT_RECORDED = "not recorded by the source"


def recorded(run: RunScore, name: str, text: str) -> str:
    """A companion figure of field ``name``, or what the source left unrecorded, never a made-up 0."""
    lacking = run.not_recorded.get(name, 0)
    if not lacking:
        return text
    if lacking >= run.attempts:
        return NOT_RECORDED
    return f"{text} (over {run.attempts - lacking} of {run.attempts} attempts; rest {NOT_RECORDED})"


def companions(run: RunScore) -> list[tuple[str, str]]:
    e, c = run.effort, run.cost
    infra = f"{pct(e.infra_error_rate)} ({'dropped' if run.infra_errors_dropped else 'counted as failures'})"
    seconds = (
        f"{e.mean_elapsed_s:,.1f} / {e.median_elapsed_s:,.1f}"
        if e.mean_elapsed_s == e.mean_elapsed_s  # NaN: no attempt records its time
        else NOT_RECORDED
    )
    return [
        ("attempts per task", num(e.attempts_per_task)),
        (
            "attempts to first pass (stop at first pass)",
            "not defined (no task passed)"
            if e.attempts_to_first_pass is None
            else num(e.attempts_to_first_pass),
        ),
        ("timeout rate", recorded(run, "timed_out", pct(e.timeout_rate))),
        ("infrastructure-error rate", infra),
        (
            "helper calls per attempt",
            recorded(run, "helper_calls", num(e.helper_calls_per_attempt)),
        ),
        ("cache-hit rate", "not recorded" if e.cache_hit_rate is None else pct(e.cache_hit_rate)),
        (
            "tool calls per attempt",
            "not recorded" if e.tool_calls_per_attempt is None else num(e.tool_calls_per_attempt),
        ),
        ("mean / median seconds per attempt", recorded(run, "elapsed_s", seconds)),
        ("total cost (all attempts)", total_text(c.total_cost, 2, "$")),
        ("tokens in / out", f"{total_text(c.tokens_in, 0)} / {total_text(c.tokens_out, 0)}"),
        ("tasks with a pass", str(c.successful_tasks)),
        (
            "cost per solved task",
            f"${c.cost_per_success:,.4f}"
            if c.cost_per_success is not None
            else c.cost_per_success_note,
        ),
    ]


def header(run: RunScore) -> str:
    parts = [f"run {run.run_id}"]
    if run.system:
        parts.append(f"system {run.system}")
    if run.dataset_id:
        ds = run.dataset_id
        parts.append(f"dataset {ds if len(ds) <= 24 else ds[:12] + '…'}")
    parts.append(f"{run.tasks} tasks, {run.attempts} attempts")
    return " · ".join(parts)


def ci_line(run: RunScore) -> str:
    b = run.bootstrap
    weights = "equal task weights" if run.weights == "equal" else "declared task weights"
    if run.interval_method == "wilson":
        how = "Wilson over the effective number of tasks"
    else:
        how = f"{b.method} bootstrap over tasks, {b.resamples:,} resamples, seed {b.seed}"
    return f"{b.confidence:.0%} intervals: {how}; SE {SE_METHOD}; {weights}"


def pp(x: float) -> str:
    return f"{100 * x:.1f} pp"


def naive_vs_clustered(naive: float, clustered: float) -> str:
    """The naive SE beside the clustered one, compared as printed (one decimal of a point)."""
    shown_naive, shown_clustered = round(100 * naive, 1), round(100 * clustered, 1)
    if shown_naive < shown_clustered:
        how = "smaller than"
    elif shown_naive > shown_clustered:
        how = "larger than"
    else:
        how = "about equal to"
    return (
        f"naive SE treating attempts as independent {pp(naive)}, {how} the task-clustered "
        f"{pp(clustered)}"
    )


def variance_lines(run: RunScore) -> list[str]:
    v = run.variance
    if v is None and run.protocol in ("repair", "human-selected"):
        return [
            f"variance: not split for a {run.protocol} run (its attempts are not independent "
            "draws of one task)"
        ]
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
        f"(ICC {icc}); {naive_vs_clustered(v.se_naive, v.se_now)}",
        f"SE of pass@1{' (equal task weights)' if unweighted else ''} now {pp(v.se_now)}; "
        f"with 2x tasks {pp(v.se_double_tasks)}; "
        f"with 2x attempts per task {pp(v.se_double_attempts)}",
    ]


def unweighted_note(run: RunScore) -> list[str]:
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


MetricRow = tuple[str, str, str, str, bool]
"""(label, estimate, interval, SE, is_rate)."""


def _row(label: str, m: MetricEstimate, rate: bool) -> MetricRow:
    se = "n/a" if m.se is None else f"{100 * m.se:.1f} pp"
    return label, pct(m.estimate), f"{pct(m.ci_low)} – {pct(m.ci_high)}", se, rate


def metric_rows(
    run: RunScore, pooled_label: str, *, every: bool = True
) -> tuple[list[MetricRow], list[str]]:
    """The rows of the metric table, and the labels of the rows left out as repeats of pass@1.

    Unless ``every``, pass^1 (pass^1 is pass@1 by definition) and the pooled attempt rate where
    it prints exactly as pass@1 (every task with the same attempts) are left out.
    """
    names = shown_metrics(run)[0]
    first = _row("pass@1", run.metrics["pass@1"], False)[1:4] if "pass@1" in run.metrics else None
    hidden: list[str] = []
    if not every and first is not None and "pass^1" in names:
        names = [n for n in names if n != "pass^1"]
        hidden.append("pass^1")
    rows = [_row(metric_label(name), run.metrics[name], False) for name in names]
    pooled = _row(pooled_label, run.pooled_attempt_rate, True)
    if not every and first is not None and pooled[1:4] == first:
        hidden.append("the pooled attempt rate")
    else:
        rows.append(pooled)
    rows.append(_row("first-attempt rate", run.first_attempt_rate, True))
    if run.mean_score is not None:
        rows.append(_row("mean score (partial credit)", run.mean_score, True))
    return rows, hidden


def hidden_line(hidden: list[str]) -> str | None:
    """The line that says which rows repeat pass@1 and were left out."""
    if not hidden:
        return None
    what = " and ".join(hidden)
    return f"{what} equal{'s' if len(hidden) == 1 else ''} pass@1 here: not repeated (--format json has every figure)"


def _uniform(run: RunScore) -> int | None:
    sizes = {t.attempts for t in run.per_task}
    return sizes.pop() if len(sizes) == 1 else None


def design(run: RunScore) -> str:
    """``24 tasks × 5 attempts`` (or ``24 tasks, 118 attempts`` when tasks differ)."""
    each = _uniform(run)
    if each is not None:
        return f"{run.tasks} tasks × {each} attempt{'s' if each != 1 else ''}"
    return f"{run.tasks} tasks, {run.attempts} attempts"


def _est(m: MetricEstimate) -> str:
    return f"{pct(m.estimate)} ({pct(m.ci_low)}–{pct(m.ci_high)})"


def headline_parts(run: RunScore) -> list[tuple[str, str]]:
    """The headline's figures as (label, value): pass@1 with its interval, pass^k at the largest k
    (when above 1), and the design."""
    parts: list[tuple[str, str]] = []
    if run.protocol == "human-selected":
        got = run.metrics.get("delivered")
        shown = _est(got) if got else "not known (no attempt is recorded as selected)"
        return [(metric_label("delivered"), shown)]
    if run.protocol == "repair":
        top = max(run.ks)
        for k in sorted({min(run.ks), top}):
            parts.append((metric_label(f"within@{k}"), _est(run.metrics[f"within@{k}"])))
        return parts
    if "pass@1" in run.metrics:
        parts.append(("pass@1", _est(run.metrics["pass@1"])))
    top = max(run.ks)
    if top > 1 and f"pass^{top}" in run.metrics:
        parts.append((f"pass^{top}", _est(run.metrics[f"pass^{top}"])))
    if not parts:  # --k without 1: lead with the smallest k asked
        low = min(run.ks)
        parts.append((f"pass@{low}", _est(run.metrics[f"pass@{low}"])))
    return parts


def headline(run: RunScore) -> str:
    """The first line of a run: ``base-1: pass@1 42.5% (31.4%–54.5%) · pass^5 ... · 24 tasks × 5``."""
    figures = " · ".join(f"{label} {value}" for label, value in headline_parts(run))
    return f"{run.run_id}: {figures} · {design(run)}{unfinished(run)}"


def unfinished(run: RunScore) -> str:
    """`` · INTERRUPTED: 3 of 6 attempts`` for a run that did not finish, else empty: it belongs
    in the headline, since every figure of such a run is of the attempts made so far."""
    if run.completion is not None and not run.completion.complete:
        return f" · {run.completion.label}"
    return ""


def identity(run: RunScore) -> str:
    """System, dataset and completion, for the line under the headline."""
    parts = []
    if run.system:
        parts.append(f"system {run.system}")
    if run.dataset_id:
        ds = run.dataset_id
        parts.append(f"dataset {ds if len(ds) <= 24 else ds[:12] + '…'}")
    if run.protocol in ("repair", "human-selected"):
        parts.append(f"protocol {run.protocol}")
    return " · ".join(parts)


def selection_rows(run: RunScore) -> list[tuple[str, str, str, str]]:
    """(figure, tasks, estimate, interval) of the selection view; empty without one."""
    sel = run.selection
    if sel is None:
        return []
    return [
        (label, f"{count}/{sel.tasks}", pct(m.estimate), f"{pct(m.ci_low)} – {pct(m.ci_high)}")
        for label, count, m in (
            ("pool coverage", sel.pool_covered, sel.pool_coverage),
            ("delivered success", sel.delivered, sel.delivered_success),
            ("selector misses", sel.misses, sel.miss_rate),
        )
    ]


def selection_notes(run: RunScore) -> list[str]:
    """What the selection table's denominators leave out, and the tasks missed."""
    sel = run.selection
    if sel is None:
        return []
    lines = [
        "pool coverage: a pass among the task's attempts; delivered success: the attempt marked "
        "selected passed; selector misses: the pool held a pass and the selected attempt did not"
    ]
    if sel.misses_of_covered is not None:
        lines.append(
            f"the selector missed {sel.misses} of the {sel.pool_covered} tasks whose pool held a "
            f"pass ({pct(sel.misses_of_covered)})"
        )
    if sel.nothing_selected:
        lines.append(
            f"{sel.nothing_selected} task(s) had no attempt marked selected: delivered nothing"
        )
    if sel.tasks_unmarked:
        lines.append(f"{sel.tasks_unmarked} task(s) record no 'selected': not in this table")
    if sel.miss_task_ids:
        lines.append("missed: " + names_list(sel.miss_task_ids))
    return lines


def names_list(names: tuple[str, ...] | list[str], limit: int = 20) -> str:
    """Task ids, comma-separated, the first ``limit`` and how many more."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


FAULT_HEAD = ("fault case", "tasks", "passed", "failed", "timeout", "infra", "all passed")


def fault_rows(run: RunScore) -> list[tuple[str, ...]]:
    """One row per fault type: kind:type, tasks, attempts per outcome, tasks that always passed."""
    if run.faults is None:
        return []
    return [
        (
            f"{r.kind}:{r.fault_type}",
            str(r.tasks),
            f"{r.outcomes['passed']}/{r.attempts}",
            str(r.outcomes["failed"]),
            str(r.outcomes["timed_out"]),
            str(r.outcomes["infra_error"]),
            f"{r.tasks_always_passed}/{r.tasks}",
        )
        for r in run.faults.rows
    ]


def fault_title(run: RunScore) -> str:
    f = run.faults
    assert f is not None
    return (
        f"fault cases: {f.tasks} task(s), {f.attempts} attempts, kept out of the headline "
        "(outcomes per attempt)"
    )


def failure_line(run: RunScore) -> str | None:
    """``failures: 69 of 120 attempts: failed 50, timed out 16, infrastructure error 3``."""
    f = run.failures
    if f is None or f.attempts == 0:
        return None
    parts = [
        f"{label} {f.by_outcome[key]}"
        for key, label in (
            ("failed", "failed"),
            ("timed_out", "timed out"),
            ("infra_error", "infrastructure error"),
        )
        if f.by_outcome[key]
    ]
    return f"failures: {f.attempts} of {run.attempts} attempts did not pass: " + ", ".join(parts)


def error_rows(run: RunScore) -> list[tuple[str, str]]:
    """(error text, attempts) for the recorded errors of failed attempts, most frequent first."""
    f = run.failures
    if f is None or not f.by_error:
        return []
    rows = [(text, str(count)) for text, count in f.by_error]
    if f.other_errors:
        rows.append(("(other errors)", str(f.other_errors)))
    if f.no_error:
        rows.append(("(no error recorded)", str(f.no_error)))
    return rows


TASK_HEAD = ("task", "stratum", "passes", "first", "timeouts", "infra")


def task_rows(run: RunScore) -> list[tuple[str, ...]]:
    """Per task: id, stratum, passes/attempts, whether the first attempt passed, timeouts, infra."""
    return [
        (
            t.task_id,
            t.stratum or "",
            f"{t.passes}/{t.attempts}",
            "pass" if t.first_attempt_passed else "fail",
            "n/r" if t.timeouts is None else str(t.timeouts),
            str(t.infra_errors),
        )
        for t in run.per_task
    ]


def strata_view(run: RunScore) -> tuple[list[str], list[tuple[str, str, list[str]]]]:
    """Column names (pass@1 and the longest pass^k) and per stratum: name, tasks, cells."""
    last = "within@" if run.protocol == "repair" else "pass^"
    names = list(run.metrics)[:1] + [m for m in run.metrics if m.startswith(last)][-1:]
    names = list(dict.fromkeys(names))
    rows = [
        (
            s.stratum,
            str(s.tasks),
            [
                f"{pct(s.metrics[n].estimate)} ({pct(s.metrics[n].ci_low, 0)}–{pct(s.metrics[n].ci_high, 0)})"
                for n in names
            ],
        )
        for s in run.strata
    ]
    return [metric_label(n) for n in names], rows


def across_lines(report: ScoreReport) -> list[str]:
    return [
        f"{a.system or 'system'} over {a.runs} runs: pass@1 median {pct(a.median)}, "
        f"5–95% band {pct(a.p05)} – {pct(a.p95)}"
        for a in report.across_runs
    ]


def render_plain(renderable: Any, width: int = 100) -> str:
    """Render without colour at a fixed width (for golden tests and files)."""
    from trialbook.report._rich import printable_renderable

    console = Console(
        width=width, color_system=None, markup=False, emoji=False, record=True, file=io.StringIO()
    )
    console.print(printable_renderable(renderable))
    # rich pads table cells to the table's width: trailing blanks carry nothing
    return "\n".join(line.rstrip() for line in console.export_text().split("\n"))
