"""Where the variance of a score lives: between tasks or within a task (docs/methodology.md, "Variance between and within tasks").

One-way random-effects ANOVA on the 0/1 outcomes of T tasks with n_t attempts each (method of
moments, unbiased for σ_b² and σ_w²; Searle, Casella & McCulloch 1992, ch. 3):

    MSB = Σ n_t (ȳ_t − ȳ)² / (T − 1)         E[MSB] = σ_w² + n₀ σ_b²
    MSW = Σ_t Σ_r (y_tr − ȳ_t)² / (N − T)    E[MSW] = σ_w²
    n₀  = (N − Σ n_t² / N) / (T − 1)          (= R in a balanced design)
    σ̂_w² = MSW,  σ̂_b² = (MSB − MSW) / n₀

The unbiased σ̂_b² goes below 0 when the tasks differ less than their attempts' noise predicts; it is
kept as computed (``between``) and shown cut at 0 (``between_shown``): a variance is never negative.

Standard errors are the ones the score table prints: the task-clustered (CR1) SE of the mean per-task
pass rate, with the same task weights. The variance split only says what share of that variance is
attempt noise, Σ_t w_t² σ_w²/n_t against Σ_t w_t² (σ_b² + σ_w²/n_t), so the projections scale the
measured SE: twice the tasks (same mix) divides it by √2; twice the attempts per task multiplies it by
sqrt(Σ w_t² (σ_b² + σ_w²/(2n_t)) / Σ w_t² (σ_b² + σ_w²/n_t)), σ_b² cut at 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from trialbook.errors import ArgumentError
from trialbook.stats._bootstrap import clustered_se

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
    between_shown: float
    """σ̂_b² cut at 0, the value to show and to plan with (a variance is never negative)."""
    between_below_zero: bool
    """Whether the unbiased σ̂_b² came out below 0 (then ``between_shown`` is 0)."""
    within: float
    """σ̂_w², the mean variance of one attempt around its task's rate (unbiased)."""
    icc: float | None
    """σ_b² / (σ_b² + σ_w²) with σ_b² cut at 0: the share of variance that is between tasks."""
    design_effect: float | None
    """1 + (n̄ − 1)·ICC: the model's ratio of the true variance to the attempts-independent one."""
    weighted: bool
    """Whether the SEs use declared task weights (False: equal task weights)."""
    se_now: float
    """Task-clustered (CR1) SE of the mean per-task pass rate: the score table's SE of pass@1."""
    se_double_tasks: float
    """``se_now`` projected to twice the tasks (same mix, same attempts per task)."""
    se_double_attempts: float
    """``se_now`` projected to twice the attempts per task (same tasks), from the variance split."""
    se_naive: float
    """sqrt(p(1−p)/N) of the pooled rate: the SE that treats every attempt as independent."""


def variance_components(
    n: ArrayLike, c: ArrayLike, *, weights: ArrayLike | None = None
) -> VarianceComponents | None:
    """Decompose the variance of 0/1 outcomes into between-task and within-task parts.

    ``n`` and ``c`` are attempts and passes per task; ``weights`` are declared task weights (None:
    equal). Returns None when the design cannot separate the two parts: fewer than two tasks, or no
    task with two or more attempts.
    """
    n_arr = np.asarray(n, dtype=np.float64)
    c_arr = np.asarray(c, dtype=np.float64)
    if n_arr.shape != c_arr.shape or n_arr.ndim != 1:
        raise ArgumentError("n and c must be 1-D arrays of the same length", argument="n")
    if (n_arr < 1).any() or (c_arr < 0).any() or (c_arr > n_arr).any():
        raise ArgumentError("need n >= 1 and 0 <= c <= n for every task", argument="c")
    w_arr = np.ones_like(n_arr) if weights is None else np.asarray(weights, dtype=np.float64)
    if w_arr.shape != n_arr.shape or not np.isfinite(w_arr).all() or (w_arr < 0).any():
        raise ArgumentError("weights must be finite, >= 0 and one per task", argument="weights")
    if w_arr.sum() <= 0:
        raise ArgumentError("weights must not all be 0", argument="weights")
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

    w2 = w_arr**2
    model_now = float((w2 * (b_pos + within / n_arr)).sum())
    model_more = float((w2 * (b_pos + within / (2 * n_arr))).sum())
    attempts_factor = math.sqrt(model_more / model_now) if model_now > 0 else 1.0
    se_now = float(clustered_se(rates, None if weights is None else w_arr)[0])

    return VarianceComponents(
        tasks=t,
        attempts=int(total),
        between=between,
        between_shown=b_pos,
        between_below_zero=between < 0,
        within=within,
        icc=icc,
        design_effect=None if icc is None else 1 + (mean_n - 1) * icc,
        weighted=weights is not None,
        se_now=se_now,
        se_double_tasks=se_now / math.sqrt(2),
        se_double_attempts=se_now * attempts_factor,
        se_naive=math.sqrt(grand * (1 - grand) / total),
    )
