"""The report's figures as SVG text, drawn by matplotlib (the optional extra ``trialbook[plots]``).

matplotlib is imported only here and only when a figure is drawn; :func:`plots_available` says
whether it can be. The SVG is deterministic, so the golden files stay byte-stable: a fixed hash
salt per figure (its ids, which also keeps the ids of two figures in one page apart), no date or
creator metadata, text kept as text (``svg.fonttype = none``) in one named font, and no random
state anywhere. Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies),
and every series also differs by marker and line style, never by colour alone. Each function takes
frozen results and draws them: no statistic is computed here.
"""

from __future__ import annotations

import importlib.util
import io
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from trialbook.report._printable import printable

if TYPE_CHECKING:
    from trialbook.analysis import PairedRuns, RunBudget, RunScore

__all__ = [
    "BLUE",
    "GREY",
    "ORANGE",
    "SKY",
    "VERMILLION",
    "budget_svg",
    "difference_svg",
    "passk_svg",
    "plots_available",
    "rounds_svg",
    "strata_svg",
    "variance_svg",
]

# Okabe & Ito (2008), "Color Universal Design": distinguishable under protan, deutan and tritan vision
BLUE, VERMILLION, ORANGE, SKY, GREY = "#0072B2", "#D55E00", "#E69F00", "#56B4E9", "#6E6E6E"

_RC: dict[str, Any] = {
    "svg.fonttype": "none",  # text stays text: no glyph paths that depend on the font files
    "font.family": "DejaVu Sans",  # the font matplotlib ships: the same metrics everywhere
    "font.size": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "path.simplify": False,
    # no mathtext: a stratum, task id or system from a ledger is text, never TeX ("$\\frac{$" would
    # raise matplotlib's ParseSyntaxException; "$x$" would print as math)
    "text.parse_math": False,
}


def plots_available() -> bool:
    """Whether matplotlib (``pip install 'trialbook[plots]'``) can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


@contextmanager
def _figure(name: str, width: float, height: float) -> Iterator[tuple[Any, list[str]]]:
    """A matplotlib Figure (no pyplot, no global figure state) and a one-item list that receives
    its SVG text when the block ends."""
    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    out: list[str] = []
    rc: Any = {**_RC, "svg.hashsalt": f"trialbook-{name}"}  # matplotlib types keys as literals
    with mpl.rc_context(rc):
        fig = Figure(figsize=(width, height), dpi=72, layout="constrained")
        FigureCanvasSVG(fig)
        yield fig, out
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    out.append(_inline(buffer.getvalue(), name))


def _inline(svg: str, name: str) -> str:
    """The SVG element alone (no XML prolog or doctype), sized by the page, labelled for readers."""
    start = svg.index("<svg")
    body = svg[start:]
    body = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", body, count=1)
    return (
        body.replace("<svg", f'<svg role="img" aria-labelledby="{name}-caption"', 1).strip() + "\n"
    )


def _percent_axis(ax: Any, axis: str = "y") -> None:
    from matplotlib.ticker import PercentFormatter

    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0, decimals=0))


def _band(
    ax: Any, xs: Sequence[float], low: Sequence[float], high: Sequence[float], colour: str
) -> None:
    """An interval as a faint fill with its edges drawn in its colour: two bands that overlap stay
    two (denser fills over each other made a grey where neither colour could be read)."""
    ax.fill_between(xs, low, high, color=colour, alpha=0.1, lw=0)
    for edge in (low, high):
        ax.plot(xs, edge, "-", color=colour, alpha=0.8, lw=0.7)


def passk_svg(run: RunScore, name: str) -> str:
    """pass@k (rising) and pass^k (falling) against k, each with its interval as a band."""
    ks = list(run.ks)
    with _figure(name, 6.0, 3.2) as (fig, out):
        ax = fig.add_subplot()
        for prefix, label, colour, marker, style in (
            ("pass@", "pass@k: some attempt of k passes", BLUE, "o", "-"),
            ("pass^", "pass^k: all k attempts pass", VERMILLION, "s", "--"),
        ):
            ms = [run.metrics[f"{prefix}{k}"] for k in ks]
            _band(ax, ks, [m.ci_low for m in ms], [m.ci_high for m in ms], colour)
            ax.plot(ks, [m.estimate for m in ms], style, color=colour, marker=marker, label=label)
        ax.set_xlabel("k (attempts per task)")
        ax.set_ylabel("share of tasks")
        ax.set_ylim(0, 1.02)
        ax.set_xticks(ks if len(ks) <= 12 else ks[:: max(1, len(ks) // 10)])
        _percent_axis(ax)
        ax.legend(loc="best")
    return out[0]


def rounds_svg(run: RunScore, name: str) -> str:
    """A repair run's success within k rounds against k, with its interval as a band."""
    ks = list(run.ks)
    with _figure(name, 6.0, 3.2) as (fig, out):
        ax = fig.add_subplot()
        ms = [run.metrics[f"within@{k}"] for k in ks]
        _band(ax, ks, [m.ci_low for m in ms], [m.ci_high for m in ms], BLUE)
        label = "success within k rounds"
        ax.plot(ks, [m.estimate for m in ms], "-", color=BLUE, marker="o", label=label)
        ax.set_xlabel("k (rounds of repair per task)")
        ax.set_ylabel("share of tasks")
        ax.set_ylim(0, 1.02)
        ax.set_xticks(ks if len(ks) <= 12 else ks[:: max(1, len(ks) // 10)])
        _percent_axis(ax)
        ax.legend(loc="best")
    return out[0]


def strata_svg(run: RunScore, metric: str, name: str) -> str:
    """Each stratum's ``metric`` with its interval, the run's own as a reference line."""
    strata = list(run.strata)
    with _figure(name, 6.0, 1.15 + 0.38 * len(strata)) as (fig, out):  # + the legend
        ax = fig.add_subplot()
        ys = list(range(len(strata)))[::-1]
        est = [s.metrics[metric].estimate for s in strata]
        lo = [s.metrics[metric].estimate - s.metrics[metric].ci_low for s in strata]
        hi = [s.metrics[metric].ci_high - s.metrics[metric].estimate for s in strata]
        ax.errorbar(est, ys, xerr=[lo, hi], fmt="o", color=BLUE, ecolor=BLUE, capsize=3)
        overall = run.metrics[metric].estimate
        ax.axvline(overall, color=GREY, ls=":", lw=1, label=f"whole run {100 * overall:.1f}%")
        # a stratum is the suite's or an importer's text: no control character reaches the font
        ax.set_yticks(ys, [f"{printable(s.stratum)} ({s.tasks})" for s in strata])
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"{metric} (interval over tasks)")
        _percent_axis(ax, "x")
        ax.grid(axis="y", visible=False)
        # above the axes, outside them: inside, it sat on a stratum's interval whatever the corner
        ax.legend(loc="lower right", bbox_to_anchor=(1, 1), borderaxespad=0.2)
    return out[0]


def variance_svg(run: RunScore, name: str) -> str:
    """Where the variance of attempt outcomes lives (between / within tasks), and the SE of
    pass@1 now, with twice the tasks and with twice the attempts per task."""
    v = run.variance
    assert v is not None, "variance_svg needs a run whose variance split exists"
    with _figure(name, 6.0, 2.4) as (fig, out):
        left, right = fig.subplots(1, 2)
        # each bar is named on its axis, so the two colours are never the only cue
        parts = [("between tasks", v.between_shown, BLUE), ("within tasks", v.within, ORANGE)]
        for y, (_, value, colour) in enumerate(parts):
            left.barh(1 - y, value, color=colour, edgecolor="#333333", lw=0.5)
            left.text(value, 1 - y, f" {value:.4f}", va="center")
        left.set_yticks([1, 0], [p[0] for p in parts])
        left.set_xlabel("variance of attempt outcomes")
        left.set_xlim(0, max(0.3, 1.35 * max(v.between_shown, v.within)))
        left.grid(axis="y", visible=False)
        ses = [
            ("now", v.se_now),
            ("2x tasks", v.se_double_tasks),
            ("2x attempts", v.se_double_attempts),
        ]
        for y, (_label, value) in enumerate(ses):
            right.barh(2 - y, 100 * value, color=SKY, edgecolor="#333333", lw=0.5)
            right.text(100 * value, 2 - y, f" {100 * value:.1f} pp", va="center")
        right.set_yticks([2, 1, 0], [s[0] for s in ses])
        right.set_xlabel("SE of pass@1 (pp)")
        # a run whose tasks all agree has SE 0: an axis of width 0 is singular, give it 1 pp
        right.set_xlim(0, max(1.0, 1.45 * 100 * max(s[1] for s in ses)))
        right.grid(axis="y", visible=False)
    return out[0]


def difference_svg(paired: PairedRuns, name: str) -> str:
    """Per-task difference (candidate - baseline), tasks sorted from the largest gain to the
    largest loss; the mean difference and its deciding interval as a band."""
    c = paired.comparison
    assert c is not None, "difference_svg needs a comparison"
    tasks = list(paired.per_task)
    size = 6.0 if len(tasks) <= 40 else 3.0  # hundreds of tasks: small markers, still apart
    with _figure(name, 6.0, 3.0) as (fig, out):
        ax = fig.add_subplot()
        ax.axhspan(c.ci_low, c.ci_high, color=BLUE, alpha=0.1, lw=0)
        for edge in (c.ci_low, c.ci_high):  # the band's edges, as passk's (_band)
            ax.axhline(edge, color=BLUE, alpha=0.8, lw=0.7)
        ax.axhline(c.difference.estimate, color=BLUE, lw=1.2, label="mean difference, interval")
        ax.axhline(0, color="#333333", lw=0.8)
        groups: Sequence[tuple[str, str, str, Any]] = (
            ("better on candidate", BLUE, "^", lambda d: d > 0),
            ("same", GREY, "o", lambda d: d == 0),
            ("better on baseline", VERMILLION, "v", lambda d: d < 0),
        )
        for label, colour, marker, pick in groups:
            xs = [i + 1 for i, t in enumerate(tasks) if pick(t.difference)]
            ys = [t.difference for t in tasks if pick(t.difference)]
            if xs:
                ax.plot(
                    xs,
                    ys,
                    ls="none",
                    marker=marker,
                    ms=size,
                    color=colour,
                    label=f"{label} ({len(xs)})",
                )
        ax.set_xlim(0, len(tasks) + 1)
        ax.xaxis.set_major_locator(_whole_numbers())  # the axis counts tasks: no 2.5
        ax.set_ylim(-1.05, 1.05)
        ax.set_xlabel("tasks, sorted by difference")
        ax.set_ylabel(f"{c.metric}: candidate - baseline")
        ax.yaxis.set_major_formatter(_signed_percent())
        ax.legend(loc="upper right", fontsize=8)
    return out[0]


def budget_svg(budget: RunBudget, name: str) -> str:
    """Coverage against the per-task budget b, and the cost of b with and without stopping at the
    first pass (budgets whose cost is unknown are left out of the cost panel; a run with no cost
    at all has the coverage panel alone, never an empty frame beside it)."""
    bs = [r.budget for r in budget.rows]
    series = [
        ("all b attempts", VERMILLION, "o", "-", [r.cost for r in budget.rows]),
        (
            "stop at first pass",
            BLUE,
            "^",
            "--",
            [r.cost_stop_at_first_success for r in budget.rows],
        ),
    ]
    known = [
        (
            label,
            colour,
            marker,
            style,
            [(b, c) for b, c in zip(bs, costs, strict=True) if c is not None],
        )
        for label, colour, marker, style, costs in series
    ]
    priced = any(points for *_, points in known)
    # two panels at the width of one figure made 6 pt text: wider and taller, drawn at the page's
    # full width (report/_page.py), their legend at the axes' own size
    with _figure(name, 7.6, 3.0) if priced else _figure(name, 4.2, 2.8) as (fig, out):
        axes = list(fig.subplots(1, 2)) if priced else [fig.add_subplot()]
        left = axes[0]
        left.plot(bs, [r.coverage for r in budget.rows], "-", color=BLUE, marker="o")
        left.set_ylim(0, 1.02)
        left.set_xlabel("budget b (attempts per task)")
        left.set_ylabel("coverage")
        _percent_axis(left)
        if priced:
            right = axes[1]
            for label, colour, marker, style, points in known:
                if points:
                    right.plot(
                        *zip(*points, strict=True), style, color=colour, marker=marker, label=label
                    )
            right.set_xlabel("budget b (attempts per task)")
            right.set_ylabel("cost")
            right.set_ylim(bottom=0)
            right.legend(loc="upper left")
        for ax in axes:
            ax.set_xticks(bs if len(bs) <= 12 else bs[:: max(1, len(bs) // 10)])
    return out[0]


def _whole_numbers() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _signed_percent() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _: f"{100 * x:+.0f} pp" if round(100 * x) else "0")
