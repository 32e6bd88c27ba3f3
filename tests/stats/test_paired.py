"""Paired statistics and planning against ../shared/reference/stats_vectors.json (R contingencytables
anchors, statsmodels McNemar/multipletests) and claims 7a-7d."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.special import ndtri

from trialbook.stats import holm, mcnemar_exact, newcombe_paired_ci, paired_difference, plan_design


def test_paired_tables(vectors: dict[str, Any]) -> None:
    tables = vectors["paired"]["tables"]
    assert len(tables) >= 6
    for case in tables:
        t = np.array(case["inputs"]["table"])
        e = case["expected"]
        est, low, high = newcombe_paired_ci(t)
        assert est == pytest.approx(e["wald"]["estimate"], abs=1e-9), case["name"]
        assert [low, high] == pytest.approx(e["newcombe_square_and_add"]["ci"], abs=1e-9), case[
            "name"
        ]
        assert mcnemar_exact(t[0, 1], t[1, 0]) == pytest.approx(
            e["mcnemar"]["exact_binomial_p"], abs=1e-9
        )


def test_paired_se_and_what_pairing_buys(vectors: dict[str, Any]) -> None:
    # claim 7c table 460 agree / 20+20: per-task differences in {-1, 0, 1}
    case = next(t for t in vectors["paired"]["tables"] if t["name"].startswith("claim_7c_balanced"))
    (n11, n12), (n21, n22) = case["inputs"]["table"]
    a = np.array([1] * n11 + [1] * n12 + [0] * n21 + [0] * n22, dtype=float)
    b = np.array([1] * n11 + [0] * n12 + [1] * n21 + [0] * n22, dtype=float)
    d = paired_difference(a, b, resamples=2000)
    assert d.se_paired == pytest.approx(case["expected"]["paired_diff_se_ddof1"], abs=1e-9)
    # our unpaired SE uses ddof=1 per system; the vector's sqrt(seA^2+seB^2) uses ddof=0
    assert d.se_unpaired == pytest.approx(
        case["expected"]["unpaired_se_sqrt(seA^2+seB^2)"] * np.sqrt(500 / 499), abs=1e-9
    )


def test_holm_vectors(vectors: dict[str, Any]) -> None:
    for case in vectors["multiple_comparisons"].values():
        got = holm(case["inputs"]["pvalues"])
        assert got == pytest.approx(case["expected"]["holm"]["adjusted"], abs=1e-9)


def test_claims_7a_to_7d(vectors: dict[str, Any]) -> None:
    c = vectors["power"]["claims"]
    p = plan_design(tasks=500, attempts=1, baseline=0.5, effect=0.03, agreement=0.92)
    assert p.halfwidth == pytest.approx(c["7a_halfwidth_500_at_50%"], abs=1e-9)
    assert p.se_diff_unpaired == pytest.approx(c["7b_unpaired_se_diff"], abs=1e-9)
    assert p.mde_unpaired == pytest.approx(c["7b_true_diff_for_80pct_power"], abs=1e-9)
    assert p.se_paired == pytest.approx(c["7c_se_sqrt(40)/500"], abs=1e-9)
    assert p.halfwidth * p.se_paired / p.se_unpaired == pytest.approx(c["7c_halfwidth"], abs=1e-9)
    mde = vectors["power"]["mde_paired_500_tasks_discordance_8pct"]["expected"]
    assert p.mde_paired == pytest.approx(
        mde["mde_approx (psi ~ omega2 when delta small)"], abs=1e-9
    )
    p50 = plan_design(tasks=50, attempts=1, baseline=0.5, effect=0.1)
    assert p50.halfwidth == pytest.approx(c["7d_halfwidth_50_at_50%"], abs=1e-9)


def test_miller_power_formulas(vectors: dict[str, Any]) -> None:
    m = vectors["power"]["miller_formula_checks"]
    # omega^2 = 1/9 between the systems' task rates, sigma^2 = 1/6 within each: psi = 1/9 + 2/6
    for runs, key in (
        (1, "mde_n198_omega2_1/9_sigma2_1/6_K1"),
        (10, "mde_n198_omega2_1/9_sigma2_1/6_K10"),
    ):
        p = plan_design(
            tasks=198,
            attempts=runs,
            baseline=0.5,
            effect=0.05,
            within_var=1 / 6,
            agreement=1 - (1 / 9 + 1 / 3),
        )
        assert p.mde_paired == pytest.approx(m[key], abs=1e-9)
    zz = float(ndtri(0.975) + ndtri(0.8))
    assert zz**2 * (1 / 9) / 0.03**2 == pytest.approx(m["n_for_delta_0.03_total_var_1/9"], abs=1e-6)


def test_connor_paired_sample_size(vectors: dict[str, Any]) -> None:
    # Miller's paired n with omega^2 = psi - delta^2 (single attempts), psi = p10 + p01
    for case in vectors["power"]["mcnemar_sample_size_connor"]:
        p10, p01 = case["inputs"]["p10"], case["inputs"]["p01"]
        expected = case["expected"]["miller_paired_n (omega2 = psi - delta^2)"]
        p = plan_design(
            tasks=100, attempts=1, baseline=0.5, effect=p10 - p01, agreement=1 - (p10 + p01)
        )
        assert p.tasks_needed_paired == int(np.ceil(expected))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_paired_p_value_is_two_sided(sign: float) -> None:
    # first principles: p = 2 Phi(-|estimate| / SE), the same for a difference and its mirror
    from scipy.special import ndtr

    rng = np.random.default_rng(3)
    a = rng.uniform(size=30)
    b = np.clip(a + sign * rng.normal(0.08, 0.2, size=30), 0, 1)
    d = paired_difference(a, b, resamples=200)
    assert d.se_paired is not None
    assert d.estimate * sign > 0
    assert d.p_value == pytest.approx(2 * ndtr(-abs(d.estimate) / d.se_paired), rel=1e-12)
    mirror = paired_difference(b, a, resamples=200)
    assert mirror.p_value == pytest.approx(d.p_value, rel=1e-12)


def test_plan_power_counts_both_tails_as_statsmodels_does() -> None:
    # statsmodels' two-sided normal power for two independent samples of T tasks each: the effect
    # in SD units is effect / sqrt(T * se_diff^2 / 2), the tasks per side T.
    from statsmodels.stats.power import NormalIndPower

    for effect in (0.03, 0.1, -0.1):
        p = plan_design(tasks=200, attempts=3, baseline=0.4, effect=effect, alpha=0.05)
        sd = np.sqrt(200 * p.se_diff_unpaired**2 / 2)
        expected = NormalIndPower().power(abs(effect) / sd, nobs1=200, alpha=0.05, ratio=1.0)
        assert p.power_unpaired == pytest.approx(expected, rel=1e-9)
    # at a vanishing effect a two-sided test rejects at its level alpha, not alpha / 2
    tiny = plan_design(tasks=200, attempts=1, baseline=0.5, effect=1e-9, alpha=0.05, agreement=0.9)
    assert tiny.power_unpaired == pytest.approx(0.05, abs=1e-6)
    assert tiny.power_paired == pytest.approx(0.05, abs=1e-6)
