"""The default score interval where successes are rare: coverage of the true population mean.

Each cell draws per-task success rates from a stated population, attempts from Binomial(R, p), and
the metric per task with trialbook's own unbiased estimators; the truth is the population mean of
the metric, from first principles next to each cell. 2,000 benchmarks a cell: the Monte Carlo SE
of a coverage of 95% is sqrt(0.95 x 0.05 / 2000) = 0.49 points, so the floor of 93% is four SEs
below 95%. Before the corrections of stats/_interval.py (the degrees of freedom of the task spread,
Brown-Cai-DasGupta's bounds at few counts) the first five cells covered 88.4-93.2%.

The ordinary cells check the other side: the corrections must not widen an interval where tasks
are not rare, beyond the width of the cluster-robust t interval m +- t_{T-1} SE.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from trialbook.stats import clustered_se, pass_at_k, pass_hat_k, wilson_task_interval

Draw = Callable[[np.random.Generator], NDArray[np.float64]]  # per-task success rates


def _beta(a: float, b: float, tasks: int) -> Draw:
    return lambda rng: rng.beta(a, b, tasks)


def _some_solvable(tasks: int, share: float, rate: float | None) -> Draw:
    """Each task solvable with chance ``share``, at ``rate`` (uniform on 0..1 when None)."""

    def draw(rng: np.random.Generator) -> NDArray[np.float64]:
        solvable = rng.random(tasks) < share
        p = rng.random(tasks) if rate is None else np.full(tasks, rate)
        return np.where(solvable, p, 0.0)

    return draw


def _beta_power(a: float, b: float, k: int) -> float:
    """E[p^k] for p ~ Beta(a, b): prod_{i<k} (a + i) / (a + b + i)."""
    return float(np.prod([(a + i) / (a + b + i) for i in range(k)]))


# name, rates, attempts R, metric ("pass@k" / "pass^k", k), truth
RARE = [
    # pass^5 of 5 attempts at 10 tasks: E[p^5] = 2*3*4*5*6 / (7*8*9*10*11) = 1.30%
    ("pass^5, 10 tasks, Beta(2, 5)", _beta(2, 5, 10), 5, ("^", 5), _beta_power(2, 5, 5)),
    # 90% of 40 tasks impossible, the rest at p = 0.5: pass@1 = 0.1 x 0.5
    ("40 x 3, 10% solvable at 0.5", _some_solvable(40, 0.1, 0.5), 3, ("@", 1), 0.05),
    # ... the rest uniform on 0..1: 0.1 x 1/2
    ("40 x 3, 10% solvable, uniform", _some_solvable(40, 0.1, None), 3, ("@", 1), 0.05),
    # 10% solvable at p = 0.2, 10 attempts: pass@k = 0.1 x (1 - 0.8^k)
    ("40 x 10, 10% at 0.2, pass@1", _some_solvable(40, 0.1, 0.2), 10, ("@", 1), 0.02),
    ("40 x 10, 10% at 0.2, pass@3", _some_solvable(40, 0.1, 0.2), 10, ("@", 3), 0.1 * (1 - 0.8**3)),
    (
        "40 x 10, 10% at 0.2, pass@10",
        _some_solvable(40, 0.1, 0.2),
        10,
        ("@", 10),
        0.1 * (1 - 0.8**10),
    ),
]

ORDINARY = [
    # Beta(0.5, 0.5): pass@1 = 1/2; Beta(2, 3): 2/5
    ("pass@1, 10 tasks, Beta(0.5, 0.5)", _beta(0.5, 0.5, 10), 3, ("@", 1), 0.5),
    ("pass@1, 40 tasks, Beta(0.5, 0.5)", _beta(0.5, 0.5, 40), 3, ("@", 1), 0.5),
    ("pass@1, 20 tasks x 5, Beta(2, 3)", _beta(2, 3, 20), 5, ("@", 1), 0.4),
    ("pass@1, 100 tasks x 5, Beta(2, 3)", _beta(2, 3, 100), 5, ("@", 1), 0.4),
    (
        "pass^3, 20 tasks, Beta(0.5, 0.5)",
        _beta(0.5, 0.5, 20),
        3,
        ("^", 3),
        _beta_power(0.5, 0.5, 3),
    ),
]


def _simulate(
    rates: Draw, attempts: int, metric: tuple[str, int], truth: float, suites: int, seed: int
) -> tuple[float, float]:
    """Coverage of ``truth``, and the median ratio of our width to the t interval's."""
    rng = np.random.default_rng(seed)
    kind, k = metric
    estimator = pass_at_k if kind == "@" else pass_hat_k
    covered, ratios = 0, []
    for _ in range(suites):
        c = rng.binomial(attempts, rates(rng))
        values = estimator(np.full(c.size, attempts), c, k)
        low, high = wilson_task_interval(values, max_n=attempts * c.size)
        covered += int(low[0] <= truth <= high[0])
        se = float(clustered_se(values)[0])
        if se > 0:
            ratios.append(float(high[0] - low[0]) / (2 * stats.t.ppf(0.975, c.size - 1) * se))
    return covered / suites, float(np.median(ratios))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rates", "attempts", "metric", "truth"), RARE)
def test_the_score_interval_covers_where_successes_are_rare(
    name: str, rates: Draw, attempts: int, metric: tuple[str, int], truth: float
) -> None:
    coverage, _ = _simulate(rates, attempts, metric, truth, suites=2000, seed=20261203)
    assert coverage >= 0.93, (name, coverage)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rates", "attempts", "metric", "truth"), ORDINARY)
def test_the_corrections_leave_ordinary_intervals_no_wider_than_t(
    name: str, rates: Draw, attempts: int, metric: tuple[str, int], truth: float
) -> None:
    coverage, width = _simulate(rates, attempts, metric, truth, suites=1000, seed=20261204)
    assert width <= 1.0, (name, width)
    # 1,000 benchmarks: MC SE 0.7 points, so 92.5% is 3.5 SEs below 95%
    assert coverage >= 0.925, (name, coverage)


def test_one_pass_in_one_task_is_not_read_as_independent_attempts() -> None:
    # 40 tasks x 3 attempts, one task passing 1 of 3: first principles, step by step
    values = np.zeros(40)
    values[0] = 1 / 3
    m, tasks = values.mean(), 40
    se = values.std(ddof=1) / np.sqrt(tasks)
    n = min(m * (1 - m) / se**2, 120.0)  # 119.6: every attempt as if independent
    kappa = stats.kurtosis(values, fisher=False, bias=True)  # of the task scores v - m
    nu = 2 * (tasks - 1) / (kappa - (tasks - 3) / tasks)  # Bonett (2006), about 2
    n = max(n * (stats.t.ppf(0.975, tasks - 1) / stats.t.ppf(0.975, nu)) ** 2, tasks)
    z = stats.norm.ppf(0.975)
    centre = (m + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(m * (1 - m) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # m x n = 1/3 <= 2: the lower bound is Poisson's, P(Poisson(lam) >= m n) = 0.05, i.e. the
    # Gamma(m n) quantile at 0.05
    low = min(centre - half, stats.gamma.ppf(0.05, m * n) / n)
    got = wilson_task_interval(values, max_n=120)
    assert n == tasks  # the floor: 40 tasks valued 0 or 1 carry no less
    assert got[0][0] == pytest.approx(low, rel=1e-9)
    assert got[1][0] == pytest.approx(centre + half, rel=1e-12)
    assert got[1][0] > 0.10  # not 4.6%, the Wilson bound of 1 in 120 independent attempts


def test_one_all_pass_task_of_ten_gets_the_poisson_lower_bound() -> None:
    # pass^5 per task is 0 or 1; one of 10 tasks passes: n = m(1-m)/se^2 = T - 1 = 9, m n = 0.9
    values = np.zeros(10)
    values[0] = 1.0
    n = 9.0
    lam = stats.gamma.ppf(0.05, 0.1 * n)  # P(Poisson(lam) >= 0.9) = 0.05, continued in x
    got = wilson_task_interval(values, max_n=50)
    assert got[0][0] == pytest.approx(lam / n, rel=1e-9)
    assert got[0][0] < 0.013  # the truth of the Beta(2, 5) cell above, which 1.99% missed


def test_a_normal_spread_is_left_as_it_was() -> None:
    # where the task spread is as well estimated as from T normal tasks (kurtosis <= 3), n is
    # m(1-m)/se^2 capped by the attempts, exactly as the plain effective-n Wilson interval
    rng = np.random.default_rng(3)
    values = rng.binomial(5, rng.beta(5, 5, 40)) / 5
    assert stats.kurtosis(values, fisher=False) < 3
    m, se = values.mean(), values.std(ddof=1) / np.sqrt(40)
    n = min(m * (1 - m) / se**2, 200.0)
    z = stats.norm.ppf(0.975)
    centre = (m + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(m * (1 - m) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    got = wilson_task_interval(values, max_n=200)
    assert (got[0][0], got[1][0]) == pytest.approx((centre - half, centre + half), rel=1e-12)
