"""The race's default design: Lan-DeMets O'Brien-Fleming-type alpha spending over the suite's size.

The boundaries are checked against the probabilities they promise, computed independently (scipy's
multivariate normal rectangle probabilities for a few looks, a Monte Carlo of Gaussian random walks
for many); the race's error rate, power and share of the suite by simulation (slow-marked, run in
CI), each against compare's own fixed-design test (``paired_p_values``: McNemar's mid-p for single
attempts, sign flips otherwise) on the same simulated suites.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from trialbook.analysis import SequenceReplay, SequentialOptions
from trialbook.errors import ArgumentError
from trialbook.stats import (
    SpendingSequence,
    obrien_fleming_bounds,
    paired_p_values,
    spending_stops,
)

ALPHA = 0.05


def _spent(t: NDArray[np.float64], alpha: float = ALPHA) -> NDArray[np.float64]:
    """The spending function per side (Lan & DeMets 1983): 2 - 2 Phi(z_{alpha/4} / sqrt t)."""
    return 2 - 2 * stats.norm.cdf(stats.norm.ppf(1 - alpha / 4) / np.sqrt(t))


def test_one_look_is_the_fixed_two_sided_test() -> None:
    assert obrien_fleming_bounds(1, ALPHA)[0] == pytest.approx(stats.norm.isf(ALPHA / 2), 1e-9)
    assert obrien_fleming_bounds(1, 0.1)[0] == pytest.approx(stats.norm.isf(0.05), 1e-9)


@pytest.mark.parametrize("looks", [2, 3, 4])
def test_the_boundaries_spend_what_the_spending_function_says(looks: int) -> None:
    # Z_j = W(t_j) / sqrt(t_j) of a Brownian motion at t_j = j / looks: corr(Z_i, Z_j) =
    # sqrt(t_i / t_j). The chance of first crossing the upper boundary at look j is the
    # probability of the box (-c_i, c_i) for i < j, [c_j, inf) at j: scipy's multivariate
    # normal (Genz's algorithm) gives it independently of the recursion under test
    c = obrien_fleming_bounds(looks, ALPHA)
    t = np.arange(1, looks + 1) / looks
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    first_crossing = []
    for j in range(looks):
        lower = np.r_[-c[:j], c[j]]
        upper = np.r_[c[:j], np.inf]
        mvn = stats.multivariate_normal(
            np.zeros(j + 1), cov[: j + 1, : j + 1], maxpts=10**7, abseps=1e-8, releps=1e-8
        )
        first_crossing.append(float(mvn.cdf(upper, lower_limit=lower)))
    assert np.cumsum(first_crossing) == pytest.approx(_spent(t), abs=2e-5)
    assert np.all(np.diff(c) < 0)  # O'Brien-Fleming type: strict early, near 1.96 at the end


def test_many_looks_keep_alpha_on_gaussian_random_walks() -> None:
    # 200 looks: 100,000 standard Gaussian random walks; the share that ever crosses +-c_j
    # at some look j, against alpha, within 3 Monte Carlo standard errors (0.0021)
    looks, walks = 200, 100_000
    c = obrien_fleming_bounds(looks, ALPHA)
    rng = np.random.default_rng(11)
    crossed = np.zeros(walks, dtype=bool)
    s = np.zeros(walks)
    for j in range(looks):
        s += rng.standard_normal(walks)
        crossed |= np.abs(s) > c[j] * math.sqrt(j + 1)
    se = math.sqrt(ALPHA * (1 - ALPHA) / walks)
    assert abs(float(crossed.mean()) - ALPHA) < 3 * se
    # the early looks cannot stop (their share of alpha is below 1e-15): an infinite boundary
    assert math.isinf(c[0])
    assert math.isfinite(c[-1])


@pytest.mark.parametrize(("attempts", "min_effect"), [(1, None), (1, 0.05), (3, None), (3, 0.1)])
def test_the_sequence_and_the_vectorised_races_agree(
    attempts: int, min_effect: float | None
) -> None:
    rng = np.random.default_rng(attempts + int(100 * (min_effect or 0)))
    p = rng.beta(0.8, 1.5, size=(40, 120))
    d = (rng.binomial(attempts, np.clip(p + 0.08, 0, 1)) - rng.binomial(attempts, p)) / attempts
    decision, used = spending_stops(d, alpha=ALPHA, min_effect=min_effect, attempts=attempts)
    names = {1: "improvement", -1: "regression", 2: "no meaningful difference", 0: "undecided"}
    for row in range(d.shape[0]):
        seq = SpendingSequence(
            horizon=d.shape[1], alpha=ALPHA, min_effect=min_effect, attempts=attempts
        )
        for look_at in range(d.shape[1]):
            look = seq.update(float(d[row, look_at]))
            if look.decision != "undecided":
                break
        assert look.decision == names[int(decision[row])]
        assert look.tasks == used[row]
        if look.decision in ("improvement", "regression"):  # the interval says the decision
            assert look.ci_low is not None
            assert look.ci_high is not None
            assert look.ci_low > -1e-9 if look.decision == "improvement" else look.ci_high < 1e-9


def test_identical_runs_give_an_interval_of_what_their_tasks_can_rule_out() -> None:
    # 400 tied tasks: never [0, 0]. Any interval of a true difference must hold the differences
    # that 400 ties do not rule out: with single attempts and discordance rate q all one way, the
    # chance of 400 ties is (1 - q)^400, above alpha / 2 while q < 1 - (alpha / 2)^(1/400)
    seq = SpendingSequence(horizon=400, alpha=ALPHA)
    for _ in range(400):
        look = seq.update(0.0)
    assert look.decision == "undecided"
    assert look.ci_low is not None
    assert look.ci_high is not None
    plausible = 1 - (ALPHA / 2) ** (1 / 400)
    assert look.ci_low <= -plausible
    assert look.ci_high >= plausible
    assert look.ci_high < 0.05  # and still says something: 400 ties rule out 5 points


def test_a_run_of_ties_declares_no_meaningful_difference_only_when_ties_prove_it() -> None:
    # with min_effect m, "no meaningful difference" after j ties is wrong when the truth is a
    # difference of m made of discordant pairs all one way, which gives j ties with chance
    # (1 - m)^j: the race may stop there only once that is below alpha / 2
    for m in (0.05, 0.1, 0.2):
        seq = SpendingSequence(horizon=1000, alpha=ALPHA, min_effect=m)
        j = 0
        while seq.look.decision == "undecided":
            seq.update(0.0)
            j += 1
        assert seq.look.decision == "no meaningful difference"
        assert (1 - m) ** j <= ALPHA / 2


def test_the_replay_spends_over_the_races_limit() -> None:
    # the horizon is the order's limit (max_tasks), fixed before the first pair
    order = [f"t{i}" for i in range(50)]
    replay = SequenceReplay(order, SequentialOptions(method="spending", max_tasks=20), attempts=1)
    replay.advance(dict.fromkeys(order, 0.0))
    assert isinstance(replay.sequence, SpendingSequence)
    assert (replay.sequence.horizon, replay.used, replay.stopped_because) == (
        20,
        20,
        "max-tasks",
    )


def test_bad_input_is_refused_by_name() -> None:
    with pytest.raises(ArgumentError) as info:
        SpendingSequence(horizon=0)
    assert info.value.argument == "looks"
    seq = SpendingSequence(horizon=1)
    seq.update(1.0)
    with pytest.raises(ArgumentError, match="horizon is 1"):
        seq.update(0.0)
    with pytest.raises(ArgumentError) as info:
        SpendingSequence(horizon=5).update(1.5)
    assert info.value.argument == "difference"
    with pytest.raises(ArgumentError) as info:
        spending_stops(np.zeros((2, 10)), horizon=5)
    assert info.value.argument == "horizon"
    with pytest.raises(ArgumentError) as info:
        spending_stops(np.zeros((2, 10)), attempts=0)
    assert info.value.argument == "attempts"


# --- simulations (slow) ---------------------------------------------------------------------


def _pairs(
    rng: np.random.Generator, races: int, tasks: int, design: str, delta: float
) -> tuple[NDArray[np.float64], int]:
    """Per-task differences of a candidate ``delta`` better than the baseline."""
    if design == "20% discordant":  # the docs' design: +delta from 20% discordant pairs
        u = rng.random((races, tasks))
        return np.where(u < 0.1 + delta / 2, 1.0, np.where(u < 0.2, -1.0, 0.0)), 1
    if design == "5% discordant":  # rare discordance: the normal limit is slowest here
        u = rng.random((races, tasks))
        return np.where(u < 0.025 + delta / 2, 1.0, np.where(u < 0.05, -1.0, 0.0)), 1
    k, (a, b) = {"Beta(2, 5), 1 attempt": (1, (2, 5)), "skewed, 3 attempts": (3, (0.6, 1.2))}[
        design
    ]
    p = rng.beta(a, b, size=(races, tasks))
    return (rng.binomial(k, np.clip(p + delta, 0, 1)) - rng.binomial(k, p)) / k, k


DESIGNS = ["20% discordant", "5% discordant", "Beta(2, 5), 1 attempt", "skewed, 3 attempts"]
NULL_RACES = 10_000
NULL_LIMIT = ALPHA + 2.5 * math.sqrt(ALPHA * (1 - ALPHA) / NULL_RACES)
"""At or below alpha within 2.5 Monte Carlo standard errors of 10,000 races (0.0022)."""


@pytest.mark.slow
@pytest.mark.parametrize("tasks", [20, 50, 200])
@pytest.mark.parametrize("design", DESIGNS)
def test_equal_systems_are_declared_different_at_most_alpha_of_the_time(
    design: str, tasks: int
) -> None:
    rng = np.random.default_rng(DESIGNS.index(design) * 1000 + tasks)
    d, k = _pairs(rng, NULL_RACES, tasks, design, 0.0)
    decision, _ = spending_stops(d, alpha=ALPHA, attempts=k)
    share = float(np.mean(decision != 0))
    print(f"{design}, {tasks} tasks: false decisions {share:.4f} (limit {NULL_LIMIT:.4f})")
    assert share <= NULL_LIMIT


@pytest.mark.slow
@pytest.mark.parametrize("tasks", [50, 200])
@pytest.mark.parametrize("design", DESIGNS)
def test_a_difference_of_min_effect_is_rarely_called_no_meaningful_difference(
    design: str, tasks: int
) -> None:
    # the truth is +min_effect: "no meaningful difference" says the interval excluded it, which
    # one side of the repeated interval allows at most alpha / 2 of the time
    m = 0.05
    rng = np.random.default_rng(DESIGNS.index(design) * 1000 + tasks + 7)
    d, k = _pairs(rng, NULL_RACES, tasks, design, m)
    decision, _ = spending_stops(d, alpha=ALPHA, min_effect=m, attempts=k)
    share = float(np.mean(decision == 2))
    limit = ALPHA / 2 + 2.5 * math.sqrt(ALPHA / 2 * (1 - ALPHA / 2) / NULL_RACES)
    print(f"{design}, {tasks} tasks, truth +{m}: 'no meaningful difference' {share:.4f}")
    assert share <= limit


POWER_RACES, POWER_TASKS = 2000, 500
POWER = {
    "Beta(2, 5), 1 attempt, +10 points": ("Beta(2, 5), 1 attempt", 0.10),
    "Beta(2, 5), 1 attempt, +5 points": ("Beta(2, 5), 1 attempt", 0.05),
    "20% discordant, +10 points": ("20% discordant", 0.10),
    "skewed, 3 attempts, +5 points": ("skewed, 3 attempts", 0.05),
}


def _fixed_right(d: NDArray[np.float64], tasks: int) -> NDArray[np.bool_]:
    """compare's fixed-design test run once on the first ``tasks`` pairs: right-signed
    rejections at alpha."""
    first = d[:, :tasks]
    p = paired_p_values(first.T, confidence=1 - ALPHA).p_value
    return (p < ALPHA) & (first.mean(axis=1) > 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(POWER))
def test_the_race_keeps_the_fixed_designs_power_on_less_of_the_suite(name: str) -> None:
    design, delta = POWER[name]
    rng = np.random.default_rng(sorted(POWER).index(name) + 500)
    d, k = _pairs(rng, POWER_RACES, POWER_TASKS, design, delta)
    decision, used = spending_stops(d, alpha=ALPHA, attempts=k)
    power = float(np.mean(decision == 1))
    fixed = float(np.mean(_fixed_right(d, POWER_TASKS)))
    share = float(np.median(used[decision != 0])) / POWER_TASKS
    # the fixed design's share for the race's power: the fewest tasks (in steps of 5% of the
    # suite) whose one test reaches it on these same races
    needed = next(
        (
            n / POWER_TASKS
            for n in range(POWER_TASKS // 20, POWER_TASKS + 1, POWER_TASKS // 20)
            if np.mean(_fixed_right(d, n)) >= power
        ),
        1.0,
    )
    print(
        f"{name}: race power {power:.3f} (fixed on the whole suite {fixed:.3f}, ratio "
        f"{power / fixed:.3f}); median share {share:.3f}, the fixed design's for that power "
        f"{needed:.2f}"
    )
    assert power >= 0.9 * fixed
    assert share <= needed
