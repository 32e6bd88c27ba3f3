"""Simulations of races (slow marker; they run in CI): the error rate holds with a look after every
task pair, and a real difference is found on a fraction of the suite.

Each simulation draws 2,000 races of a 500-task suite at once (numpy, one column per look) and
runs them through the same capital as the race itself (``race_stops``, ``discordant_stops``).
The Monte Carlo standard error of a share near alpha = 0.05 over 2,000 races is
sqrt(0.05 * 0.95 / 2000) = 0.0049; a share is "at or below alpha" when it is within 2.5 of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from trialbook.stats import discordant_stops, race_stops

pytestmark = pytest.mark.slow

RACES, TASKS, ALPHA = 2000, 500, 0.05
LIMIT = ALPHA + 2.5 * math.sqrt(ALPHA * (1 - ALPHA) / RACES)


def _single(rng: np.random.Generator, p_plus: float, p_minus: float) -> NDArray[np.float64]:
    """Single-attempt pairs: +1 (only the candidate passed) with p_plus, -1 with p_minus."""
    u = rng.random((RACES, TASKS))
    return np.where(u < p_plus, 1.0, np.where(u < p_plus + p_minus, -1.0, 0.0))


def _same_systems(rng: np.random.Generator, k: int, a: float, b: float) -> NDArray[np.float64]:
    """Two equally good systems on tasks of skewed difficulty (pass chance ~ Beta(a, b) per
    task, shared by both), k attempts each: the per-task difference of pass rates."""
    p = rng.beta(a, b, size=(RACES, TASKS))
    return (rng.binomial(k, p) - rng.binomial(k, p)) / k


NULLS = {
    "single attempt, 20% discordant": lambda rng: _single(rng, 0.10, 0.10),
    "single attempt, skewed difficulty": lambda rng: _same_systems(rng, 1, 0.3, 3.0),
    "3 attempts, skewed difficulty": lambda rng: _same_systems(rng, 3, 0.4, 1.5),
    "5 attempts, easy tasks": lambda rng: _same_systems(rng, 5, 4.0, 0.5),
}


@pytest.mark.parametrize("design", sorted(NULLS))
def test_null_races_declare_a_difference_at_most_alpha_of_the_time(design: str) -> None:
    rng = np.random.default_rng(sorted(NULLS).index(design) + 100)
    d = NULLS[design](rng)
    decision, _ = race_stops(d, alpha=ALPHA)
    share = float(np.mean(decision != 0))
    print(f"{design}: betting-population false decisions {share:.4f} (limit {LIMIT:.4f})")
    assert share <= LIMIT
    if design.startswith("single"):
        decision, _ = discordant_stops(d.astype(np.int64), alpha=ALPHA)
        share = float(np.mean(decision != 0))
        print(f"{design}: discordant false decisions {share:.4f}")
        assert share <= LIMIT


def test_null_races_with_a_min_effect_stop_keep_the_error_rate() -> None:
    decision, _ = race_stops(_single(np.random.default_rng(7), 0.1, 0.1), min_effect=0.05)
    share = float(np.mean((decision == 1) | (decision == -1)))
    assert share <= LIMIT


def test_the_suite_sequence_keeps_its_error_rate_for_the_suite_value() -> None:
    # the without-replacement sequence covers the mean the whole suite would show: its null is a
    # suite whose full-suite difference is exactly 0 (50 +1s, 50 -1s, 400 zeros), in random order
    rng = np.random.default_rng(9)
    suite = np.repeat([1.0, -1.0, 0.0], [50, 50, 400])
    d = rng.permuted(np.tile(suite, (RACES, 1)), axis=1)
    decision, _ = race_stops(d, alpha=ALPHA, total=TASKS)
    assert float(np.mean(decision != 0)) <= LIMIT


def test_the_suite_sequence_is_not_a_test_of_the_systems() -> None:
    # why it is not the default: with equally good systems the full suite's difference is rarely
    # exactly 0 (attempt noise), and the sequence that closes on it declares it, late but often
    decision, used = race_stops(_single(np.random.default_rng(10), 0.1, 0.1), total=TASKS)
    assert float(np.mean(decision != 0)) > 0.5
    assert float(np.median(used)) > 0.9 * TASKS


def _fixed_design_tasks(d: NDArray[np.float64], power: float) -> int:
    """The fewest tasks a fixed design (exact McNemar test at ALPHA, run once on the first n
    tasks) needs to reach ``power`` on the same simulated races, by a scan over n."""
    plus = np.cumsum(d == 1, axis=1)
    minus = np.cumsum(d == -1, axis=1)
    for n in range(10, TASKS + 1, 5):
        b, c = minus[:, n - 1], plus[:, n - 1]
        p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
        if np.mean((p < ALPHA) & (c > b)) >= power:
            return n
    return TASKS + 1


def test_a_real_difference_is_found_on_a_fraction_of_the_suite() -> None:
    # +0.10: 15% of tasks only the candidate passes, 5% only the baseline (20% discordant)
    d = _single(np.random.default_rng(11), 0.15, 0.05)
    lines = []
    for name, (decision, used) in {
        "betting-population": race_stops(d, alpha=ALPHA),
        "discordant": discordant_stops(d.astype(np.int64), alpha=ALPHA),
    }.items():
        right = float(np.mean(decision == 1))
        share = float(np.median(used)) / TASKS
        fixed = _fixed_design_tasks(d, right) / TASKS
        lines.append(
            f"{name}: right {right:.3f}, median share {share:.3f}, fixed design {fixed:.3f}"
        )
        assert right >= 0.80
        assert share <= 0.60
    print("\n".join(lines))
