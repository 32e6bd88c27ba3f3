"""`trialbook plan` inputs: assumed variances, or estimates from a pilot ledger."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trialbook.analysis._protocol import refuse_dependent
from trialbook.errors import ArgumentError
from trialbook.ledger import read_ledger
from trialbook.stats import PlanResult, plan_design, variance_components

__all__ = ["plan_from_options"]


def plan_from_options(
    *,
    tasks: int,
    attempts: int,
    baseline: float | None,
    effect: float,
    alpha: float = 0.05,
    power: float = 0.8,
    between_var: float | None = None,
    within_var: float | None = None,
    agreement: float | None = None,
    pilot: Path | None = None,
) -> PlanResult:
    """Plan a design; a pilot ledger supplies the baseline, variance components and agreement.

    A pilot of single-attempt runs gives the baseline and (with two runs) the agreement of their
    first attempts, but no variance split: the assumed one is used and named in the result.
    """
    for name, value in (("between_var", between_var), ("within_var", within_var)):
        if value is not None and not 0 <= value <= 0.25:
            raise ArgumentError(
                f"{name} must lie in 0..0.25 (a variance of 0/1 outcomes), got {value:g}",
                argument=name,
            )
    source = None
    if pilot is not None:
        ledger = read_ledger(pilot)
        firsts: list[dict[str, bool]] = []
        comps = []
        rates = []
        for run_id in ledger.run_ids or (None,):
            rows = ledger.latest() if run_id is None else ledger.run(run_id)
            protocol = rows.first("protocol")
            refuse_dependent(
                protocol if isinstance(protocol, str) else None,
                str(run_id or pilot),
                "a pilot's between- and within-task variance",
                "pilot",
            )
            groups = rows.where(~rows.column("oracle_leak")).tasks()
            n, c = groups.attempts, groups.passes
            rates.append(float((c / n).mean()))
            vc = variance_components(n, c)
            if vc is not None:
                comps.append(vc)
            firsts.append(dict(zip(groups.task_ids, groups.first_passed.tolist(), strict=True)))
        baseline = baseline if baseline is not None else float(np.mean(rates))
        if between_var is None and within_var is None:
            if comps:
                between_var = max(0.0, float(np.mean([v.between for v in comps])))
                within_var = float(np.mean([v.within for v in comps]))
                source = f"pilot {pilot}: {len(comps)} run(s)"
            else:
                # one attempt per task (or one task) cannot separate the two parts: say so, assume
                source = (
                    f"pilot {pilot}: one attempt per task cannot separate between- from within-task "
                    "variance; assumed: P(1-P) at the pilot's pass rate, split equally"
                )
        if agreement is None and len(firsts) >= 2:
            shared = sorted(set(firsts[0]) & set(firsts[1]))
            if shared:
                agreement = float(np.mean([firsts[0][t] == firsts[1][t] for t in shared]))
    if baseline is None:
        raise ArgumentError(
            "baseline is required unless a pilot ledger gives it", argument="baseline"
        )
    return plan_design(
        tasks=tasks,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        alpha=alpha,
        power=power,
        between_var=between_var,
        within_var=within_var,
        agreement=agreement,
        variance_source=source,
    )
