"""Render a Comparison (JSON contract, markdown, plain text). No statistics here."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from trialbook.analysis import Comparison
from trialbook.report._json import json_safe

__all__ = ["COMPARE_SCHEMA", "compare_text", "compare_to_dict"]

COMPARE_SCHEMA = "trialbook.compare/1"


def compare_to_dict(c: Comparison) -> dict[str, Any]:
    """The ``trialbook.compare/1`` document."""
    d = c.difference
    doc = {
        "schema": COMPARE_SCHEMA,
        "metric": c.metric,
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


def compare_text(c: Comparison, *, markdown: bool = False) -> str:
    """A human report; markdown when asked (for a pull-request comment)."""
    d = c.difference
    b = "- " if markdown else ""
    lines = [
        f"{'## ' if markdown else ''}trialbook compare — {c.metric}, {c.tasks} paired tasks",
        "",
    ]
    lines += [f"{b}WARNING: {w}" for w in c.warnings]
    if c.warnings:
        lines.append("")
    lines += [
        f"{b}baseline  {c.baseline.run_id} ({c.baseline.system or 'system not recorded'}): {100 * c.baseline.estimate:.1f}%",
        f"{b}candidate {c.candidate.run_id} ({c.candidate.system or 'system not recorded'}): {100 * c.candidate.estimate:.1f}%",
        f"{b}difference {_pp(d.estimate)}, {c.confidence:.0%} interval {_pp(c.ci_low)} to {_pp(c.ci_high)} "
        f"({c.ci_method}), p = {_p(c.p_value)}",
        f"{b}paired SE {_pp(d.se_paired).lstrip('+')} vs unpaired SE {_pp(d.se_unpaired).lstrip('+')}: what pairing bought"
        + (f"; per-task correlation {d.correlation:.2f}" if d.correlation is not None else ""),
    ]
    if c.mcnemar is not None:
        m = c.mcnemar
        lines.append(
            f"{b}McNemar: both {m.both}, only baseline {m.only_baseline}, only candidate {m.only_candidate}, "
            f"neither {m.neither} (the mid-p McNemar test above decides)"
        )
    lines.append(
        f"{b}DECISION: {c.decision} (act only when the interval excludes 0, i.e. p < "
        f"{1 - c.confidence:.2g}; minimum detectable effect at this design "
        f"{_pp(d.mde).lstrip('+')} with 80% power)"
    )
    if c.decision == "not enough tasks to decide":
        lines.append(
            f"{b}too few tasks: even if every informative task went one way, p could not fall "
            f"below {1 - c.confidence:.2g}; no decision and no gate verdict from this comparison"
        )
    if c.strata:
        lines += [
            "",
            "| stratum | tasks | difference | interval (unadjusted) | p | p (Holm) |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for s in c.strata:
            lines.append(
                f"| {s.stratum} | {s.tasks} | {_pp(s.estimate)} | {_pp(s.ci_low)} to {_pp(s.ci_high)} | "
                f"{_p(s.p_value)} | {_p(s.p_holm)} |"
            )
    return "\n".join(lines) + "\n"
