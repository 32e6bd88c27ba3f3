"""What a design of T tasks x R attempts per task can detect, before anyone pays for it.

See docs/methodology.md, "Planning a design" (Miller 2024, arXiv 2411.00640, §2.6).

One system's score:   Var = (σ_b² + σ_w²/R) / T
Unpaired difference:  twice that.
Paired difference:    (ω² + 2σ_w²/R) / T, where ω² is the between-task variance of the difference.
With single attempts the paired per-task variance is ψ − δ², ψ the discordant share (1 − agreement),
so ω² = ψ − 2σ_w² (kept >= 0). MDE = (z_{1−α/2} + z_{power}) · SE; tasks needed for effect δ:
(z_{1−α/2} + z_{power})² · v / δ² (Miller's n; Connor 1987 in the paired case).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trialbook.errors import ArgumentError

__all__ = ["DesignOption", "PlanResult", "plan_design"]


@dataclass(frozen=True)
class DesignOption:
    """One way to spend a budget: T tasks x R attempts, and the SE of a score it gives."""

    label: str
    """What changed, e.g. "2x tasks"."""
    tasks: int
    """T."""
    attempts: int
    """R, independent attempts per task."""
    se: float
    """Standard error of one system's score."""


@dataclass(frozen=True)
class PlanResult:
    """Precision and power of a design."""

    tasks: int
    """T, tasks."""
    attempts: int
    """R, independent attempts per task (what the command line calls --runs)."""
    baseline: float
    """Assumed baseline pass rate."""
    effect: float
    """Difference to detect (absolute, e.g. 0.03)."""
    alpha: float
    """Two-sided significance level."""
    power_target: float
    """Target power."""
    between_var: float
    """σ_b², variance of true per-task rates."""
    within_var: float
    """σ_w², variance of one attempt around its task's rate."""
    variance_source: str
    """Where the variance came from (assumed split, or the pilot ledger)."""
    agreement: float | None
    """Share of tasks on which two systems agree with single attempts (paired designs)."""
    se_unpaired: float
    """SE of one system's score."""
    halfwidth: float
    """Half-width of its confidence interval."""
    se_diff_unpaired: float
    """SE of the difference of two independent scores."""
    mde_unpaired: float
    """Minimum detectable effect, unpaired."""
    se_paired: float | None
    """SE of the paired difference (None without agreement or a two-run pilot)."""
    mde_paired: float | None
    """Minimum detectable effect, paired."""
    power_unpaired: float
    """Power at ``effect``, unpaired."""
    power_paired: float | None
    """Power at ``effect``, paired."""
    power: float
    """Power at ``effect`` of the best design available (paired if known)."""
    tasks_needed_unpaired: int
    """Tasks needed at R attempts for the target power, unpaired."""
    tasks_needed_paired: int | None
    """Tasks needed at R attempts for the target power, paired."""
    options: tuple[DesignOption, ...]
    """The same budget spent differently: now, 2x tasks, 2x attempts."""


def _power(effect: float, se: float, z: float) -> float:
    from scipy.special import ndtr

    if se <= 0:
        return 1.0 if effect != 0 else 0.0
    return float(ndtr(effect / se - z) + ndtr(-effect / se - z))


def plan_design(
    *,
    tasks: int,
    attempts: int,
    baseline: float,
    effect: float,
    alpha: float = 0.05,
    power: float = 0.8,
    between_var: float | None = None,
    within_var: float | None = None,
    agreement: float | None = None,
    variance_source: str | None = None,
) -> PlanResult:
    """Standard errors, MDEs, power and tasks needed for T tasks x R attempts.

    Without ``between_var``/``within_var`` the Bernoulli variance P(1−P) is split equally between tasks
    and attempts (and the result says so); give one and the other is P(1−P) minus it.
    """
    from scipy.special import ndtri

    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 2:
        raise ArgumentError(f"tasks must be a whole number >= 2, got {tasks!r}", argument="tasks")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ArgumentError(
            f"attempts must be a whole number >= 1, got {attempts!r}", argument="attempts"
        )
    if not 0 < baseline < 1:
        raise ArgumentError(
            f"baseline must lie strictly between 0 and 1, got {baseline}", argument="baseline"
        )
    if not 0 < abs(effect) < 1:
        raise ArgumentError(
            f"effect must be a non-zero difference below 1 in size, got {effect}", argument="effect"
        )
    if not 0 < alpha < 1:
        raise ArgumentError(
            f"alpha must lie strictly between 0 and 1, got {alpha}", argument="alpha"
        )
    if not 0 < power < 1:
        raise ArgumentError(
            f"power must lie strictly between 0 and 1, got {power}", argument="power"
        )
    total = baseline * (1 - baseline)
    source = variance_source
    if between_var is None and within_var is None:
        between_var = within_var = total / 2
        source = source or "assumed: P(1-P) split equally between tasks and attempts"
    elif between_var is None:
        assert within_var is not None
        between_var = total - within_var
        source = source or "assumed: P(1-P) minus the within-task variance, between tasks"
    elif within_var is None:
        within_var = total - between_var
        source = source or "assumed: P(1-P) minus the between-task variance, within tasks"
    else:
        source = source or "given: between- and within-task variances"
    # unbiased estimates from a small pilot may exceed 0.25 (c(n-c)/(n(n-1)) = 1/3 at n=3, c=1)
    for name, value in (("between_var", between_var), ("within_var", within_var)):
        if not 0 <= value <= 1:
            raise ArgumentError(f"{name} must lie in 0..1, got {value:g}", argument=name)
    if agreement is not None and not 0 <= agreement <= 1:
        raise ArgumentError(f"agreement must lie in 0..1, got {agreement}", argument="agreement")

    z = float(ndtri(1 - alpha / 2))
    zz = z + float(ndtri(power))
    d = abs(effect)

    def se_one(t: int, r: int) -> float:
        return math.sqrt((between_var + within_var / r) / t)

    se_u = se_one(tasks, attempts)
    se_du = math.sqrt(2) * se_u
    per_task_u = 2 * (between_var + within_var / attempts)
    se_p = mde_p = power_p = None
    needed_p = None
    if agreement is not None:
        psi = 1 - agreement
        within_d = min(2 * within_var, psi)
        per_task_p = (psi - within_d) + within_d / attempts
        se_p = math.sqrt(per_task_p / tasks)
        mde_p = zz * se_p
        at_effect = max(per_task_p - d * d, 0.0)
        power_p = _power(d, math.sqrt(at_effect / tasks), z)
        needed_p = max(2, math.ceil(zz * zz * at_effect / (d * d)))
    power_u = _power(d, se_du, z)
    options = (
        DesignOption("as planned", tasks, attempts, se_u),
        DesignOption("2x tasks", 2 * tasks, attempts, se_one(2 * tasks, attempts)),
        DesignOption("2x attempts per task", tasks, 2 * attempts, se_one(tasks, 2 * attempts)),
    )
    return PlanResult(
        tasks=tasks,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        alpha=alpha,
        power_target=power,
        between_var=between_var,
        within_var=within_var,
        variance_source=source or "",
        agreement=agreement,
        se_unpaired=se_u,
        halfwidth=z * se_u,
        se_diff_unpaired=se_du,
        mde_unpaired=zz * se_du,
        se_paired=se_p,
        mde_paired=mde_p,
        power_unpaired=power_u,
        power_paired=power_p,
        power=power_p if power_p is not None else power_u,
        tasks_needed_unpaired=max(2, math.ceil(zz * zz * per_task_u / (d * d))),
        tasks_needed_paired=needed_p,
        options=options,
    )
