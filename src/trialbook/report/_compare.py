"""Render a Comparison (JSON contract, terminal, markdown). No statistics here."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.console import Group
from rich.text import Text

import trialbook.report._checks_view as cv
from trialbook.analysis import Comparison
from trialbook.report._json import json_safe
from trialbook.report._rich import Phrases
from trialbook.report._rich import table as titled_table
from trialbook.report._views import md_code, md_text, render_plain

__all__ = ["COMPARE_SCHEMA", "compare_markdown", "compare_table", "compare_text", "compare_to_dict"]

COMPARE_SCHEMA = "trialbook.compare/1"
FLIPS_SHOWN = 100
"""Task ids listed per direction in markdown (JSON lists them all): a comment stays readable."""


def compare_to_dict(c: Comparison) -> dict[str, Any]:
    """The ``trialbook.compare/1`` document."""
    d = c.difference
    doc = {
        "schema": COMPARE_SCHEMA,
        "metric": c.metric,
        # each run's attempt protocol (null: not recorded, read as independent); a metric
        # "A vs B" when --mixed-protocols compared runs of different ones
        "protocols": {"baseline": c.protocols[0], "candidate": c.protocols[1]},
        "tasks": c.tasks,
        "dropped": {
            "baseline_only": c.dropped_baseline_only,
            "candidate_only": c.dropped_candidate_only,
        },
        "baseline": asdict(c.baseline),
        "candidate": asdict(c.candidate),
        "difference": {
            "estimate": d.estimate,
            "ci_low": c.ci_low,
            "ci_high": c.ci_high,
            "ci_method": c.ci_method,
            "se": d.se_paired,
            "p_value": c.p_value,
            "p_value_mc_se": c.p_value_mc_se,
            "se_unpaired": d.se_unpaired,
            "correlation": d.correlation,
            "mde": d.mde,
        },
        "mcnemar": None if c.mcnemar is None else asdict(c.mcnemar),
        "decision": c.decision,
        "strata": [asdict(s) for s in c.strata],
        "ci": {
            "confidence": c.confidence,
            "resamples": c.resamples,
            "seed": c.seed,
            "unit": "task",
        },
        "warnings": list(c.warnings),
        "flipped": {"improved": list(c.improved_tasks), "worsened": list(c.worsened_tasks)},
        "fault_tasks_left_out": c.fault_tasks_left_out,
        "checks": [
            {
                "check": m.name,
                "tasks": m.difference.tasks,
                "baseline": m.difference.baseline,
                "candidate": m.difference.candidate,
                "estimate": m.difference.estimate,
                "ci_low": m.difference.ci_low,
                "ci_high": m.difference.ci_high,
                "se": m.difference.se_paired,
                "moved": cv.moved(m),
            }
            for m in c.checks
        ],
        "checks_not_compared": list(c.checks_not_compared),
        "per_task": [
            {
                "task_id": t.task_id,
                "stratum": t.stratum,
                "baseline": t.baseline,
                "candidate": t.candidate,
            }
            for t in c.per_task
        ],
    }
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def _pp(x: float | None) -> str:
    if x is None:
        return "n/a"
    # a bound computed as -1e-17 is 0: never "-0.0 pp" (adding 0.0 turns -0.0 into 0.0)
    return f"{round(100 * x, 1) + 0.0:+.1f} pp"


def _p(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _flip_words(c: Comparison) -> tuple[str, str]:
    """How the two directions are called: flips with one attempt each, else rose/fell."""
    if c.mcnemar is not None:
        return "fail -> pass", "pass -> fail"
    return f"{c.metric} rose", f"{c.metric} fell"


def _lead(c: Comparison) -> str:
    d = c.difference
    return (
        f"DECISION: {c.decision} · {c.metric} {_pp(d.estimate)} "
        f"({c.confidence:.0%} interval {_pp(c.ci_low)} to {_pp(c.ci_high)}), "
        f"p = {_p(c.p_value)}"
        + ("" if c.p_value_mc_se is None else f" (±{c.p_value_mc_se:.1g} Monte Carlo)")
        + f", {c.tasks} paired tasks"
    )


def _sides(c: Comparison) -> list[str]:
    return [
        f"{role} {side.run_id} ({side.system or 'system not recorded'}): {100 * side.estimate:.1f}%"
        for role, side in (("candidate", c.candidate), ("baseline ", c.baseline))
    ]


def _how(c: Comparison) -> list[str]:
    d = c.difference
    lines = [
        f"{c.ci_method}; act only when the interval excludes 0, i.e. p < {1 - c.confidence:.2g}",
        f"paired SE {_pp(d.se_paired).lstrip('+')} vs unpaired SE "
        f"{_pp(d.se_unpaired).lstrip('+')}: what pairing bought"
        + (f"; per-task correlation {d.correlation:.2f}" if d.correlation is not None else ""),
        f"minimum detectable effect at this design {_pp(d.mde).lstrip('+')} with 80% power",
    ]
    if c.mcnemar is not None:
        m = c.mcnemar
        lines.append(
            f"McNemar: both {m.both}, only baseline {m.only_baseline}, only candidate "
            f"{m.only_candidate}, neither {m.neither} (the mid-p McNemar test above decides)"
        )
    if c.decision == "not enough tasks to decide":
        lines.append(
            f"too few tasks: even if every informative task went one way, p could not fall "
            f"below {1 - c.confidence:.2g}; no decision and no gate verdict from this comparison"
        )
    return lines


_STRATA_HEAD = ("stratum", "tasks", "difference", "interval (unadjusted)", "p", "p (Holm)")


def _strata_rows(c: Comparison) -> list[tuple[str, ...]]:
    return [
        (
            s.stratum,
            str(s.tasks),
            _pp(s.estimate),
            f"{_pp(s.ci_low)} to {_pp(s.ci_high)}",
            _p(s.p_value),
            _p(s.p_holm),
        )
        for s in c.strata
    ]


def _names(names: tuple[str, ...], limit: int) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _flips(c: Comparison, limit: int) -> list[str]:
    up, down = _flip_words(c)
    return [
        f"{word} ({len(names)}): {_names(names, limit) if names else 'none'}"
        for word, names in ((up, c.improved_tasks), (down, c.worsened_tasks))
    ]


def compare_table(c: Comparison) -> Group:
    """A rich renderable for the terminal: the decision and the difference first."""
    style = {"improvement": "bold green", "regression": "bold red"}.get(c.decision, "bold")
    parts: list[Any] = [Phrases(_lead(c), style=style)]
    parts += [Phrases(f"WARNING: {w}", style="yellow") for w in c.warnings]
    parts += [Phrases(line) for line in _sides(c)]
    parts.append(Text(""))
    parts += [Phrases(line, style="dim") for line in _how(c)]
    if c.strata:
        table = titled_table("by stratum")
        for i, head in enumerate(_STRATA_HEAD):
            table.add_column(head, justify="left" if i == 0 else "right", no_wrap=i > 0)
        for row in _strata_rows(c):
            table.add_row(*row)
        parts += [Text(""), table]
    if c.checks:
        table = titled_table(cv.move_title(c))
        for i, head in enumerate(cv.MOVE_HEAD):
            table.add_column(head, justify="left" if i in (0, 6) else "right", no_wrap=i > 0)
        for row in cv.move_rows(c):
            table.add_row(*row)
        parts += [Text(""), table]
    if line := cv.not_compared_line(c):
        parts += [Phrases(line, style="dim")]
    parts += [Text("")] + [Phrases(line) for line in _flips(c, 20)]
    return Group(*parts)


def compare_markdown(c: Comparison) -> str:
    """Markdown for a pull-request comment or a job summary: the decision and the difference
    first, the rest folded in ``<details>``; the flipped tasks listed in each direction."""
    out = [f"### {_lead(c)}", ""]
    out += [f"> **WARNING:** {md_text(w)}" for w in c.warnings]
    if c.warnings:
        out.append("")
    out += [f"{md_text(line.replace('baseline ', 'baseline'))}  " for line in _sides(c)] + [""]
    up, down = _flip_words(c)
    flips = [
        f"- **{word}** ({len(names)}): "
        + (_names(tuple(md_code(n) for n in names), FLIPS_SHOWN) if names else "none")
        for word, names in ((up, c.improved_tasks), (down, c.worsened_tasks))
    ]
    out += _fold(
        f"Tasks that changed: {len(c.improved_tasks)} {up}, {len(c.worsened_tasks)} {down}", flips
    )
    if c.strata:
        body = ["| " + " | ".join(_STRATA_HEAD) + " |", "|---|---:|---:|---:|---:|---:|"]
        body += ["| " + " | ".join(md_text(x) for x in row) + " |" for row in _strata_rows(c)]
        out += _fold("By stratum", body)
    if c.checks:
        body = ["| " + " | ".join(cv.MOVE_HEAD) + " |", "|---|---:|---:|---:|---:|---:|---|"]
        body += ["| " + " | ".join(md_text(x) for x in row) + " |" for row in cv.move_rows(c)]
        if line := cv.not_compared_line(c):
            body += ["", f"_{md_text(line)}_"]
        out += _fold(cv.move_title(c).replace("checks:", "Checks that moved:", 1), body)
    out += _fold("How this was decided", [f"- {md_text(line)}" for line in _how(c)])
    return "\n".join(out).rstrip() + "\n"


def _fold(summary: str, body: list[str]) -> list[str]:
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>", ""]


def compare_text(c: Comparison, *, markdown: bool = False) -> str:
    """The comparison as text: markdown (:func:`compare_markdown`), or the terminal view without
    colour and unwrapped (each line whole, for the caller's console or file to wrap at spaces)."""
    if markdown:
        return compare_markdown(c)
    return render_plain(compare_table(c), width=UNWRAPPED)


UNWRAPPED = 10_000
"""A width no line reaches: free text stays one line, tables keep their natural width."""
