"""What a planned design can detect, as text and as the ``trialbook.plan/1`` document."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from trialbook.report._json import json_safe
from trialbook.stats import PlanResult

__all__ = ["PLAN_SCHEMA", "plan_text", "plan_to_dict"]

PLAN_SCHEMA = "trialbook.plan/1"


def plan_to_dict(p: PlanResult) -> dict[str, Any]:
    """The ``trialbook.plan/1`` document."""
    doc = {"schema": PLAN_SCHEMA, **asdict(p)}
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def plan_text(p: PlanResult, *, width: int = 80) -> str:
    """What the design can detect, in words, in lines that fit ``width``."""
    from trialbook.report._wrap import wrap

    return wrap(_plan_lines(p), width) + "\n"


def _plan_lines(p: PlanResult) -> str:
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
        if p.attempts > 1 and p.se_paired_all_noise is not None and p.paired_noise_share != 1:
            lines.append(
                f"  if all of the disagreement were attempt noise: SE {100 * p.se_paired_all_noise:.2f} pp "
                "(the optimistic bound)"
            )
    else:
        lines.append("paired difference: give --agreement or a --pilot ledger with two runs")
    lines.append("the same budget spent differently (SE of one score):")
    for o in p.options:
        lines.append(
            f"  {o.label:<22} {o.tasks:>6} tasks x {o.attempts:>3} attempts: SE {100 * o.se:.2f} pp"
        )
    lines.append(_spend_line(p))
    lines.append("assumes:")
    lines += [f"  - {a}" for a in p.assumptions]
    return "\n".join(lines)


def _spend_line(p: PlanResult) -> str:
    """Which doubling buys more, as the numbers say: the SE^2 of one score is between / T +
    within / (T R); doubling tasks halves both parts, doubling attempts only the second."""
    tasks_se, attempts_se = p.options[1].se, p.options[2].se
    part = p.within_var / p.attempts
    if not tasks_se < attempts_se:
        return (
            f"2x tasks and 2x attempts give the same SE here ({100 * tasks_se:.2f} pp): with no "
            "between-task variance, only the number of attempts in all counts"
        )
    why = (
        f"more tasks shrink both the between-task part ({p.between_var:.4f}) and the within-task "
        f"part ({p.within_var:.4f} / {p.attempts} attempts = {part:.4f}) of the variance, more "
        "attempts only the within-task part"
    )
    close = (
        "; the within-task part is the larger here, so more attempts come close"
        if part > p.between_var
        else "; the between-task part is the larger here, so more attempts buy little"
    )
    return (
        f"adding tasks buys more precision here (SE {100 * tasks_se:.2f} against "
        f"{100 * attempts_se:.2f} pp): {why}{close} "
        '(docs/methodology.md, "Variance between and within tasks")'
    )
