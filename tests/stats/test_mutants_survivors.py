"""Behaviours of the stats layer that a mutation run found no test of its module pinning.

Each test names the change it catches. Every expected value is derived here: closed forms of the
Clopper-Pearson bounds, the mid-p of the most lopsided outcome, the Monte Carlo p-value with the
observed pattern counted (Phipson and Smyth 2010), and the betting capital of Waudby-Smith and
Ramdas (JRSS-B 2023, eq. 26) recomputed step by step from its formulas.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from trialbook.errors import ArgumentError, InsufficientAttemptsError
from trialbook.stats import pass_at_k, pass_hat_k, pass_k_matrix, wilson_task_interval
from trialbook.stats._sequential import BettingState
from trialbook.stats._signflip import EXACT_UP_TO, mcnemar_mid_p, paired_test

# ---------------------------------------------------------------- pass@k: n >= 1


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_a_task_with_no_attempt_is_bad_input_not_too_few_attempts(fn: object) -> None:
    # n = 0 is not "k exceeds the attempts" (a fixable budget): there is nothing to estimate from,
    # so it is refused as an argument out of its range, whatever k is
    with pytest.raises(ArgumentError, match="every n must be >= 1, got 0") as caught:
        fn([3, 0], [1, 0], 1)  # type: ignore[operator]
    assert not isinstance(caught.value, InsufficientAttemptsError)
    with pytest.raises(ArgumentError, match="every n must be >= 1") as caught:
        pass_k_matrix([0], [0], [1])
    assert not isinstance(caught.value, InsufficientAttemptsError)


# ---------------------------------------------------------------- Clopper-Pearson fallback: Kish


@pytest.mark.parametrize("weights", [[1.0, 2.0, 3.0, 4.0], [5.0, 1.0, 1.0, 1.0, 1.0, 1.0]])
@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_every_task_alike_uses_kishs_effective_number_of_tasks(
    weights: list[float], confidence: float
) -> None:
    # With every task passing (or failing), se = 0 and the interval is Clopper-Pearson for
    # n successes in n trials, n = Kish's (sum w)^2 / sum w^2. Its closed forms: lower bound
    # (a)^(1/n) when all pass, upper bound 1 - a^(1/n) when none does, a = (1 - confidence) / 2.
    w = np.array(weights)
    n = w.sum() ** 2 / (w**2).sum()
    assert n != pytest.approx(w.sum())  # unequal weights: Kish's n is not the total weight
    a = (1 - confidence) / 2
    low, high = wilson_task_interval(np.ones(w.size), weights=w, confidence=confidence)
    assert float(low[0]) == pytest.approx(a ** (1 / n), rel=1e-9)
    assert float(high[0]) == 1.0
    low, high = wilson_task_interval(np.zeros(w.size), weights=w, confidence=confidence)
    assert float(low[0]) == 0.0
    assert float(high[0]) == pytest.approx(1 - a ** (1 / n), rel=1e-9)


def test_every_task_alike_with_equal_weights_is_clopper_pearson_over_the_tasks() -> None:
    # the module's own example: 20 tasks that all pass give 0.025^(1/20) = 83.2% .. 100%
    low, high = wilson_task_interval(np.ones(20))
    assert float(low[0]) == pytest.approx(0.025 ** (1 / 20), rel=1e-9)
    assert round(float(low[0]), 3) == 0.832
    assert float(high[0]) == 1.0


# ---------------------------------------------------------------- sign-flip: decidable boundary


@pytest.mark.parametrize("informative", [1, 2, 3])
def test_a_level_equal_to_the_smallest_mid_p_is_not_decidable(informative: int) -> None:
    # The most lopsided outcome of m informative tasks (all won by one side) has two-sided mid-p
    # 2 * P(X = 0) / 2 = 2^-m (X ~ Bin(m, 1/2)); the test rejects only p < alpha, so at
    # alpha = 2^-m no data can decide, and one more informative task can.
    alpha = 2.0**-informative
    assert mcnemar_mid_p(0, informative) == pytest.approx(2 * 0.5 * binom.pmf(0, informative, 0.5))
    assert mcnemar_mid_p(0, informative) == pytest.approx(alpha)
    at = paired_test([1.0] * informative + [0.0] * 4, confidence=1 - alpha)
    assert at.alpha == alpha
    assert at.decidable is False
    assert at.rejects is False
    more = paired_test([1.0] * (informative + 1) + [0.0] * 4, confidence=1 - alpha)
    assert more.decidable is True
    assert more.rejects is True  # p = 2^-(m+1) < alpha


# ---------------------------------------------------------------- sign-flip: random patterns


@pytest.mark.parametrize("resamples", [99, 199, 1000])
def test_random_patterns_count_the_observed_one_in_the_denominator(resamples: int) -> None:
    # 40 tasks, every difference +0.5 (not single attempts, above EXACT_UP_TO: random patterns).
    # A random pattern reaches the observed mean only if all 40 signs are +, chance 2^-40: so no
    # drawn pattern is beyond or equal to it, and the observed pattern, counted among the patterns
    # as a tie (Phipson and Smyth 2010, "Permutation p-values should never be zero"), gives the
    # mid-p (0 + 1/2) / (resamples + 1).
    t = 40
    assert t > EXACT_UP_TO
    res = paired_test(np.full(t, 0.5), resamples=resamples, seed=3)
    assert res.exact is False
    assert res.resamples == resamples
    assert res.p_value == pytest.approx(0.5 / (resamples + 1), rel=1e-12)


# ---------------------------------------------------------------- betting: plug-in and threshold


def _reference_capital(
    xs: list[float], m: float, alpha: float
) -> tuple[list[float], list[float], list[float]]:
    """log K+_t(m), log K-_t(m) after each x, and the bet l_t used, from the formulas of
    Waudby-Smith and Ramdas (2023), eq. (26), with c = 3/4 (population case, centre m):
    l_t = min(c, sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t)))),
    s2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1), mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1),
    l+_t = min(l_t, c / m), l-_t = min(l_t, c / (1 - m))."""
    c = 0.75
    log_plus = log_minus = 0.0
    total = squares = 0.0
    plus, minus, bets = [], [], []
    for t, x in enumerate(xs, 1):
        s2_prev = (0.25 + squares) / t  # s2_{t-1}: t - 1 terms over (t - 1) + 1
        bet = min(c, math.sqrt(2 * math.log(2 / alpha) / (s2_prev * t * math.log(1 + t))))
        log_plus += math.log(1 + min(bet, c / m) * (x - m))
        log_minus += math.log(1 - min(bet, c / (1 - m)) * (x - m))
        total += x
        squares += (x - (0.5 + total) / (t + 1)) ** 2
        plus.append(log_plus)
        minus.append(log_minus)
        bets.append(bet)
    return plus, minus, bets


def _xs() -> list[float]:
    # differences of a candidate a little better than its baseline, on the [0, 1] scale: spread
    # enough, over enough tasks, that the plug-in variance, not the cap of 3/4, sets the bets
    rng = np.random.default_rng(11)
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=120, p=[0.15, 0.15, 0.3, 0.2, 0.2])
    return [float(v) for v in (d + 1) / 2]


def test_the_betting_capital_follows_the_papers_plug_in_bets() -> None:
    xs, points, alpha = _xs(), [0.35, 0.5, 0.62], 0.05
    state = BettingState(np.array(points), races=1, alpha=alpha, total=None)
    refs = [_reference_capital(xs, m, alpha) for m in points]
    assert any(b < 0.75 for b in refs[0][2][1:]), "the cap decides every bet: the test is blind"
    for t, x in enumerate(xs):
        state.update(np.array([x]))
        for j, (plus, minus, _) in enumerate(refs):
            assert state.log_plus[0, j] == pytest.approx(plus[t], rel=1e-10, abs=1e-12)
            assert state.log_minus[0, j] == pytest.approx(minus[t], rel=1e-10, abs=1e-12)


def test_a_mean_is_rejected_once_the_hedged_capital_reaches_one_over_alpha() -> None:
    # K_t = max(K+, K-) / 2 >= 1 / alpha, i.e. max(log K+, log K-) >= log(2 / alpha) (Ville's
    # inequality bounds the chance of ever reaching it at the true mean by alpha)
    xs, alpha = _xs(), 0.05
    points = np.linspace(0.3, 0.7, 41)
    state = BettingState(points, races=1, alpha=alpha, total=None)
    refs = [_reference_capital(xs, float(m), alpha) for m in points]
    between = 0  # looks where the capital lies in [log(1/alpha), log(2/alpha)): where it matters
    for t, x in enumerate(xs):
        state.update(np.array([x]))
        for j, (plus, minus, _) in enumerate(refs):
            best = max(plus[t], minus[t])
            between += math.log(1 / alpha) <= best < math.log(2 / alpha)
            assert bool(state.rejected_now[0, j]) == (best >= math.log(2 / alpha)), (t, j)
    assert between > 0, "no look lies between the two thresholds: the test is blind"
