"""Render results as one self-contained HTML page: no script, no stylesheet, font or image fetched,
every figure inline SVG with its numbers in a table beside it, readable printed.

Figures come from :mod:`trialbook.report._plots` when matplotlib is installed; without it each
figure's table stands alone and the page says how to get the plots. No statistic is computed here:
every number is read off the frozen results and formatted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from trialbook.report import _plots
from trialbook.report._page import CSS, OUTCOMES, headline
from trialbook.report._score import _ci_line, _companions, _header, _pct, _variance_lines

if TYPE_CHECKING:
    from trialbook.analysis import (
        Comparison,
        PairedRuns,
        Report,
        RunScore,
        ScoreReport,
        TaskOutcomes,
    )

__all__ = ["compare_html", "report_html", "score_html"]

Rows = Sequence[Sequence[str]]


def _table(head: Sequence[str], rows: Rows, caption: str = "", numeric_from: int = 1) -> str:
    """An HTML table; columns from ``numeric_from`` on are right-aligned numbers."""
    cls = [' class="num"' if i >= numeric_from else "" for i in range(len(head))]
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{escape(caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f"<th{c}>{escape(h)}</th>" for c, h in zip(cls, head, strict=True))
        + "</tr></thead><tbody>"
    )
    for row in rows:
        out.append(
            "<tr>"
            + "".join(f"<td{c}>{escape(v)}</td>" for c, v in zip(cls, row, strict=True))
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def _figure(name: str, draw: Callable[[], str], caption: str, table: str) -> str:
    """A figure and the table of its numbers, side by side (stacked when narrow or printed)."""
    if _plots.plots_available():
        svg = draw()
        plot = (
            f'<figure>{svg}<figcaption id="{name}-caption">{escape(caption)}</figcaption></figure>'
        )
    else:
        plot = (
            f'<p class="noplot" id="{name}-caption">{escape(caption)} (the plot needs matplotlib: '
            "<code>pip install 'trialbook[plots]'</code>; its numbers are in the table)</p>"
        )
    return f'<div class="fig">{plot}<div class="numbers">{table}</div></div>'


def _interval(low: float, high: float) -> str:
    return f"{_pct(low)} – {_pct(high)}"


def _run_id(run: RunScore) -> str:
    return "run-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in run.run_id)


def _scorecard(run: RunScore) -> str:
    rows = [
        [
            name,
            _pct(m.estimate),
            _interval(m.ci_low, m.ci_high),
            "n/a" if m.se is None else f"{100 * m.se:.1f} pp",
        ]
        for name, m in [
            *run.metrics.items(),
            ("pooled attempt rate", run.pooled_attempt_rate),
            ("first-attempt rate", run.first_attempt_rate),
            *([("mean score (partial credit)", run.mean_score)] if run.mean_score else []),
        ]
    ]
    metrics = _table(["metric", "estimate", "interval", "SE"], rows, _ci_line(run))
    companions = _table(["companion figure", "value"], _companions(run), numeric_from=2)
    return f'<div class="pair">{metrics}{companions}</div>'


def _passk(run: RunScore, anchor: str) -> str:
    rows = []
    for k in run.ks:
        at, hat = run.metrics[f"pass@{k}"], run.metrics[f"pass^{k}"]
        rows.append(
            [
                str(k),
                _pct(at.estimate),
                _interval(at.ci_low, at.ci_high),
                _pct(hat.estimate),
                _interval(hat.ci_low, hat.ci_high),
            ]
        )
    table = _table(["k", "pass@k", "interval", "pass^k", "interval"], rows)
    caption = (
        "pass@k (circles, solid) rises with k: some attempt of k passes; pass^k (squares, dashed) "
        "falls: all k pass. Bands are the intervals over tasks."
    )
    return _figure(
        f"{anchor}-passk", lambda: _plots.passk_svg(run, f"{anchor}-passk"), caption, table
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
            _pct(s.metrics[metric].estimate),
            _interval(s.metrics[metric].ci_low, s.metrics[metric].ci_high),
        ]
        for s in run.strata
    ]
    table = _table(["stratum", "tasks", "attempts", metric, "interval"], rows)
    caption = f"{metric} per stratum with its interval over the stratum's tasks; dotted line: the whole run."
    name = f"{anchor}-strata"
    return _figure(name, lambda: _plots.strata_svg(run, metric, name), caption, table)


def _variance(run: RunScore, anchor: str) -> str:
    v = run.variance
    if v is None:
        return f"<p>{escape(_variance_lines(run)[0])}</p>"
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
    return _figure(
        name, lambda: _plots.variance_svg(run, name), caption, _table(["part", "value"], rows)
    )


def _href(path: str, base: Path | None) -> str:
    """A link to a local file: relative to the page's folder when known, else a file:// URI."""
    if base is None:
        return Path(path).as_uri()
    return escape(Path(os.path.relpath(path, base)).as_posix(), quote=True)


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
        passes = sum(a.outcome == "pass" for a in t.attempts)
        note = (
            ' <span class="tag">quarantined: oracle leaked, not scored</span>'
            if t.quarantined
            else ""
        )
        out.append(
            f'<tr><th scope="row">{escape(t.task_id)}{note}</th><td>{escape(t.stratum or "")}</td><td class="num">{passes}/{len(t.attempts)}</td>'
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
            if a.timed_out and a.outcome == "pass":
                title.append("passed when graded after its timeout")
            if a.error:
                title.append(a.error)
            if a.transcript_files:
                title.append("kept: " + ", ".join(a.transcript_files))
            label = f"{sym} {escape(word)}"
            if a.transcript is not None:
                label = f'<a href="{_href(a.transcript, base)}">{label}</a>'
            out.append(
                f'<td class="o {cls}" title="{escape("; ".join(title), quote=True)}">{label}</td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _run_section(run: RunScore, grid: Sequence[TaskOutcomes] | None, base: Path | None) -> str:
    anchor = _run_id(run)
    parts = [
        f'<section id="{anchor}"><h2>{escape(_header(run))}</h2>',
        f'<p class="headline">{escape(headline(run))}</p>',
    ]
    parts += [f'<p class="note">note: {escape(n)}</p>' for n in run.notes]
    parts += ["<h3>Scorecard</h3>", _scorecard(run)]
    parts += ["<h3>pass@k and pass^k against k</h3>", _passk(run, anchor)]
    parts += ["<h3>By stratum</h3>", _strata(run, anchor)]
    if grid is not None:
        parts += ["<h3>Outcomes, task by attempt</h3>", _grid(grid, base)]
    parts += ["<h3>Variance split</h3>", _variance(run, anchor), "</section>"]
    return "\n".join(parts)


def _se(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} pp"


def _decision(c: Comparison) -> str:
    d = c.difference
    p = "n/a" if c.p_value is None else f"{c.p_value:.4g}"
    return (
        f"{c.decision.upper()}: {c.candidate.run_id} - {c.baseline.run_id} = "
        f"{100 * d.estimate:+.1f} pp on {c.metric}, {c.confidence:.0%} interval "
        f"{100 * c.ci_low:+.1f} to {100 * c.ci_high:+.1f} pp ({c.ci_method}), p = {p}, "
        f"{c.tasks} paired tasks"
    )


def _comparison_body(c: Comparison) -> str:
    d = c.difference
    parts = [f'<p class="headline">{escape(_decision(c))}</p>']
    parts += [f'<p class="note">warning: {escape(w)}</p>' for w in c.warnings]
    rows = [
        [
            "baseline",
            f"{c.baseline.run_id} ({c.baseline.system or 'system not recorded'})",
            _pct(c.baseline.estimate),
        ],
        [
            "candidate",
            f"{c.candidate.run_id} ({c.candidate.system or 'system not recorded'})",
            _pct(c.candidate.estimate),
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
    parts.append(_table(["", "run", c.metric], rows, numeric_from=2))
    if c.strata:
        srows = [
            [
                s.stratum,
                str(s.tasks),
                f"{100 * s.estimate:+.1f} pp",
                f"{100 * s.ci_low:+.1f} to {100 * s.ci_high:+.1f} pp",
                "n/a" if s.p_value is None else f"{s.p_value:.4g}",
                "n/a" if s.p_holm is None else f"{s.p_holm:.4g}",
            ]
            for s in c.strata
        ]
        parts.append(
            _table(
                ["stratum", "tasks", "difference", "interval (unadjusted)", "p", "p (Holm)"], srows
            )
        )
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
            _pct(t.baseline),
            _pct(t.candidate),
            f"{100 * t.difference:+.1f} pp",
        ]
        for t in p.per_task
    ]
    table = _table(["task", "stratum", "baseline", "candidate", "difference"], rows, numeric_from=2)
    caption = (
        f"Per-task difference in {c.metric}, tasks sorted from the largest gain to the largest loss: "
        "up triangles better on the candidate, down triangles better on the baseline, circles the same; "
        "the line and band are the mean difference and its deciding interval."
    )
    fig = _figure(
        f"{anchor}-diff",
        lambda: _plots.difference_svg(p, f"{anchor}-diff"),
        caption,
        # open up to 60 tasks (a closed one would also print closed); longer ones folded
        f"<details{' open' if len(rows) <= 60 else ''}><summary>all {len(rows)} paired tasks"
        f"</summary>{table}</details>",
    )
    flips = []
    for title, group in (
        ("better on the candidate", p.improved),
        ("better on the baseline", p.regressed),
    ):
        names = ", ".join(
            f"{t.task_id} ({_pct(t.baseline, 0)} → {_pct(t.candidate, 0)})" for t in group
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


def _page(title: str, nav: Sequence[tuple[str, str]], body: Sequence[str]) -> str:
    links = "".join(f'<li><a href="#{a}">{escape(t)}</a></li>' for a, t in nav)
    plots = (
        ""
        if _plots.plots_available()
        else (
            '<p class="note">matplotlib is not installed: tables stand where the plots would be '
            "(<code>pip install 'trialbook[plots]'</code> draws them).</p>"
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n"
        f"<header><h1>{escape(title)}</h1>{plots}<nav><ul>{links}</ul></nav></header>\n<main>\n"
        + "\n".join(body)
        + "\n</main><footer>Made by trialbook. Intervals resample tasks; see docs/report.md for what each figure shows.</footer></body></html>\n"
    )


def report_html(report: Report, *, base: Path | None = None) -> str:
    """The whole report: every run, then every comparison. ``base`` is the folder the page will be
    written to, for relative links to the attempts' raw output (None: absolute file:// links)."""
    nav = [(_run_id(r.score), f"run {r.score.run_id}") for r in report.runs]
    nav += [
        (f"compare-{i}", f"{p.candidate} vs {p.baseline}") for i, p in enumerate(report.comparisons)
    ]
    body = [_run_section(r.score, r.tasks, base) for r in report.runs]
    body += [_paired_section(p, i) for i, p in enumerate(report.comparisons)]
    body += [
        f"<p>{escape(a.system or 'system')} over {a.runs} runs: pass@1 median {_pct(a.median)}, 5–95% band {_pct(a.p05)} – {_pct(a.p95)}</p>"
        for a in report.across_runs
    ]
    return _page(f"trialbook report — {', '.join(report.sources)}", nav, body)


def score_html(report: ScoreReport) -> str:
    """``trialbook score --format html``: the scorecards and their figures (``trialbook report``
    adds the outcome grid and the comparisons)."""
    nav = [(_run_id(r), f"run {r.run_id}") for r in report.runs]
    return _page(
        f"trialbook score — {report.source}",
        nav,
        [_run_section(r, None, None) for r in report.runs],
    )


def compare_html(c: Comparison) -> str:
    """``trialbook compare --format html``: the decision, the difference and the strata."""
    title = f"trialbook compare — {c.candidate.run_id} against {c.baseline.run_id}"
    return _page(title, [], [f'<section id="compare">{_comparison_body(c)}</section>'])
