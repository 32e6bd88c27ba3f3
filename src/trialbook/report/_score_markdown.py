"""A ScoreReport as markdown that fits a pull-request comment or a GitHub job summary as it is.

Each run leads with its headline (pass@1 with its interval, pass^k at the largest k, the design);
everything else is folded in ``<details>`` blocks, so a comment stays a few lines tall until the
reader asks for more.
"""

from __future__ import annotations

from collections.abc import Sequence

import trialbook.report._checks_view as cv
import trialbook.report._views as v
from trialbook.analysis import RunScore, ScoreReport

__all__ = ["score_markdown"]

TASKS_SHOWN = 200
"""Rows of the per-task table in markdown: a GitHub comment holds 65,536 characters."""


_cell = v.md_text


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> list[str]:
    """A pipe table; ``align`` is one of l/r per column."""
    marks = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(marks) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def _fold(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def _headline(run: RunScore) -> str:
    figures = " · ".join(f"**{label} {value}**" for label, value in v.headline_parts(run))
    # the run id and system are the ledger's text (v.md_code fences a backtick in it)
    who = f" ({v.md_text(run.system)})" if run.system else ""
    return f"### {v.md_code(run.run_id)}{who}: {figures} · {v.design(run)}{v.unfinished(run)}"


_WARNINGS = ("too few tasks",)
"""Notes that qualify every figure of the run: shown under the headline, never folded away."""


def _run(run: RunScore, tasks: bool, every: bool) -> list[str]:
    out = [_headline(run), ""]
    warned = [n for n in run.notes if n.startswith(_WARNINGS)]
    for note in warned:  # a quote block each: two quoted lines in a row would join into one
        out += [f"> **warning:** {v.md_text(note)}", ""]
    if run.faults is not None:
        out += [
            f"{run.faults.tasks} fault-case task(s) are kept out of these figures; "
            "see *fault cases* below.",
            "",
        ]
    rows, hidden = v.metric_rows(run, "pooled attempt rate (attempt-level)", every=every)
    body = _table(
        ("metric", "estimate", f"{run.bootstrap.confidence:.0%} interval", "SE"),
        [r[:4] for r in rows],
        "lrrr",
    )
    extra = [v.hidden_line(hidden), v.shown_metrics(run)[1], v.ci_line(run)]
    body += [""] + [f"_{line}_  " for line in extra if line]
    out += _fold("Scorecard: every metric with its interval", body)
    out += _fold(
        "Effort and cost",
        _table(("companion figure", "value"), list(v.companions(run)), "ll"),
    )
    if run.strata:
        names, strata = v.strata_view(run)
        out += _fold(
            "By stratum",
            _table(
                ["stratum", "tasks", *names],
                [(name, count, *cells) for name, count, cells in strata],
                "lr" + "r" * len(names),
            ),
        )
    if run.selection is not None:
        sel = run.selection
        body = _table(("figure", "tasks", "share", "interval"), v.selection_rows(run), "lrrr")
        body += [""] + [f"- {v.md_text(line)}" for line in v.selection_notes(run)]
        out += _fold(
            f"Selection: delivered {v.pct(sel.delivered_success.estimate)} of a pool covering "
            f"{v.pct(sel.pool_coverage.estimate)}",
            body,
        )
    if run.checks:
        out += _fold(
            cv.check_title(run).replace("checks:", "Checks:", 1),
            _table(cv.CHECK_HEAD, cv.check_rows(run), "lrrrrl"),
        )
    if run.faults is not None:
        body = _table(v.FAULT_HEAD, v.fault_rows(run), "lrrrrrr")
        if run.faults.has_outcomes:
            outcomes = _table(cv.OUTCOME_HEAD, cv.outcome_rows(run), "lrrrl")
            body += ["", f"_{cv.outcome_title(run)}_", "", *outcomes]
        out += _fold(v.fault_title(run).replace("fault cases", "Fault cases", 1), body)
    line = v.failure_line(run)
    if line is not None:
        errors = v.error_rows(run)
        body = _table(("error (failed attempts)", "attempts"), errors, "lr") if errors else []
        out += _fold(line[0].upper() + line[1:], body or ["No error text recorded."])
    if tasks:
        shown = v.task_rows(run)
        body = _table(v.TASK_HEAD, shown[:TASKS_SHOWN], "llrrrr")
        if len(shown) > TASKS_SHOWN:
            body += ["", f"_first {TASKS_SHOWN} of {len(shown)} tasks; --format json has all_"]
        out += _fold(f"Tasks ({run.tasks})", body)
    kept = [n for n in run.notes if n not in warned]
    notes = v.variance_lines(run) + v.unweighted_note(run) + [f"note: {n}" for n in kept]
    who = v.identity(run)
    out += _fold(f"Variance and notes ({len(kept)} note(s))", [f"- {v.md_text(n)}" for n in notes])
    if who:
        out += [f"<sub>{v.md_text(who)}</sub>", ""]
    return out


def score_markdown(report: ScoreReport, *, tasks: bool = False, every: bool = False) -> str:
    """Markdown for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: headlines first, details
    folded. ``tasks`` adds the per-task table (folded); ``every`` keeps rows that repeat pass@1."""
    out: list[str] = []
    for run in report.runs:
        out += _run(run, tasks, every)
    out += [f"- {v.md_text(line)}" for line in v.across_lines(report)]
    out += ["", f"<sub>trialbook score of {v.md_code(report.source)}</sub>"]
    return "\n".join(out).strip() + "\n"
