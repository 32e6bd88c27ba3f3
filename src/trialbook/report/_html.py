"""Render results as one self-contained HTML page: no script, no stylesheet, font or image fetched,
every figure inline SVG with its numbers in a table beside it, readable printed.

Figures come from :mod:`trialbook.report._plots` when matplotlib is installed; without it each
figure's table stands alone and the page says how to get the plots. No statistic is computed here:
every number is read off the frozen results and formatted.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import trialbook.report._checks_view as cv
from trialbook.report import _plots
from trialbook.report._html_run import run_section
from trialbook.report._page import figure, page, run_anchor, table
from trialbook.report._views import pct

if TYPE_CHECKING:
    from trialbook.analysis import (
        Comparison,
        PairedRuns,
        Report,
        ScoreReport,
    )

__all__ = ["compare_html", "report_html", "score_html"]


def _signed(x: float) -> str:
    """A difference in points with its sign; one that rounds to zero is +0.0, never -0.0."""
    return f"{round(100 * x, 1) + 0.0:+.1f}"


def _se(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} pp"


def _decision(c: Comparison) -> str:
    d = c.difference
    p = "n/a" if c.p_value is None else f"{c.p_value:.4g}"
    return (
        f"{c.decision.upper()}: {c.candidate.run_id} - {c.baseline.run_id} = "
        f"{_signed(d.estimate)} pp on {c.metric}, {c.confidence:.0%} interval "
        f"{_signed(c.ci_low)} to {_signed(c.ci_high)} pp ({c.ci_method}), p = {p}, "
        f"{c.tasks} paired tasks"
    )


def _comparison_body(c: Comparison) -> str:
    d = c.difference
    parts = [f'<p class="headline">{escape(_decision(c))}</p>']
    parts += [f'<p class="note">warning: {escape(w)}</p>' for w in c.warnings]
    if c.fault_tasks_left_out:
        parts.append(
            f"<p>{c.fault_tasks_left_out} fault-case task(s) (stratum fault:&lt;type&gt; or "
            "regression:&lt;type&gt;) are kept out of the comparison, as out of the headline.</p>"
        )
    rows = [
        [
            "baseline",
            f"{c.baseline.run_id} ({c.baseline.system or 'system not recorded'})",
            pct(c.baseline.estimate),
        ],
        [
            "candidate",
            f"{c.candidate.run_id} ({c.candidate.system or 'system not recorded'})",
            pct(c.candidate.estimate),
        ],
        [
            "paired SE / unpaired SE",
            "what pairing bought",
            f"{_se(d.se_paired)} / {_se(d.se_unpaired)}",
        ],
        [
            "minimum detectable effect",
            "80% power at this design",
            "n/a" if d.mde is None else f"{100 * d.mde:.1f} pp",
        ],
    ]
    parts.append(table(["", "run", c.metric], rows, numeric_from=2))
    if c.strata:
        srows = [
            [
                s.stratum,
                str(s.tasks),
                f"{_signed(s.estimate)} pp",
                f"{_signed(s.ci_low)} to {_signed(s.ci_high)} pp",
                "n/a" if s.p_value is None else f"{s.p_value:.4g}",
                "n/a" if s.p_holm is None else f"{s.p_holm:.4g}",
            ]
            for s in c.strata
        ]
        parts.append(
            table(
                ["stratum", "tasks", "difference", "interval (unadjusted)", "p", "p (Holm)"], srows
            )
        )
    if c.checks:
        parts.append(table(list(cv.MOVE_HEAD), cv.move_rows(c), cv.move_title(c)))
    return "\n".join(parts)


def _paired_section(p: PairedRuns, i: int) -> str:
    anchor = f"compare-{i}"
    head = f'<section id="{anchor}"><h2>Compared: {escape(p.candidate)} against {escape(p.baseline)}</h2>'
    if p.comparison is None:
        return f'{head}<p class="note">not compared: {escape(p.reason or "")}</p></section>'
    c = p.comparison
    body = _comparison_body(c)
    rows = [
        [
            t.task_id,
            t.stratum or "",
            pct(t.baseline),
            pct(t.candidate),
            f"{_signed(t.difference)} pp",
        ]
        for t in p.per_task
    ]
    numbers = table(
        ["task", "stratum", "baseline", "candidate", "difference"], rows, numeric_from=2
    )
    caption = (
        f"Per-task difference in {c.metric}, tasks sorted from the largest gain to the largest loss: "
        "up triangles better on the candidate, down triangles better on the baseline, circles the same; "
        "the line and band are the mean difference and its deciding interval."
    )
    fig = figure(
        f"{anchor}-diff",
        lambda: _plots.difference_svg(p, f"{anchor}-diff"),
        caption,
        # open up to 60 tasks (a closed one would also print closed); longer ones folded
        f"<details{' open' if len(rows) <= 60 else ''}><summary>all {len(rows)} paired tasks"
        f"</summary>{numbers}</details>",
    )
    flips = []
    for title, group in (
        ("better on the candidate", p.improved),
        ("better on the baseline", p.regressed),
    ):
        names = ", ".join(
            f"{t.task_id} ({pct(t.baseline, 0)} → {pct(t.candidate, 0)})" for t in group
        )
        flips.append(
            f"<li><strong>{len(group)} {title}</strong>{': ' + escape(names) if group else ''}</li>"
        )
    return "\n".join(
        [
            head,
            body,
            "<h3>Per-task differences</h3>",
            fig,
            '<h3>Tasks that changed, each direction</h3><ul class="flips">',
            *flips,
            "</ul></section>",
        ]
    )


def report_html(report: Report, *, base: Path | None = None) -> str:
    """The whole report: every run, then every comparison. ``base`` is the folder the page will be
    written to, for relative links to the attempts' raw output (None: absolute file:// links)."""
    nav = [(run_anchor(r.score), f"run {r.score.run_id}") for r in report.runs]
    nav += [
        (f"compare-{i}", f"{p.candidate} vs {p.baseline}") for i, p in enumerate(report.comparisons)
    ]
    body = [f'<p class="note">note: {escape(n)}</p>' for n in report.notes]
    body += [run_section(r.score, r.tasks, r.budget, base) for r in report.runs]
    body += [_paired_section(p, i) for i, p in enumerate(report.comparisons)]
    body += [
        f"<p>{escape(a.system or 'system')} over {a.runs} runs: pass@1 median {pct(a.median)}, 5–95% band {pct(a.p05)} – {pct(a.p95)}</p>"
        for a in report.across_runs
    ]
    return page(f"trialbook report — {', '.join(report.sources)}", nav, body)


def score_html(report: ScoreReport) -> str:
    """``trialbook score --format html``: the scorecards and their figures (``trialbook report``
    adds the outcome grid and the comparisons)."""
    nav = [(run_anchor(r), f"run {r.run_id}") for r in report.runs]
    return page(
        f"trialbook score — {report.source}",
        nav,
        [run_section(r, None, None, None) for r in report.runs],
    )


def compare_html(c: Comparison) -> str:
    """``trialbook compare --format html``: the decision, the difference, the strata, the per-task
    differences and the tasks that changed."""
    from trialbook.analysis import PairedRuns

    title = f"trialbook compare — {c.candidate.run_id} against {c.baseline.run_id}"
    paired = PairedRuns(c.baseline.run_id, c.candidate.run_id, c, None)
    return page(title, [], [_paired_section(paired, 0)])
