"""Task bootstrap and analytic SEs against ../shared/reference vectors and scipy/statsmodels."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats

from trialbook.errors import ArgumentError
from trialbook.stats import clustered_se, task_bootstrap, variance_components


def test_reference_bootstrap_intervals(vectors: dict[str, Any]) -> None:
    # scipy.stats.bootstrap on 20 items with 14 ones (9,999 resamples). Resample means live on a grid
    # of 1/20, so an independent draw of the same size lands on the same grid points.
    case = vectors["bootstrap"]["scipy_bootstrap_mean_20items"]
    x = np.array(case["inputs"]["x"], dtype=float)
    for method, key in (("percentile", "percentile"), ("bca", "BCa")):
        r = task_bootstrap(x, resamples=9999, seed=0, method=method)  # type: ignore[arg-type]
        assert [r.ci_low[0], r.ci_high[0]] == pytest.approx(case["expected"][key]["ci"], abs=1e-9)
        assert r.standard_error[0] == pytest.approx(
            case["expected"][key]["standard_error"], abs=0.005
        )


def test_matches_scipy_bootstrap_computed_here() -> None:
    # a continuous-valued sample (index draw path), large B on both sides: Monte Carlo error ~ 0.002
    rng = np.random.default_rng(7)
    x = rng.beta(2, 3, size=60)
    ours = task_bootstrap(x, resamples=40_000, seed=1)
    ref = stats.bootstrap((x,), np.mean, n_resamples=40_000, method="percentile", rng=2)
    assert ours.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=0.004)
    assert ours.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=0.004)
    ours_bca = task_bootstrap(x, resamples=40_000, seed=1, method="bca")
    ref_bca = stats.bootstrap((x,), np.mean, n_resamples=40_000, method="BCa", rng=2)
    assert ours_bca.ci_low[0] == pytest.approx(ref_bca.confidence_interval.low, abs=0.004)
    assert ours_bca.ci_high[0] == pytest.approx(ref_bca.confidence_interval.high, abs=0.004)


def test_count_draw_and_index_draw_agree_in_distribution() -> None:
    # the exact count-based draw (few profiles) vs scipy's index resampling on the same data
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, size=400) / 5  # per-task pass@1 of 5 attempts: 6 profiles
    ours = task_bootstrap(x, resamples=40_000, seed=5)
    assert ours.distinct_profiles <= 6
    ref = stats.bootstrap((x,), np.mean, n_resamples=40_000, method="percentile", rng=6)
    assert ours.standard_error[0] == pytest.approx(ref.standard_error, rel=0.02)
    assert ours.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=0.003)
    assert ours.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=0.003)


def test_cluster_ratio_bootstrap_vector(vectors: dict[str, Any]) -> None:
    # resampling clusters of unequal size: weighted mean of cluster means with size weights = ratio
    case = vectors["bootstrap"]["cluster_bootstrap_ratio"]
    sums = np.array(case["inputs"]["cluster_sums"])
    sizes = np.array(case["inputs"]["cluster_sizes"])
    r = task_bootstrap(sums / sizes, weights=sizes, resamples=200_000, seed=0)
    assert r.standard_error[0] == pytest.approx(case["expected"]["manual_200k_se"], abs=0.001)


def test_seeded_and_reproducible() -> None:
    x = np.r_[np.ones(30), np.zeros(20)]
    a = task_bootstrap(x, seed=11)
    b = task_bootstrap(x, seed=11)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.seed, a.resamples, a.method) == (11, 10_000, "percentile")


def test_degenerate_sample_gives_zero_width_interval() -> None:
    for method in ("percentile", "bca"):
        r = task_bootstrap(np.ones(12), method=method)  # type: ignore[arg-type]
        assert (r.ci_low[0], r.ci_high[0], r.estimate[0]) == (1.0, 1.0, 1.0)


def test_columns_share_draws_and_keep_order() -> None:
    # pass^2 <= pass@1 <= pass@2 task by task implies the same order in every resample mean
    c = np.array([5, 4, 2, 0, 3, 1, 5, 2])
    at1, at2 = c / 5, 1 - np.array([0, 0, 3, 10, 1, 6, 0, 3]) / 10
    hat2 = np.array([10, 6, 1, 0, 3, 0, 10, 1]) / 10
    r = task_bootstrap(np.column_stack([hat2, at1, at2]), seed=4)
    assert r.ci_low[0] <= r.ci_low[1] <= r.ci_low[2]
    assert r.ci_high[0] <= r.ci_high[1] <= r.ci_high[2]


def test_clustered_se_vectors(vectors: dict[str, Any]) -> None:
    # CR1 on attempt outcomes = our weighted form on cluster means with size weights
    case = vectors["clustered_and_components"]["clustered_small"]
    v = np.array(case["inputs"]["values"], dtype=float)
    g = np.array(case["inputs"]["clusters"])
    sizes = np.bincount(g).astype(float)
    means = np.bincount(g, weights=v) / sizes
    expected = case["expected"][
        "se_cr1_G_over_G-1 (Inspect stderr(cluster=...) / statsmodels cluster)"
    ]
    assert clustered_se(means, sizes)[0] == pytest.approx(expected, abs=1e-9)


def test_clustered_se_equals_statsmodels_cluster_robust() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(9)
    sizes = np.full(40, 5)
    y = (rng.random(200) < np.repeat(rng.beta(2, 2, 40), 5)).astype(float)
    groups = np.repeat(np.arange(40), 5)
    fit = sm.OLS(y, np.ones(200)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    ours = clustered_se(np.bincount(groups, weights=y) / sizes)[0]
    assert ours == pytest.approx(float(fit.bse[0]), abs=1e-12)


def test_variance_components_vector(vectors: dict[str, Any]) -> None:
    case = vectors["clustered_and_components"]["claim_7f_components"]
    y = np.array(case["inputs"]["Y_tasks_x_runs"])
    vc = variance_components(np.full(4, 5), y.sum(axis=1))
    assert vc is not None
    e = case["expected"]
    assert vc.between == pytest.approx(e["sigma2_between_hat (unbiased, may be <0)"], abs=1e-9)
    assert vc.within == pytest.approx(e["sigma2_within_hat (unbiased)"], abs=1e-9)
    assert vc.icc == pytest.approx(e["icc_hat"], abs=1e-9)
    assert vc.design_effect == pytest.approx(e["design_effect_1+(R-1)icc"], abs=1e-9)
    assert vc.se_now == pytest.approx(
        e["se_mean (task-clustered, = sd(task means, ddof=1)/sqrt(T))"], abs=1e-9
    )
    assert vc.se_naive == pytest.approx(e["se_naive_all_TR_runs_iid"], abs=1e-9)
    # doubling attempts: R=10 in the vector's planning table
    assert vc.se_double_attempts**2 == pytest.approx(
        e["var_mean_if_R_were (for planning)"]["10"], abs=1e-9
    )


def test_variance_components_unbiased_by_simulation() -> None:
    # reference sheet §6 Monte Carlo: p ~ Beta(2,3), T=40, R=5 -> E[s2_b]=0.04, E[s2_w]=0.2
    rng = np.random.default_rng(1)
    b, w = [], []
    for _ in range(4000):
        c = rng.binomial(5, rng.beta(2, 3, 40))
        vc = variance_components(np.full(40, 5), c)
        assert vc is not None
        b.append(vc.between)
        w.append(vc.within)
    assert np.mean(b) == pytest.approx(0.04, abs=0.002)
    assert np.mean(w) == pytest.approx(0.2, abs=0.002)


def test_variance_components_need_a_design_that_separates_them() -> None:
    assert variance_components([1, 1, 1], [1, 0, 1]) is None
    assert variance_components([5], [3]) is None


def test_invalid_arguments_name_themselves() -> None:
    with pytest.raises(ArgumentError, match="confidence"):
        task_bootstrap([1.0, 0.0], confidence=1.5)
    with pytest.raises(ArgumentError, match="resamples"):
        task_bootstrap([1.0, 0.0], resamples=1)
    with pytest.raises(ArgumentError, match="finite"):
        task_bootstrap([1.0, np.nan])
    with pytest.raises(ArgumentError, match="weights"):
        task_bootstrap([1.0, 0.0], weights=[1.0, -1.0])


def test_per_column_weights_make_one_draw_serve_every_figure() -> None:
    rng = np.random.default_rng(21)
    n = rng.integers(1, 8, size=300)
    c = rng.binomial(n, rng.beta(2, 2, 300))
    first = (rng.random(300) < 0.5).astype(float)
    values = np.column_stack([c / n, c / n, first])
    weights = np.column_stack([np.ones(300), n, np.ones(300)])
    joint = task_bootstrap(values, weights=weights, resamples=20_000, seed=3)
    # the n-weighted mean of c/n is the pooled attempt rate, sum c / sum n (first principles)
    assert joint.estimate[1] == pytest.approx(c.sum() / n.sum(), abs=1e-12)
    assert joint.estimate[0] == pytest.approx((c / n).mean(), abs=1e-12)
    # analytic SEs per column equal the single-column computation exactly
    assert clustered_se(values, weights)[1] == pytest.approx(clustered_se(c / n, n)[0], abs=1e-15)
    # and each column's bootstrap distribution matches a separate bootstrap of that column alone
    for j, w in ((0, None), (1, n), (2, None)):
        alone = task_bootstrap(values[:, j], weights=w, resamples=20_000, seed=4)
        assert joint.standard_error[j] == pytest.approx(alone.standard_error[0], rel=0.03)


def test_the_result_reports_the_resamples_and_seed_asked_for() -> None:
    r = task_bootstrap([0.0, 1.0, 0.5, 0.25], resamples=1234, seed=17)
    assert (r.resamples, r.seed) == (1234, 17)


def test_the_interval_is_the_seeded_draw_itself_on_both_paths() -> None:
    # First principles: the documented draw, written out with numpy. With few distinct profiles the
    # draw counts per profile are Multinomial(T; f/T); with many, T indices are drawn per resample.
    # An offset or a re-seeded generator anywhere in the code moves the bounds.
    b = 999
    two_profiles = np.array([0.0] * 10 + [1.0] * 10)  # profiles sorted ascending: 0 then 1
    draws = np.random.default_rng(5).multinomial(20, [0.5, 0.5], size=b)
    theta = draws[:, 1] / 20
    r = task_bootstrap(two_profiles, resamples=b, seed=5)
    # (the draws go through a matrix product: equal up to rounding, not bit for bit)
    assert [r.ci_low[0], r.ci_high[0]] == pytest.approx(
        list(np.percentile(theta, [2.5, 97.5])), rel=1e-12
    )
    assert r.standard_error[0] == pytest.approx(theta.std(ddof=1), rel=1e-12)

    distinct = np.array([0.1, 0.4, 0.45, 0.8, 0.95])
    idx = np.random.default_rng(9).integers(0, 5, size=(b, 5))
    theta = distinct[idx].sum(axis=1) / 5
    r = task_bootstrap(distinct, resamples=b, seed=9)
    assert [r.ci_low[0], r.ci_high[0]] == pytest.approx(
        list(np.percentile(theta, [2.5, 97.5])), rel=1e-12
    )


@pytest.mark.parametrize("bad", [[1.0, 0.0], [1.0, -1.0], [1.0, np.nan], [1.0, np.inf]])
def test_a_weight_that_is_not_positive_and_finite_is_refused(bad: list[float]) -> None:
    with pytest.raises(ArgumentError, match="weights must be finite and > 0"):
        task_bootstrap([0.0, 1.0], weights=bad)
    with pytest.raises(ArgumentError, match="weights must be finite and > 0"):
        clustered_se([0.0, 1.0], weights=bad)


def test_resamples_drawn_for_their_standard_error_alone_match_the_full_draw() -> None:
    # interval=False (Wilson bounds the means instead) draws the same resamples: the same
    # estimate, standard error and profiles, and no percentile bounds (NaN, never a number)
    rng = np.random.default_rng(5)
    values = rng.random((40, 3)).round(1)
    weights = rng.integers(1, 4, 40).astype(float)
    for method in ("percentile", "bca"):
        full = task_bootstrap(values, weights=weights, resamples=500, method=method, seed=3)
        alone = task_bootstrap(
            values, weights=weights, resamples=500, method=method, seed=3, interval=False
        )
        assert alone.estimate.tobytes() == full.estimate.tobytes()
        assert alone.standard_error.tobytes() == full.standard_error.tobytes()
        assert alone.distinct_profiles == full.distinct_profiles
        assert np.isnan(alone.ci_low).all()
        assert np.isnan(alone.ci_high).all()
