"""Variance split: the SEs it prints are the score table's SEs, and a variance is never shown below 0.

Expected values are worked by hand beside each test (one-way ANOVA, Searle et al. 1992 ch. 3; the
CR1 SE of a mean over tasks is sd(per-task rates, ddof=1)/sqrt(T) with equal weights).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from trialbook.errors import ArgumentError
from trialbook.stats import clustered_se, variance_components


def test_se_now_is_the_tables_se_when_the_between_estimate_is_negative() -> None:
    # 2 tasks x 3 attempts, passes 1 and 2: rates 1/3, 2/3; MSB = 3*(2*(1/6)^2) = 1/6,
    # MSW = (2/3 + 2/3)/4 = 1/3, sigma_b^2 = (1/6 - 1/3)/3 = -1/18.
    # The table's SE of pass@1 is sd([1/3, 2/3])/sqrt(2) = 1/6; the model with sigma_b^2 cut at 0
    # would say sqrt((1/3)/3/2) = 0.2357 -- a second, different "SE of pass@1" on the same screen.
    vc = variance_components([3, 3], [1, 2])
    assert vc is not None
    assert vc.between == pytest.approx(-1 / 18)
    assert vc.se_now == pytest.approx(1 / 6)
    assert vc.se_now == pytest.approx(float(clustered_se(np.array([1 / 3, 2 / 3]))[0]))


def test_se_now_matches_the_clustered_se_in_an_unbalanced_design() -> None:
    n = np.array([2, 5, 3, 8, 4])
    c = np.array([0, 4, 3, 2, 1])
    vc = variance_components(n, c)
    assert vc is not None
    assert vc.se_now == pytest.approx(float(clustered_se(c / n)[0]), rel=1e-12)


def test_a_negative_between_estimate_is_kept_and_shown_as_zero() -> None:
    # 3 tasks x 3 attempts, one pass each: MSB = 0, MSW = 3*(2/3)/6 = 1/3, sigma_b^2 = -1/9
    vc = variance_components([3, 3, 3], [1, 1, 1])
    assert vc is not None
    assert vc.between == pytest.approx(-1 / 9)  # the unbiased estimate, as computed
    assert vc.between_shown == 0.0
    assert vc.between_below_zero
    assert vc.icc == 0.0


def test_a_positive_between_estimate_is_shown_as_is() -> None:
    vc = variance_components([3, 3, 3, 3], [3, 2, 1, 0])
    assert vc is not None
    assert vc.between_shown == vc.between == pytest.approx(7 / 54)
    assert not vc.between_below_zero


def test_projections_scale_the_measured_se() -> None:
    # passes 3, 2, 1, 0 of 3: rates 1, 2/3, 1/3, 0; MSB = 3*(1/4+1/36+1/36+1/4)/3 = 5/9,
    # MSW = (2/3+2/3)/8 = 1/6, sigma_b^2 = (5/9 - 1/6)/3 = 7/54, sigma_w^2 = 1/6.
    # SE now = sd(rates)/2 = sqrt(5/27)/2. 2x tasks: /sqrt(2). 2x attempts: the within part
    # (1/6)/3 of the per-task variance halves: sqrt((7/54 + 1/36) / (7/54 + 1/18)).
    vc = variance_components([3, 3, 3, 3], [3, 2, 1, 0])
    assert vc is not None
    now = math.sqrt(5 / 27) / 2
    assert vc.within == pytest.approx(1 / 6)
    assert vc.se_now == pytest.approx(now)
    assert vc.se_double_tasks == pytest.approx(now / math.sqrt(2))
    assert vc.se_double_attempts == pytest.approx(
        now * math.sqrt((7 / 54 + 1 / 36) / (7 / 54 + 1 / 18))
    )
    assert not vc.weighted


def test_declared_weights_weight_the_ses() -> None:
    n = np.array([3, 3, 3, 3])
    c = np.array([3, 2, 1, 0])
    w = np.array([1.0, 1.0, 1.0, 5.0])
    vc = variance_components(n, c, weights=w)
    assert vc is not None
    assert vc.weighted
    assert vc.se_now == pytest.approx(float(clustered_se(c / n, w)[0]), rel=1e-12)
    # 2x attempts: sum w^2 (b + s_w/(2n)) / sum w^2 (b + s_w/n); with equal b and n per task the
    # weights cancel, so the factor is the unweighted one
    b, s_w = 7 / 54, 1 / 6
    assert vc.se_double_attempts == pytest.approx(
        vc.se_now * math.sqrt((b + s_w / 6) / (b + s_w / 3))
    )


@pytest.mark.parametrize(
    ("weights", "argument"),
    [([1.0, 2.0], "weights"), ([1.0, -1.0, 1.0], "weights"), ([0.0, 0.0, 0.0], "weights")],
)
def test_bad_weights_name_the_argument(weights: list[float], argument: str) -> None:
    with pytest.raises(ArgumentError, match=argument) as info:
        variance_components([3, 3, 3], [1, 2, 3], weights=weights)
    assert info.value.argument == argument
