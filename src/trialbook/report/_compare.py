"""Render a Comparison and a PlanResult (JSON contract, markdown, plain text). No statistics here."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from trialbook.analysis import Comparison
from trialbook.report._json import json_safe
from trialbook.stats import PlanResult

__all__ = [
    "COMPARE_SCHEMA",
    "PLAN_SCHEMA",
    "compare_text",
    "compare_to_dict",
    "plan_text",
    "plan_to_dict",
]

COMPARE_SCHEMA = "trialbook.compare/1"
PLAN_SCHEMA = "trialbook.plan/1"


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
            "bootstrap_ci": [d.ci_low, d.ci_high],
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
    }
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def _pp(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f} pp"


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
            f"neither {m.neither}; exact p = {_p(m.p_value)}"
        )
    lines.append(
        f"{b}DECISION: {c.decision} (act only when the interval excludes 0; minimum detectable effect at this "
        f"design {_pp(d.mde).lstrip('+')} with 80% power)"
    )
    if c.strata:
        lines += [
            "",
            "| stratum | tasks | difference | interval | p | p (Holm) |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for s in c.strata:
            lines.append(
                f"| {s.stratum} | {s.tasks} | {_pp(s.estimate)} | {_pp(s.ci_low)} to {_pp(s.ci_high)} | "
                f"{_p(s.p_value)} | {_p(s.p_holm)} |"
            )
    return "\n".join(lines) + "\n"


def plan_to_dict(p: PlanResult) -> dict[str, Any]:
    """The ``trialbook.plan/1`` document."""
    doc = {"schema": PLAN_SCHEMA, **asdict(p)}
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def plan_text(p: PlanResult) -> str:
    """What the design can detect, in words."""
    lines = [
        f"design: {p.tasks} tasks x {p.attempts} attempts, baseline {p.baseline:.0%}, effect {p.effect:+.3f}, "
        f"alpha {p.alpha}, power target {p.power_target:.0%}",
        f"variance: between tasks {p.between_var:.4f}, within tasks {p.within_var:.4f} ({p.variance_source})",
        f"one score: SE {100 * p.se_unpaired:.2f} pp, interval +-{100 * p.halfwidth:.2f} pp",
        f"unpaired difference: SE {100 * p.se_diff_unpaired:.2f} pp, MDE {100 * p.mde_unpaired:.2f} pp, "
        f"power at the effect {p.power_unpaired:.0%}, tasks needed {p.tasks_needed_unpaired}",
    ]
    if p.se_paired is not None and p.mde_paired is not None and p.power_paired is not None:
        lines.append(
            f"paired difference (agreement {p.agreement:.0%}): SE {100 * p.se_paired:.2f} pp, MDE "
            f"{100 * p.mde_paired:.2f} pp, power at the effect {p.power_paired:.0%}, tasks needed "
            f"{p.tasks_needed_paired}"
        )
    else:
        lines.append("paired difference: give --agreement or a --pilot ledger with two runs")
    lines.append("the same budget spent differently (SE of one score):")
    for o in p.options:
        lines.append(
            f"  {o.label:<22} {o.tasks:>6} tasks x {o.attempts:>3} attempts: SE {100 * o.se:.2f} pp"
        )
    better = "tasks" if p.options[1].se < p.options[2].se else "attempts"
    lines.append(
        f"adding {better} buys more precision here (tasks win when between-task variance "
        'dominates: docs/methodology.md, "Variance between and within tasks")'
    )
    return "\n".join(lines) + "\n"
