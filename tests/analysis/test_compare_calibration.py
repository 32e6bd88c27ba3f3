"""Slow simulation checks of the paired comparison (first principles, seeded).

Two systems share task difficulty (p_t ~ Beta(2, 3)); the candidate's per-task rate is p_t + δ_t. Each
simulated benchmark has T = 120 tasks x R = 3 attempts per system. With 1,000 benchmarks a 95% rate
has a standard error of about 0.7 points, so the bands below are about +-3 standard errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from trialbook.stats import paired_difference


def _simulate(
    rng: np.random.Generator, lift: float, tasks: int = 120, runs: int = 3
) -> tuple[np.ndarray, np.ndarray, float]:
    p = rng.beta(2, 3, tasks)
    q = np.clip(p + lift, 0, 1)
    a = rng.binomial(runs, p) / runs
    b = rng.binomial(runs, q) / runs
    # the true difference of the population means: E[clip(p + lift)] - E[p], by a large fixed sample
    return a, b, float((np.clip(_REF + lift, 0, 1) - _REF).mean())


_REF = np.random.default_rng(0).beta(2, 3, 400_000)


@pytest.mark.slow
def test_paired_interval_covers_the_true_difference() -> None:
    rng = np.random.default_rng(11)
    covered, sims = 0, 1000
    for i in range(sims):
        a, b, truth = _simulate(rng, 0.05)
        d = paired_difference(a, b, resamples=2000, seed=i)
        covered += int(d.ci_low <= truth <= d.ci_high)
    assert 0.925 <= covered / sims <= 0.97


@pytest.mark.slow
def test_gate_false_alarm_rate_on_identical_systems() -> None:
    rng = np.random.default_rng(12)
    alarms, sims = 0, 1000
    for i in range(sims):
        a, b, _ = _simulate(rng, 0.0)
        d = paired_difference(a, b, resamples=2000, seed=i)
        alarms += int(
            d.ci_low > 0 or d.ci_high < 0
        )  # a decision other than "no detectable difference"
    assert 0.03 <= alarms / sims <= 0.075
