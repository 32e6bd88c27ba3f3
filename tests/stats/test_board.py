"""The board's statistics: Holm against statsmodels, rank intervals and the frontier from first
principles, the paired cost bootstrap against scipy's bootstrap and against exact cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from trialbook.errors import ArgumentError
from trialbook.stats import holm, paired_cost_bootstrap, pareto_front, rank_intervals


@pytest.mark.parametrize("seed", range(6))
def test_holm_equals_statsmodels_multipletests_holm(seed: int) -> None:
    # 28 p-values, as from the pairs of 8 systems, with ties and a few tiny ones
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 1, 20), rng.uniform(0, 0.01, 6), [0.04, 0.04]])
    rng.shuffle(p)
    reject, expected, _, _ = multipletests(p, alpha=0.05, method="holm")
    got = holm(p)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    assert ((got < 0.05) == reject).all()


def test_rank_intervals_from_first_principles() -> None:
    # A > B, A > C, B ~ C, D below all: decided A>B, A>C, A>D, B>D, C>D (B vs C not decided)
    est = [0.8, 0.6, 0.55, 0.3]
    better = np.zeros((4, 4), bool)
    for i, j in [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)]:
        better[i, j] = True
    r = rank_intervals(est, better)
    assert r.rank.tolist() == [1, 2, 3, 4]
    # low: 1 + decided better than it; high: N - it is decided better than
    assert r.low.tolist() == [1, 2, 2, 4]
    assert r.high.tolist() == [1, 3, 3, 4]


def test_ties_share_the_better_rank_and_nothing_decided_spans_everything() -> None:
    r = rank_intervals([0.5, 0.7, 0.7, 0.2], np.zeros((4, 4), bool))
    assert r.rank.tolist() == [3, 1, 1, 4]
    assert r.low.tolist() == [1, 1, 1, 1]
    assert r.high.tolist() == [4, 4, 4, 4]


def test_rank_intervals_refuse_contradictory_decisions() -> None:
    better = np.zeros((2, 2), bool)
    better[0, 1] = better[1, 0] = True
    with pytest.raises(ArgumentError, match="both ways"):
        rank_intervals([0.5, 0.4], better)
    with pytest.raises(ArgumentError, match="2 x 2"):
        rank_intervals([0.5, 0.4], np.zeros((3, 3), bool))


def test_pareto_front() -> None:
    metric = [0.8, 0.6, 0.5, 0.3, 0.6, 0.9]
    cost = [9.0, 3.0, 3.0, 1.0, 2.0, np.nan]
    # 0: best metric among the costed; 1: beaten by 4 (same metric, cheaper); 2: beaten by 1 and 4;
    # 3: cheapest; 4: on it; 5: no cost, on no frontier and beating nobody
    assert pareto_front(metric, cost).tolist() == [True, False, False, True, True, False]
    # two identical systems: neither strictly beats the other, both on it
    assert pareto_front([0.5, 0.5], [1.0, 1.0]).tolist() == [True, True]


def test_cost_bootstrap_of_a_constant_shift_is_exact() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.5, 2.0, 40)
    boot = paired_cost_bootstrap(np.column_stack([base, base + 0.25]), resamples=500, seed=1)
    assert boot.estimate == pytest.approx([base.mean(), base.mean() + 0.25])
    # cost_0 - cost_1 is -0.25 on every task: every paired resample gives exactly -0.25
    assert boot.diff_low[0, 1] == pytest.approx(-0.25)
    assert boot.diff_high[0, 1] == pytest.approx(-0.25)
    assert boot.cheaper.tolist() == [[False, True], [False, False]]


def test_cost_bootstrap_interval_agrees_with_scipy_bootstrap() -> None:
    # the same statistic (a mean over tasks, percentile interval): the two draw different
    # resamples, so they agree within Monte Carlo error (about 1% of the interval at 20,000)
    rng = np.random.default_rng(7)
    a = rng.gamma(2.0, 1.0, 120)
    b = a + rng.normal(0.3, 0.5, 120)
    ours = paired_cost_bootstrap(np.column_stack([a, b]), resamples=20_000, seed=2)
    ref = sps.bootstrap((a - b,), np.mean, method="percentile", n_resamples=20_000, random_state=5)
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert ours.diff_low[0, 1] == pytest.approx(ref.confidence_interval.low, abs=0.03 * width)
    assert ours.diff_high[0, 1] == pytest.approx(ref.confidence_interval.high, abs=0.03 * width)
    one = sps.bootstrap((a,), np.mean, method="percentile", n_resamples=20_000, random_state=5)
    w1 = one.confidence_interval.high - one.confidence_interval.low
    assert ours.ci_low[0] == pytest.approx(one.confidence_interval.low, abs=0.03 * w1)
    assert ours.ci_high[0] == pytest.approx(one.confidence_interval.high, abs=0.03 * w1)


def test_cost_per_success_is_total_cost_over_solved_tasks() -> None:
    cost = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    solved = np.array([[1, 0], [1, 0], [0, 0], [0, 0]])
    boot = paired_cost_bootstrap(cost, successes=solved, resamples=200, seed=0)
    assert boot.estimate[0] == pytest.approx(4.0 / 2)
    assert np.isnan(boot.estimate[1])  # nothing solved: undefined, never 0
    assert boot.undefined[1] == 200
    # a resample that draws neither solved task has no cost per success: left out, and counted
    assert 0 < boot.undefined[0] < 200


def test_cost_bootstrap_refuses_unknown_cost() -> None:
    with pytest.raises(ArgumentError, match="cost"):
        paired_cost_bootstrap(np.array([[1.0, np.nan]]))


# The joint coverage of the rank intervals, by simulation: 8 systems, two pairs level (true ranks
# shared), the others apart by 7 to 10 points; 200 tasks, one attempt each, every system's
# outcome on a task independent. The pairwise test is the board's with single attempts: the mid-p
# McNemar test (``paired_test`` returns exactly ``mcnemar_mid_p`` for differences in {-1, 0, 1},
# checked on the first replicate), Holm-adjusted over the 28 pairs, decided at alpha = 0.05.
TRUE_RATES = np.array([0.80, 0.80, 0.72, 0.65, 0.65, 0.55, 0.45, 0.45])
REPLICATES = 2000


@pytest.mark.slow
def test_rank_intervals_hold_jointly_and_the_leaders_hold_the_true_best() -> None:
    from trialbook.stats import mcnemar_mid_p, paired_test

    rng = np.random.default_rng(2026)
    n, tasks = TRUE_RATES.size, 200
    true_rank = 1 + (TRUE_RATES[None, :] > TRUE_RATES[:, None]).sum(axis=1)
    best = np.isclose(TRUE_RATES, TRUE_RATES.max())
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    covered = held_best = 0
    for rep in range(REPLICATES):
        x = rng.random((tasks, n)) < TRUE_RATES
        only = [
            (int((x[:, i] & ~x[:, j]).sum()), int((~x[:, i] & x[:, j]).sum())) for i, j in pairs
        ]
        p = np.array([mcnemar_mid_p(b, c) for b, c in only])
        if rep == 0:
            same = [paired_test(x[:, i].astype(float) - x[:, j]).p_value for i, j in pairs]
            np.testing.assert_allclose(p, same, rtol=0, atol=0)
        adjusted = holm(p)
        better = np.zeros((n, n), bool)
        for (i, j), (a_only, b_only), q in zip(pairs, only, adjusted, strict=True):
            if q < 0.05:
                better[(i, j) if a_only > b_only else (j, i)] = True
        r = rank_intervals(x.mean(axis=0), better)
        covered += bool(((r.low <= true_rank) & (true_rank <= r.high)).all())
        held_best += bool((r.low[best] == 1).all())
    coverage, leaders = covered / REPLICATES, held_best / REPLICATES
    mc_error = np.sqrt(0.95 * 0.05 / REPLICATES)  # about 0.0049 at the 95% we must reach
    # above 95% by three Monte Carlo errors: were the true coverage 95% or less, this would
    # pass less than once in 700 runs (observed: about 99% coverage, 99.5% leaders)
    print(
        f"joint coverage {coverage:.4f}, leaders hold the best {leaders:.4f}, MC error {mc_error:.4f}"
    )
    assert coverage >= 0.95 + 3 * mc_error, (coverage, mc_error)
    assert leaders >= 0.95 + 3 * mc_error, (leaders, mc_error)


def test_each_pair_difference_interval_is_the_paired_resamples_percentiles() -> None:
    # the bounds of cost_j - cost_i are those of cost_i - cost_j negated, and both are the
    # percentiles of the same paired resamples: checked against a direct percentile of them
    rng = np.random.default_rng(5)
    cost = rng.gamma(2.0, 1.0, (50, 4)) * [1.0, 1.1, 0.9, 1.3]
    boot = paired_cost_bootstrap(cost, resamples=3000, seed=8)
    np.testing.assert_allclose(boot.diff_low, -boot.diff_high.T, rtol=0, atol=1e-12)
    gen = np.random.default_rng(8)  # the same draws, repeated here
    drawn = gen.integers(0, 50, size=(3000, 50)) + (np.arange(3000) * 50)[:, None]
    counts = np.bincount(drawn.ravel(), minlength=3000 * 50).reshape(3000, 50)
    means = counts @ cost / 50
    for i in range(4):
        for j in range(4):
            if i != j:
                lo, hi = np.percentile(means[:, i] - means[:, j], [2.5, 97.5])
                assert boot.diff_low[i, j] == pytest.approx(lo, abs=1e-12)
                assert boot.diff_high[i, j] == pytest.approx(hi, abs=1e-12)
