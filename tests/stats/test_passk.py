"""pass@k and pass^k against ../shared/reference/stats_vectors.json, plus exactness properties.

Provenance of the expected values: stats_vectors.py computes them with human-eval's estimator and
math.comb, checked against tau-bench's code (see the JSON's anchor_checks_passed).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from trialbook.errors import ArgumentError, InsufficientAttemptsError
from trialbook.stats import pass_at_k, pass_hat_k, pass_k_matrix, pass_k_steps


def test_pass_at_k_single_vectors(vectors: dict[str, Any]) -> None:
    cases = vectors["pass_k"]["pass_at_k_single"]
    assert len(cases) >= 12
    for case in cases:
        i, e = case["inputs"], case["expected"]
        got = pass_at_k([i["n"]], [i["c"]], i["k"])[0]
        assert got == pytest.approx(e["pass_at_k"], abs=1e-9), i


def test_pass_hat_k_single_vectors(vectors: dict[str, Any]) -> None:
    for case in vectors["pass_k"]["pass_hat_k_single"]:
        i, e = case["inputs"], case["expected"]
        assert pass_hat_k([i["n"]], [i["c"]], i["k"])[0] == pytest.approx(
            e["pass_hat_k"], abs=1e-9
        ), i


def test_dataset_vectors_including_claim_7f(vectors: dict[str, Any]) -> None:
    datasets = vectors["pass_k"]["datasets"]
    assert {d["name"] for d in datasets} >= {"claim_7f_4tasks_5runs", "mixed_8tasks_4runs"}
    for d in datasets:
        cs = np.array(d["inputs"]["successes_per_task"])
        n = np.full_like(cs, d["inputs"]["runs_per_task"])
        for k in range(1, int(n[0]) + 1):
            assert pass_at_k(n, cs, k).mean() == pytest.approx(d["expected"][f"pass@{k}"], abs=1e-9)
            assert pass_hat_k(n, cs, k).mean() == pytest.approx(
                d["expected"][f"pass^{k}"], abs=1e-9
            )


def test_claim_7e_worked_example(vectors: dict[str, Any]) -> None:
    # claim 7e: n=10, c=2, k=3 gives 1 - 56/120; the plug-in 1 - 0.8^3 = 48.8% is a different number
    step = pass_k_steps(10, 2, 3)
    assert (step.total, step.all_fail) == (120, 56)
    assert step.pass_at_k == pytest.approx(1 - 56 / 120, abs=1e-15)
    case = next(
        c for c in vectors["pass_k"]["pass_at_k_single"] if c["inputs"] == {"n": 10, "c": 2, "k": 3}
    )
    assert step.independent == pytest.approx(case["expected"]["naive_1_minus_(1-c/n)^k"], abs=1e-12)
    assert step.pass_hat_k == 0.0


def test_unbiasedness_exactly_over_the_binomial_law(vectors: dict[str, Any]) -> None:
    # E over c ~ Binomial(n, p) of the estimator equals (1-(1-p)^k) and p^k (vectors give both sides)
    for case in vectors["pass_k"]["unbiasedness_exact"]:
        n, k, p = case["inputs"]["n"], case["inputs"]["k"], case["inputs"]["p"]
        c = np.arange(n + 1)
        pmf = stats.binom.pmf(c, n, p)
        full = np.full_like(c, n)
        e_at, e_hat = pmf @ pass_at_k(full, c, k), pmf @ pass_hat_k(full, c, k)
        # first principles: the estimators are unbiased for 1 - (1-p)^k and p^k
        assert e_at == pytest.approx(1 - (1 - p) ** k, abs=1e-12)
        assert e_hat == pytest.approx(p**k, abs=1e-12)
        # the JSON stores 10 decimals
        assert e_at == pytest.approx(case["expected"]["E[pass@k_hat]"], abs=1e-9)
        assert e_hat == pytest.approx(case["expected"]["E[pass^k_hat]"], abs=1e-9)


def test_k_above_n_is_an_error_never_a_silent_value(vectors: dict[str, Any]) -> None:
    # human-eval's estimator returns 1.0 for n=5, c=0, k=10 (the vector records it); we refuse
    edge = vectors["pass_k"]["edge_cases"][0]
    assert edge["expected"]["human_eval_estimator_returns"] == 1.0
    with pytest.raises(InsufficientAttemptsError, match="k=10"):
        pass_at_k([5], [0], 10)
    with pytest.raises(InsufficientAttemptsError):
        pass_hat_k([3], [3], 4)


def test_clamp_mode_shows_effective_values() -> None:
    s = pass_k_steps(5, 7, 9, clamp=True)
    assert (s.n, s.c, s.k) == (5, 5, 5)
    assert s.clamped == ("c: 7 -> 5", "k: 9 -> 5")
    with pytest.raises(ArgumentError, match=r"c \(7\) exceeds n \(5\)"):
        pass_k_steps(5, 7, 3)


def test_bad_counts_are_rejected() -> None:
    with pytest.raises(ArgumentError, match=r"c must lie in 0\.\.n"):
        pass_at_k([5], [6], 1)
    with pytest.raises(ArgumentError, match="k must be"):
        pass_at_k([5], [1], 0)
    with pytest.raises(ArgumentError, match="whole numbers"):
        pass_at_k([5.5], [1], 1)


def test_n_of_1000_is_exact() -> None:
    # exact rational value of the vector case n=1000, c=3, k=500, computed with Fractions here
    exact = 1 - Fraction(comb(997, 500), comb(1000, 500))
    assert pass_at_k([1000], [3], 500)[0] == float(exact)
    assert pass_hat_k([1000], [3], 500)[0] == 0.0


counts = st.integers(min_value=1, max_value=1000).flatmap(
    lambda n: st.tuples(
        st.just(n), st.integers(min_value=0, max_value=n), st.integers(min_value=1, max_value=n)
    )
)


@given(counts)
def test_order_holds_exactly(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    at, hat = pass_at_k([n], [c], k)[0], pass_hat_k([n], [c], k)[0]
    one = pass_at_k([n], [c], 1)[0]
    assert one == c / n
    assert 0.0 <= hat <= one <= at <= 1.0


@given(counts)
def test_values_are_the_correctly_rounded_exact_fractions(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k([n], [c], k)[0] == float(1 - Fraction(comb(n - c, k), comb(n, k)))
    assert pass_hat_k([n], [c], k)[0] == float(Fraction(comb(c, k), comb(n, k)))


@given(
    st.integers(min_value=1, max_value=30).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.integers(min_value=0, max_value=n), min_size=1, max_size=40),
        )
    )
)
def test_monotone_in_k_and_ordered_after_averaging(data: tuple[int, list[int]]) -> None:
    n, cs = data
    c = np.array(cs)
    full = np.full_like(c, n)
    prev_at, prev_hat = -1.0, 2.0
    one = pass_at_k(full, c, 1).mean()
    for k in range(1, n + 1):
        at, hat = pass_at_k(full, c, k).mean(), pass_hat_k(full, c, k).mean()
        assert hat <= one <= at
        assert at >= prev_at
        assert hat <= prev_hat
        prev_at, prev_hat = at, hat


def test_pass_k_matrix_written_into_given_arrays_is_the_same_values() -> None:
    # out= writes each task's values into views of a larger matrix (the scorecard's), the
    # same numbers as the arrays it returns without out=
    rng = np.random.default_rng(3)
    n = rng.integers(5, 9, 40)
    c = rng.integers(0, 6, 40).clip(max=n)
    ks = [1, 3, 5]
    at, hat = pass_k_matrix(n, c, ks)
    whole = np.full((40, 2 * len(ks) + 2), -1.0)
    got = pass_k_matrix(n, c, ks, out=(whole[:, :3], whole[:, 3:6]))
    assert np.array_equal(whole[:, :3], at)
    assert np.array_equal(whole[:, 3:6], hat)
    assert got[0].base is whole
    assert (whole[:, 6:] == -1.0).all()  # nothing written beside them
    with pytest.raises(ArgumentError, match="out must be two float64 arrays"):
        pass_k_matrix(n, c, ks, out=(whole[:, :2], whole[:, 3:6]))
