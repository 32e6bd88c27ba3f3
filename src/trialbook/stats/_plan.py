"""What a design of T tasks x R attempts per task can detect, before anyone pays for it.

See docs/methodology.md, "Planning a design" (Miller 2024, arXiv 2411.00640, §2.6).

One system's score:   Var = (σ_b² + σ_w²/R) / T
Unpaired difference:  twice that.
Paired difference:    (ω² + w/R) / T, ω² the between-task variance of the true per-task difference,
w = σ_wA² + σ_wB² = 2σ_w² the attempt noise of the two systems' difference (Miller 2024: the
within-question part averages down with K samples, the between part does not). With single attempts the
paired per-task variance is ψ − δ², ψ the discordant share (1 − agreement), so ψ = ω² + w under no
difference. The agreement alone cannot split ψ into ω² and w; the split is an assumption:
- the within-task variance is known (given, or estimated from a pilot with 2+ attempts per task):
  w = min(2σ_w², ψ);
- it is only assumed (the default P(1−P) split, or a pilot of single attempts): w = 0, extra runs buy
  nothing for the paired difference (the conservative bound); the bound with w = ψ (all of the
  disagreement attempt noise) is reported beside it.
MDE = (z_{1−α/2} + z_{power}) · SE; tasks needed for effect δ: (z_{1−α/2} + z_{power})² · v / δ²
(Miller's n; Connor 1987 in the paired case). All of it is the normal approximation.
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
    paired_noise_share: float | None = None
    """Share w/ψ of the single-attempt disagreement taken as attempt noise (shrinks with R)."""
    se_paired_all_noise: float | None = None
    """The paired SE if all of the disagreement were attempt noise (w = ψ): the optimistic bound."""
    assumptions: tuple[str, ...] = ()
    """Every assumption the figures rest on, in words."""


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
    and attempts (and the result says so); give one and the other is P(1−P) minus it. The paired
    figures credit extra attempts against the disagreement only when the within-task variance is
    known (one of the two given); otherwise they take none of it as attempt noise. ``assumptions``
    lists every assumption in words.
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
    within_known = between_var is not None or within_var is not None
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
    if agreement is not None and 1 - agreement < abs(effect):
        # the difference of two pass rates comes only from tasks where they disagree: |δ| <= ψ
        raise ArgumentError(
            f"agreement {agreement:g} leaves {1 - agreement:.4g} of tasks discordant, less than the "
            f"effect {abs(effect):g} needs (a difference comes only from discordant tasks)",
            argument="agreement",
        )

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
    noise_share = se_all_noise = None
    paired_note = None
    if agreement is not None:
        psi = 1 - agreement
        if within_known:
            within_d = min(2 * within_var, psi)
            if 2 * within_var > psi:
                paired_note = (
                    f"paired: the within-task variance {within_var:.4g} implies more disagreement "
                    f"(2σ_w² = {2 * within_var:.4g}) than the agreement leaves ({psi:.4g}); all of "
                    "the disagreement is taken as attempt noise (the optimistic bound)"
                )
            else:
                paired_note = (
                    f"paired: of the discordant share ψ = {psi:.4g}, 2σ_w² = {within_d:.4g} is attempt "
                    f"noise (shrinks with R) and ω² = {psi - within_d:.4g} is task-level (does not)"
                )
        else:
            within_d = 0.0
            paired_note = (
                f"paired: the within-task variance is assumed, not known, so none of the discordant "
                f"share ψ = {psi:.4g} is taken as attempt noise: extra attempts are assumed to buy "
                "nothing for the paired difference (conservative; give the within-task variance or a "
                "pilot with 2+ attempts per task to credit them)"
            )
        noise_share = within_d / psi if psi > 0 else 0.0
        per_task_p = (psi - within_d) + within_d / attempts
        se_p = math.sqrt(per_task_p / tasks)
        se_all_noise = math.sqrt(psi / attempts / tasks)
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
    assumptions = [
        "normal approximation: SE-based intervals, MDE = (z_{1-α/2} + z_power)·SE, power and tasks "
        "needed from the normal distribution",
        "attempts of a task are independent draws at that task's rate; tasks are a sample of the "
        "task population",
        f"variance split: between tasks {between_var:.4g}, within tasks {within_var:.4g} "
        f"({source or 'given'})",
    ]
    if paired_note is not None:
        assumptions.append(paired_note)
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
        paired_noise_share=noise_share,
        se_paired_all_noise=se_all_noise,
        assumptions=tuple(assumptions),
    )
