"""The paired score interval (trialbook.stats._support_score) against first principles.

The reference is the definition itself, computed here another way: the restricted maximum-likelihood
distribution of the tasks' differences with mean delta is found by a general constrained optimizer
(scipy's SLSQP maximising sum n_v log w_v over weights on the observed values and the support's
ends, subject to sum w = 1 and sum w v = delta); its variance is what the score statistic divides
by. For single attempts that is Tango's closed form (Tango 1998, eq. 2), which the code uses as its
fast path; both must agree with the optimizer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from trialbook.stats import paired_test
from trialbook.stats._support_score import (
    clopper_pearson_zero,
    restricted_variance,
    support_score_interval,
    trinomial_variance,
)


def _brute_variance(values: list[float], counts: list[int], delta: float) -> float:
    """Variance of the restricted MLE by a general optimizer (see the module doc), started from a
    feasible point: the uniform weights mixed with the support's end that moves their mean to
    delta. SLSQP may stop with "positive directional derivative" at the optimum itself, so what is
    checked is that its answer is feasible."""
    points = np.array(sorted(set(values) | {-1.0, 1.0}))
    n = np.array([counts[values.index(v)] if v in values else 0 for v in points], dtype=float)
    n /= n.sum()
    observed = n > 0

    def negloglik(w: np.ndarray) -> float:
        return -float(np.sum(n[observed] * np.log(np.maximum(w[observed], 1e-300))))

    def gradient(w: np.ndarray) -> np.ndarray:
        return -np.where(observed, n / np.maximum(w, 1e-300), 0.0)

    uniform = np.full(points.size, 1.0 / points.size)
    mean = float(uniform @ points)
    end = 1.0 if delta > mean else -1.0
    share = (delta - mean) / (end - mean)
    res = minimize(
        negloglik,
        (1 - share) * uniform + share * (points == end),
        jac=gradient,
        method="SLSQP",
        bounds=[(1e-15, 1.0)] * points.size,
        constraints=[
            {"type": "eq", "fun": lambda w: float(w.sum() - 1.0), "jac": np.ones_like},
            {"type": "eq", "fun": lambda w: float(w @ points - delta), "jac": lambda w: points},
        ],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    w = np.clip(res.x, 0.0, None)
    assert abs(w.sum() - 1.0) < 1e-9, res.message
    assert abs(w @ points - delta) < 1e-9, res.message
    return float(w @ (points - delta) ** 2)


TRINOMIAL = [(3, 9, 40), (0, 5, 40), (2, 0, 20), (10, 10, 100), (1, 30, 31)]


@pytest.mark.parametrize(("b", "c", "t"), TRINOMIAL)
@pytest.mark.parametrize("delta", [-0.6, -0.1, 0.0, 0.05, 0.3, 0.8])
def test_tangos_closed_form_is_the_restricted_mle(b: int, c: int, t: int, delta: float) -> None:
    values, counts = [-1.0, 0.0, 1.0], [b, t - b - c, c]
    present = [(v, k) for v, k in zip(values, counts, strict=True) if k]
    brute = _brute_variance([v for v, _ in present], [k for _, k in present], delta)
    assert trinomial_variance(b, c, t, delta) == pytest.approx(brute, abs=1e-6)
    general = restricted_variance(
        np.array([v for v, _ in present]), np.array([k for _, k in present], float), delta
    )
    assert general == pytest.approx(brute, abs=1e-6)


MULTI = [
    ([-1 / 3, 0.0, 1 / 3, 2 / 3], [2, 20, 10, 3]),
    ([0.0, 1 / 3], [35, 5]),  # one sign only, no task at either end
    ([-1.0, 0.0, 0.5], [1, 8, 4]),  # a task at the lower end
    ([-0.2, 0.4, 1.0], [3, 3, 2]),
]


@pytest.mark.parametrize(("values", "counts"), MULTI)
@pytest.mark.parametrize("delta", [-0.5, -0.05, 0.1, 0.45, 0.9])
def test_the_restricted_variance_of_several_attempts_is_the_restricted_mle(
    values: list[float], counts: list[int], delta: float
) -> None:
    got = restricted_variance(np.array(values), np.array(counts, float), delta)
    assert got == pytest.approx(_brute_variance(values, counts, delta), abs=1e-6)


@pytest.mark.parametrize(("values", "counts"), [*MULTI, ([-1.0, 0.0, 1.0], [3, 28, 9])])
def test_each_end_is_where_the_score_statistic_reaches_the_critical_value(
    values: list[float], counts: list[int]
) -> None:
    d = np.repeat(values, counts)
    t, mean = d.size, float(d.mean())
    crit = float(norm.ppf(0.975))
    for end in support_score_interval(d, 0.05):
        z = (mean - end) / math.sqrt(_brute_variance(values, counts, end) / t)
        assert abs(z) == pytest.approx(crit, abs=1e-4)


def test_two_identical_runs_bound_the_difference_by_the_tasks_they_have() -> None:
    # no task differs: |mean difference| <= the share of tasks that differ, seen 0 times in 400;
    # its two-sided 95% Clopper-Pearson bound is 1 - 0.025^(1/400) (Clopper and Pearson 1934)
    bound = 1 - 0.025 ** (1 / 400)
    assert clopper_pearson_zero(400, 0.05) == pytest.approx(bound, rel=1e-12)
    r = paired_test(np.zeros(400))
    assert (r.ci_low, r.ci_high) == pytest.approx((-bound, bound), rel=1e-12)
    assert r.ci_high > 0.009  # not [0, 0]: 400 tasks cannot show the systems equal
    assert not r.rejects


def test_five_of_forty_better_is_not_bounded_by_what_was_seen() -> None:
    # the old interval's upper end was exactly the observed 5/40: the discordant count taken as known
    r = paired_test(np.r_[np.ones(5), np.zeros(35)])
    assert r.rejects  # mid-p McNemar: 2 * 0.5^5 / 2 = 0.03125
    assert r.p_value == pytest.approx(0.03125)
    assert 0.0 < r.ci_low < 5 / 40 < r.ci_high
    assert r.ci_high > 5 / 40 + 0.1


def test_tied_tasks_are_not_evidence_for_exactly_zero() -> None:
    # one task of five a third worse: the old shift-model interval was [-1/3, 0], its upper end 0 as
    # if the four tied tasks proved the candidate no better
    r = paired_test([0.0, 0.0, 0.0, -1 / 3, 0.0])
    assert r.ci_low < -1 / 3 < 0.0 < 0.2 < r.ci_high
    assert not r.decidable


def test_interval_and_test_agree_about_zero_on_random_suites() -> None:
    rng = np.random.default_rng(7)
    for i in range(300):
        tasks, attempts = int(rng.integers(5, 60)), int(rng.choice([1, 2, 3, 5]))
        p = rng.beta(0.5, 0.5, tasks)
        lift = rng.choice([0.0, 0.1, 0.3])
        a = rng.binomial(attempts, p) / attempts
        b = rng.binomial(attempts, np.minimum(p + lift, 1.0)) / attempts
        r = paired_test(b - a, resamples=2000, seed=i)
        assert (r.ci_low > 0 or r.ci_high < 0) == r.rejects, (b - a, r)
        assert r.ci_low <= r.estimate <= r.ci_high
