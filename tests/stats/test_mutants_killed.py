"""Edges of the stats layer that a mutation sample found untested.

Every expected value is derived here from its definition (scipy's normal quantiles, numpy's sample
standard deviation), never typed in.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from trialbook.errors import ArgumentError
from trialbook.stats import paired_difference, pass_at_k, pass_hat_k, pass_k_matrix, plan_design


def test_boolean_counts_are_refused() -> None:
    # a boolean array is a pass/fail vector, not counts: reading it as n=1, c=0/1 would silently
    # turn per-attempt outcomes into per-task counts
    flags = np.array([True, True, False])
    with pytest.raises(ArgumentError, match="whole numbers"):
        pass_at_k(flags, flags, 1)
    with pytest.raises(ArgumentError, match="whole numbers"):
        pass_hat_k([1, 1, 1], flags, 1)
    with pytest.raises(ArgumentError, match="whole numbers"):
        pass_k_matrix(flags, [0, 0, 0], [1])


@pytest.mark.parametrize("confidence", [0.95, 0.9])
@pytest.mark.parametrize("power", [0.8, 0.9])
def test_paired_mde_uses_the_two_sided_quantile(confidence: float, power: float) -> None:
    # MDE = (z_{1 - alpha/2} + z_power) * SE with alpha = 1 - confidence (two-sided test), and the
    # paired SE of equal-weight tasks is sd(d, ddof=1) / sqrt(T)
    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = np.clip(a + rng.normal(0.05, 0.1, 40), 0, 1)
    res = paired_difference(a, b, confidence=confidence, power=power, resamples=200)
    se = np.std(b - a, ddof=1) / math.sqrt(a.size)
    assert res.se_paired == pytest.approx(se, rel=1e-12)
    z = norm.ppf(1 - (1 - confidence) / 2) + norm.ppf(power)
    assert res.mde == pytest.approx(z * se, rel=1e-9)


@pytest.mark.parametrize(
    ("tasks", "attempts", "baseline", "effect", "between", "within"),
    [
        (50, 3, 0.6, 0.07, 0.1, 0.14),
        (20, 1, 0.3, 0.11, None, None),
        (80, 5, 0.45, 0.05, 0.05, None),
    ],
)
def test_tasks_needed_reach_the_power_target(
    tasks: int,
    attempts: int,
    baseline: float,
    effect: float,
    between: float | None,
    within: float | None,
) -> None:
    # unpaired difference: per-task variance 2 (sb2 + sw2 / R); tasks needed is the smallest whole T
    # with (z_{1-a/2} + z_power)^2 * v / T <= effect^2, i.e. the ceiling of the exact solution
    res = plan_design(
        tasks=tasks,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        between_var=between,
        within_var=within,
    )
    zz = norm.ppf(1 - 0.05 / 2) + norm.ppf(0.8)
    v = 2 * (res.between_var + res.within_var / attempts)
    exact = zz * zz * v / effect**2
    assert exact != int(exact)  # a fractional solution, so rounding up and down differ
    assert res.tasks_needed_unpaired == max(2, math.ceil(exact))
    # and that many tasks do reach the target power, one fewer does not
    at = plan_design(
        tasks=res.tasks_needed_unpaired,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        between_var=res.between_var,
        within_var=res.within_var,
    )
    assert at.power_unpaired >= 0.8
    below = plan_design(
        tasks=res.tasks_needed_unpaired - 1,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        between_var=res.between_var,
        within_var=res.within_var,
    )
    assert below.power_unpaired < 0.8
