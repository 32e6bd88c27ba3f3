"""Where the variance of a score lives: between tasks or within a task (docs/methodology.md, "Variance between and within tasks").

One-way random-effects ANOVA on the 0/1 outcomes of T tasks with n_t attempts each (method of
moments, unbiased for σ_b² and σ_w²; Searle, Casella & McCulloch 1992, ch. 3):

    MSB = Σ n_t (ȳ_t − ȳ)² / (T − 1)         E[MSB] = σ_w² + n₀ σ_b²
    MSW = Σ_t Σ_r (y_tr − ȳ_t)² / (N − T)    E[MSW] = σ_w²
    n₀  = (N − Σ n_t² / N) / (T − 1)          (= R in a balanced design)
    σ̂_w² = MSW,  σ̂_b² = (MSB − MSW) / n₀     (σ̂_b² may be negative; it is reported as computed)

The variance of the task-equal mean is then Σ_t (σ_b² + σ_w²/n_t) / T², which tells what doubling
the tasks (halves it) and doubling the attempts (only shrinks the σ_w² part) would buy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from trialbook.errors import ArgumentError

__all__ = ["VarianceComponents", "variance_components"]


@dataclass(frozen=True)
class VarianceComponents:
    """Between-task and within-task variance of 0/1 attempt outcomes, and what they imply."""

    tasks: int
    """T, the number of tasks."""
    attempts: int
    """N, the number of attempts over all tasks."""
    between: float
    """σ̂_b², the variance of true per-task success rates (unbiased; may be < 0 by chance)."""
    within: float
    """σ̂_w², the mean variance of one attempt around its task's rate (unbiased)."""
    icc: float | None
    """σ_b² / (σ_b² + σ_w²) with σ_b² cut at 0: the share of variance that is between tasks."""
    design_effect: float | None
    """1 + (n̄ − 1)·ICC: how much treating attempts as independent understates the variance."""
    se_now: float
    """Standard error of the task-equal mean pass@1 implied by the components."""
    se_double_tasks: float
    """The same with twice the tasks (same attempts per task)."""
    se_double_attempts: float
    """The same with twice the attempts per task (same tasks)."""
    se_naive: float
    """sqrt(p(1−p)/N): the wrong SE that treats every attempt as an independent observation."""


def variance_components(n: ArrayLike, c: ArrayLike) -> VarianceComponents | None:
    """Decompose the variance of 0/1 outcomes into between-task and within-task parts.

    ``n`` and ``c`` are attempts and passes per task. Returns None when the design cannot separate
    the two parts: fewer than two tasks, or no task with two or more attempts.
    """
    n_arr = np.asarray(n, dtype=np.float64)
    c_arr = np.asarray(c, dtype=np.float64)
    if n_arr.shape != c_arr.shape or n_arr.ndim != 1:
        raise ArgumentError("n and c must be 1-D arrays of the same length")
    if (n_arr < 1).any() or (c_arr < 0).any() or (c_arr > n_arr).any():
        raise ArgumentError("need n >= 1 and 0 <= c <= n for every task")
    t = len(n_arr)
    total = float(n_arr.sum())
    if t < 2 or total <= t:
        return None
    rates = c_arr / n_arr
    grand = float(c_arr.sum()) / total
    msb = float((n_arr * (rates - grand) ** 2).sum()) / (t - 1)
    msw = float((c_arr * (n_arr - c_arr) / n_arr).sum()) / (total - t)
    n0 = (total - float((n_arr**2).sum()) / total) / (t - 1)
    between = (msb - msw) / n0
    within = msw
    b_pos = max(between, 0.0)
    icc = b_pos / (b_pos + within) if b_pos + within > 0 else None
    mean_n = total / t

    def se(tasks_factor: float, attempts_factor: float) -> float:
        var = float((b_pos + within / (n_arr * attempts_factor)).sum()) / (t * t * tasks_factor)
        return math.sqrt(var)

    return VarianceComponents(
        tasks=t,
        attempts=int(total),
        between=between,
        within=within,
        icc=icc,
        design_effect=None if icc is None else 1 + (mean_n - 1) * icc,
        se_now=se(1.0, 1.0),
        se_double_tasks=se(2.0, 1.0),
        se_double_attempts=se(1.0, 2.0),
        se_naive=math.sqrt(grand * (1 - grand) / total),
    )
