"""One run's section of the HTML report: headline, scorecard and companion figures, failures,
pass@k and pass^k against k, strata, the outcome grid, budget and cost curves, the selection view,
the fault table and the variance split. Numbers are read off the frozen results, never computed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import trialbook.report._checks_view as cv
from trialbook.report import _plots
from trialbook.report._page import OUTCOMES, figure, interval, run_anchor, table
from trialbook.report._views import (
    FAULT_HEAD,
    TASK_HEAD,
    ci_line,
    companions,
    error_rows,
    failure_line,
    fault_rows,
    fault_title,
    header,
    headline,
    metric_label,
    metric_rows,
    pct,
    selection_notes,
    selection_rows,
    task_rows,
    variance_lines,
)

if TYPE_CHECKING:
    from trialbook.analysis import RunBudget, RunScore, TaskOutcomes

__all__ = ["run_section"]


def _scorecard(run: RunScore) -> str:
    # the rows that repeat pass@1 (pass^1; the pooled rate where it prints the same) are left out,
    # as in the terminal, and the caption says so; the pass@k table below has every pass^k
    rows, hidden = metric_rows(run, "pooled attempt rate", every=False)
    caption = ci_line(run) + "."
    if hidden:
        caption += f" {' and '.join(hidden)} equal{'s' if len(hidden) == 1 else ''} pass@1 here: "
        caption += "not repeated"
        # a run of one attempt per task has no pass@k table below (_curve)
        caption += (
            " (the pass@k table below has every pass^k)." if max(run.ks, default=1) > 1 else "."
        )
    metrics = table(["metric", "estimate", "interval", "SE"], [r[:4] for r in rows], caption)
    effort = table(["companion figure", "value"], companions(run), numeric_from=2)
    return f'<div class="pair">{metrics}{effort}</div>'


def _rounds(run: RunScore, anchor: str) -> str:
    """A repair run's curve: success within k rounds for k = 1.. (it only rises)."""
    rows = []
    for k in run.ks:
        m = run.metrics[f"within@{k}"]
        rows.append([str(k), pct(m.estimate), interval(m.ci_low, m.ci_high)])
    numbers = table(["k", "success within k rounds", "interval"], rows)
    caption = (
        "Success within k rounds of repair (each round told of the one before) rises with k: "
        "some round of the first k passes. Bands are the intervals over tasks."
    )
    return figure(
        f"{anchor}-rounds", lambda: _plots.rounds_svg(run, f"{anchor}-rounds"), caption, numbers
    )


def _curve(run: RunScore, anchor: str) -> list[str]:
    """The figure against k the run's protocol gives meaning to."""
    if run.protocol == "human-selected":
        return []  # one delivered attempt per task: no curve over k
    if max(run.ks, default=1) <= 1:  # one point is no curve: the scorecard has it
        return [
            "<h3>pass@k and pass^k against k</h3>",
            "<p>One attempt per task: no curve against k (it needs two or more attempts per "
            "task); pass@1 is in the scorecard.</p>",
        ]
    if run.protocol == "repair":
        return ["<h3>Success within k rounds, round by round</h3>", _rounds(run, anchor)]
    return ["<h3>pass@k and pass^k against k</h3>", _passk(run, anchor)]


def _passk(run: RunScore, anchor: str) -> str:
    rows = []
    for k in run.ks:
        at, hat = run.metrics[f"pass@{k}"], run.metrics[f"pass^{k}"]
        rows.append(
            [
                str(k),
                pct(at.estimate),
                interval(at.ci_low, at.ci_high),
                pct(hat.estimate),
                interval(hat.ci_low, hat.ci_high),
            ]
        )
    numbers = table(["k", "pass@k", "interval", "pass^k", "interval"], rows)
    caption = (
        "pass@k (circles, solid) rises with k: some attempt of k passes; pass^k (squares, dashed) "
        "falls: all k pass. Bands are the intervals over tasks."
    )
    return figure(
        f"{anchor}-passk", lambda: _plots.passk_svg(run, f"{anchor}-passk"), caption, numbers
    )


def _strata(run: RunScore, anchor: str) -> str:
    if not run.strata:
        return "<p>No stratum is recorded for this run's tasks.</p>"
    metric = next(iter(run.metrics))
    rows = [
        [
            s.stratum,
            str(s.tasks),
            str(s.attempts),
            pct(s.metrics[metric].estimate),
            interval(s.metrics[metric].ci_low, s.metrics[metric].ci_high),
        ]
        for s in run.strata
    ]
    label = metric_label(metric)
    numbers = table(["stratum", "tasks", "attempts", label, "interval"], rows)
    caption = f"{label} per stratum with its interval over the stratum's tasks; dotted line: the whole run."
    name = f"{anchor}-strata"
    return figure(name, lambda: _plots.strata_svg(run, metric, name), caption, numbers)


def _variance(run: RunScore, anchor: str) -> str:
    v = run.variance
    if v is None:
        return f"<p>{escape(variance_lines(run)[0])}</p>"
    rows = [
        [
            "between tasks",
            f"{v.between_shown:.4f}" + (" (estimated below 0)" if v.between_below_zero else ""),
        ],
        ["within tasks", f"{v.within:.4f}"],
        ["ICC", "n/a" if v.icc is None else f"{v.icc:.2f}"],
        ["SE of pass@1 now", f"{100 * v.se_now:.1f} pp"],
        ["with 2x tasks", f"{100 * v.se_double_tasks:.1f} pp"],
        ["with 2x attempts per task", f"{100 * v.se_double_attempts:.1f} pp"],
        ["naive SE (attempts independent)", f"{100 * v.se_naive:.1f} pp"],
    ]
    caption = (
        "Left: how much of the variance of attempt outcomes lies between tasks and within them. "
        "Right: the SE of pass@1 now, with twice the tasks, and with twice the attempts per task."
    )
    name = f"{anchor}-variance"
    return figure(
        name, lambda: _plots.variance_svg(run, name), caption, table(["part", "value"], rows)
    )


_CALL_LOG = "model_calls.jsonl"
"""The file the model gateway keeps of an attempt's calls in its transcript folder (the harness's
``CALL_LOG``; docs/gateway.md, "Call log")."""


def _href(path: str, base: Path | None) -> str:
    """A link to a local file: relative to the page's folder when known, else a file:// URI.

    Each part of the relative path is percent-encoded, so no part of it is ever read as a scheme
    (a folder named ``javascript:alert(1)`` is ``javascript%3Aalert%281%29``), a query or a
    fragment; and it starts with ``./`` or ``../``."""
    if base is None:
        return escape(Path(path).as_uri(), quote=True)
    from urllib.parse import quote

    relative = Path(os.path.relpath(path, base)).as_posix()
    encoded = "/".join(quote(part, safe="") for part in relative.split("/"))
    if not encoded.startswith("../"):
        encoded = "./" + encoded
    return escape(encoded, quote=True)


def _grid(tasks: Sequence[TaskOutcomes], base: Path | None) -> str:
    k = max((a.attempt_index for t in tasks for a in t.attempts), default=-1) + 1
    legend = " ".join(
        f'<span class="o {cls}">{sym} {escape(word)}</span>' for cls, sym, word in OUTCOMES.values()
    )
    out = [
        f'<p class="legend">{legend}. Each cell links to the attempt\'s kept raw output '
        "(agent and grader output), where the ledger kept it.</p>",
        '<div class="scroll"><table class="grid"><thead><tr><th>task</th><th>stratum</th><th class="num">passes</th>',
    ]
    out += [f'<th class="num">#{i}</th>' for i in range(k)]
    out.append("</tr></thead><tbody>")
    for t in tasks:
        note = (
            ' <span class="tag">quarantined: oracle leaked, not scored</span>'
            if t.quarantined
            else ""
        )
        out.append(
            f'<tr><th scope="row">{escape(t.task_id)}{note}</th><td>{escape(t.stratum or "")}</td><td class="num">{t.passes}/{len(t.attempts)}</td>'
        )
        cells = {a.attempt_index: a for a in t.attempts}
        for i in range(k):
            a = cells.get(i)
            if a is None:
                out.append('<td class="o none">–</td>')
                continue
            cls, sym, word = OUTCOMES[a.outcome]
            title = [f"attempt {i}: {word}"]
            if a.elapsed_s is not None:
                title.append(f"{a.elapsed_s:.1f} s")
            if a.model_calls is not None:  # the model gateway's figures
                title.append(
                    f"{a.model_calls} model call(s)"
                    + (f", {a.model_call_s:.1f} s in them" if a.model_call_s is not None else "")
                )
            if a.timed_out and a.outcome == "pass":
                title.append("passed when graded after its timeout")
            if a.error:
                title.append(a.error)
            if a.transcript_files:
                title.append("kept: " + ", ".join(a.transcript_files))
            label = f"{sym} {escape(word)}"
            if a.transcript is not None:
                label = f'<a href="{_href(a.transcript, base)}">{label}</a>'
                if _CALL_LOG in a.transcript_files:  # the model gateway kept its calls
                    calls = _href(f"{a.transcript}/{_CALL_LOG}", base)
                    label += f' <a href="{calls}" title="the model calls">calls</a>'
            out.append(
                f'<td class="o {cls}" title="{escape("; ".join(title), quote=True)}">{label}</td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    # up to 200 tasks open; a longer grid folded (it stays in the page, a click away)
    fold = f"<details{' open' if len(tasks) <= 200 else ''}><summary>{len(tasks)} tasks x {k} attempts</summary>"
    return fold + "\n".join(out) + "</details>"


def _cost(x: float | None) -> str:
    return "not measured" if x is None else f"${x:,.2f}"


def _budget(b: RunBudget, anchor: str, shown: Sequence[str]) -> str:
    """The budget figure; ``shown``: the notes the run's section already printed (not repeated)."""
    rows = [
        [
            str(r.budget),
            f"{pct(r.coverage)} ({r.covered}/{b.tasks})",
            _cost(r.cost),
            _cost(r.cost_stop_at_first_success),
            f"{r.attempts} / {r.attempts_stop_at_first_success}",
        ]
        for r in b.rows
    ]
    numbers = table(
        ["budget b", "coverage", "cost", "cost, stop at first pass", "attempts (all / stop)"],
        rows,
    )
    notes = "".join(f'<p class="note">note: {escape(n)}</p>' for n in b.notes if n not in shown)
    if len(b.rows) <= 1:  # one budget is one point: its numbers say it
        line = (
            "<p>One attempt per task: no budget curve (it needs two or more attempts per task).</p>"
        )
        return notes + line + numbers
    coverage = (
        "Coverage, the share of tasks with a pass within their first b attempts (attempt "
        "order as recorded)"
    )
    priced = any(r.cost is not None or r.cost_stop_at_first_success is not None for r in b.rows)
    if not priced:
        caption = coverage + "; cost not measured, so no cost is drawn."
    else:
        caption = (
            f"Left: {coverage[0].lower()}{coverage[1:]}. Right: what budget b costs, spending all "
            "b attempts (circles, solid) or stopping each task at its first pass (triangles, "
            "dashed); unknown cost is not drawn."
        )
    name = f"{anchor}-budget"
    # two panels side by side need the row's width to be read (their table goes below them)
    return notes + figure(name, lambda: _plots.budget_svg(b, name), caption, numbers, wide=priced)


def _failures(run: RunScore) -> str:
    line = failure_line(run)
    if line is None:
        return "<p>No attempt failed.</p>"
    errors = error_rows(run)
    return f"<p>{escape(line)}</p>" + (table(["error", "attempts"], errors) if errors else "")


def _selection(run: RunScore) -> str:
    rows = selection_rows(run)
    if not rows:
        return ""
    notes = "".join(f"<p>{escape(n)}</p>" for n in selection_notes(run))
    return (
        "<h3>Selection: pool against delivered</h3>"
        + table(["", "tasks", "rate", "interval"], rows)
        + notes
    )


def _faults(run: RunScore) -> str:
    rows = fault_rows(run)
    if not rows:
        return ""
    caption = f"{fault_title(run)}; stratum fault:<type> or regression:<type>"
    return "<h3>Fault cases, type by outcome</h3>" + table(list(FAULT_HEAD), rows, caption)


def _checks(run: RunScore) -> str:
    if not run.checks:
        return ""
    head = "<h3>Checks: the grader's named checks</h3>"
    # the names and reasons are text that wraps (long ones break anywhere), in a box that scrolls
    # sideways rather than pushing the page past the window's right edge
    numbers = table(list(cv.CHECK_HEAD), cv.check_rows(run), cv.check_title(run), numeric_to=5)
    return f'{head}<div class="scroll wrap">{numbers}</div>'


def _outcomes(run: RunScore) -> str:
    rows = cv.outcome_rows(run)
    if not rows:
        return ""
    head = "<h3>Fault cases by outcome kind</h3>"
    return head + table(list(cv.OUTCOME_HEAD), rows, cv.outcome_title(run))


def _tasks(run: RunScore) -> str:
    rows = task_rows(run)
    fold = f"<details{' open' if len(rows) <= 200 else ''}><summary>{len(rows)} tasks</summary>"
    return fold + table(list(TASK_HEAD), rows, numeric_from=2) + "</details>"


def run_section(
    run: RunScore,
    grid: Sequence[TaskOutcomes] | None,
    budget: RunBudget | None,
    base: Path | None,
) -> str:
    """The section of one run; ``grid`` and ``budget`` where the caller has them (``trialbook
    report`` does; ``score --format html`` has neither)."""
    anchor = run_anchor(run)
    parts = [
        f'<section id="{anchor}"><h2>{escape(header(run))}</h2>',
        f'<p class="headline">{escape(headline(run))}</p>',
    ]
    parts += [f'<p class="note">note: {escape(n)}</p>' for n in run.notes]
    parts += ["<h3>Scorecard</h3>", _scorecard(run)]
    parts += ["<h3>Failures by outcome and error</h3>", _failures(run)]
    parts += _curve(run, anchor)
    parts += ["<h3>By stratum</h3>", _strata(run, anchor)]
    if grid is not None:
        parts += ["<h3>Outcomes, task by attempt</h3>", _grid(grid, base)]
    else:  # no attempts at hand (score --format html): the per-task counts
        parts += ["<h3>Tasks</h3>", _tasks(run)]
    if budget is not None:
        parts += ["<h3>Budget and cost</h3>", _budget(budget, anchor, run.notes)]
    parts += [_checks(run), _selection(run), _faults(run), _outcomes(run)]
    parts += ["<h3>Variance split</h3>", _variance(run, anchor), "</section>"]
    return "\n".join(p for p in parts if p)
