"""The confidence sequences and the discordant-pair test: first principles, edges, bad input."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from trialbook.errors import ArgumentError
from trialbook.stats import (
    BettingState,
    DiscordantSequence,
    PairedSequence,
    discordant_evalue,
    discordant_stops,
    race_stops,
    task_order,
)


def test_the_first_bet_is_the_capped_plug_in_bet() -> None:
    # first principles (Waudby-Smith & Ramdas 2023, eq. 26, with c = 3/4): before any data
    # s2_0 = 1/4, so l_1 = min(3/4, sqrt(2 log(2/alpha) / (1/4 * 1 * log 2))) = 3/4 (the cap);
    # then K+_1(m) = 1 + l (x - m) and K-_1(m) = 1 - l (x - m), l capped at c/m and c/(1-m)
    points = np.array([0.1, 0.5, 0.9])
    state = BettingState(points, races=1, alpha=0.05, total=None)
    state.update(np.array([0.8]))
    lam_plus = np.minimum(0.75, 0.75 / points)
    lam_minus = np.minimum(0.75, 0.75 / (1 - points))
    assert np.allclose(state.log_plus[0], np.log1p(lam_plus * (0.8 - points)))
    assert np.allclose(state.log_minus[0], np.log1p(-lam_minus * (0.8 - points)))


def test_the_second_bet_uses_the_variance_of_the_first_pair_only() -> None:
    # s2_1 = (1/4 + (x1 - mu_1)^2) / 2 with mu_1 = (1/2 + x1) / 2; l_2 = min(3/4, sqrt(2 log(2/a)
    # / (s2_1 * 2 * log 3))): predictable, the second value x2 does not enter it
    x1, x2, alpha = 0.5, 1.0, 0.05
    state = BettingState(np.array([0.5]), races=1, alpha=alpha, total=None)
    state.update(np.array([x1]))
    state.update(np.array([x2]))
    s2 = (0.25 + (x1 - (0.5 + x1) / 2) ** 2) / 2
    lam = min(0.75, math.sqrt(2 * math.log(2 / alpha) / (s2 * 2 * math.log(3))))
    assert lam == 0.75  # still capped this early
    expected = math.log1p(0.75 * (x1 - 0.5)) + math.log1p(lam * (x2 - 0.5))
    assert state.log_plus[0, 0] == pytest.approx(expected)


def test_the_suite_sequence_closes_on_the_full_suite_value() -> None:
    rng = np.random.default_rng(5)
    diffs = rng.choice([-1.0, 0.0, 0.0, 0.5, 1.0], size=40)
    seq = PairedSequence(total=40)
    looks = [seq.update(float(d)) for d in diffs]
    full = float(diffs.mean())
    assert looks[-1].ci_low == pytest.approx(full)
    assert looks[-1].ci_high == pytest.approx(full)
    widths = [lk.ci_high - lk.ci_low for lk in looks]  # type: ignore[operator]
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(widths))  # running intersection
    with pytest.raises(ArgumentError, match="no pair is left"):
        seq.update(0.0)


def test_the_interval_holds_the_values_the_capital_does_not_reject() -> None:
    # the interval is read off a grid: every candidate mean the capital has not rejected (checked
    # on a finer grid than the one the interval was read from) lies inside it
    rng = np.random.default_rng(8)
    diffs = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.7, 0.2], size=60)
    seq = PairedSequence(grid=201)
    fine = BettingState(np.linspace(0, 1, 4001), races=1, alpha=0.05, total=None)
    for d in diffs:
        look = seq.update(float(d))
        fine.update(np.array([(d + 1) / 2]))
        kept = 2 * fine.points[~fine.rejected_ever[0]] - 1
        assert look.ci_low is not None
        assert look.ci_high is not None
        assert kept.min() >= look.ci_low - 1e-9
        assert kept.max() <= look.ci_high + 1e-9


def test_the_incremental_sequence_and_the_vectorised_races_agree() -> None:
    rng = np.random.default_rng(3)
    diffs = rng.choice([-1.0, 0.0, 1.0], p=[0.05, 0.75, 0.2], size=(10, 200))
    for total, min_effect in ((None, None), (200, None), (None, 0.2)):
        decision, used = race_stops(diffs, total=total, min_effect=min_effect)
        for r in range(diffs.shape[0]):
            stop = None
            seq = PairedSequence(total=total, min_effect=min_effect, grid=11)
            for d in diffs[r]:
                stop = seq.update(float(d))
                if stop.decision != "undecided":
                    break
            assert stop is not None
            code = {
                "improvement": 1,
                "regression": -1,
                "no meaningful difference": 2,
                "undecided": 0,
            }
            assert code[stop.decision] == decision[r]
            assert stop.tasks == used[r]


def test_the_discordant_evalue_is_the_beta_mixture_integral() -> None:
    # E = integral over p of p^s (1-p)^f Beta(a, a)(p) dp / (1/2)^(s+f), by numerical integration
    for wins, losses, a in ((7, 1, 1.0), (3, 3, 0.5), (20, 8, 2.0), (0, 0, 1.0)):
        mixed, _ = integrate.quad(
            lambda p, w=wins, f=losses, a=a: p**w * (1 - p) ** f * stats.beta.pdf(p, a, a), 0, 1
        )
        assert discordant_evalue(wins, losses, prior=a) == pytest.approx(
            mixed / 0.5 ** (wins + losses)
        )


def test_the_discordant_sequence_and_the_vectorised_test_agree() -> None:
    rng = np.random.default_rng(4)
    outcomes = rng.choice([-1, 0, 1], p=[0.05, 0.8, 0.15], size=(40, 300))
    decision, used = discordant_stops(outcomes)
    for r in range(outcomes.shape[0]):
        seq = DiscordantSequence()
        for o in outcomes[r]:
            look = seq.update(int(o))
            if look.decision != "undecided":
                break
        code = {"improvement": 1, "regression": -1, "undecided": 0}
        assert code[look.decision] == decision[r]
        assert look.tasks == used[r]
        assert look.ci_low is None
        assert look.ci_high is None


def test_the_task_order_is_seeded_and_ignores_the_listing_order() -> None:
    ids = [f"t{i}" for i in range(50)]
    a = task_order(ids, 7)
    assert a == task_order(list(reversed(ids)), 7)
    assert sorted(a) == sorted(ids)
    assert a != tuple(sorted(ids))
    assert a != task_order(ids, 8)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: PairedSequence(alpha=1.0), "alpha must be in"),
        (lambda: PairedSequence(alpha=float("nan")), "alpha must be in"),
        (lambda: PairedSequence(min_effect=0.0), "min_effect must be in"),
        (lambda: PairedSequence().update(1.5), "must lie in"),
        (lambda: DiscordantSequence().update(0.5), "single-attempt pairs"),
        (lambda: race_stops(np.array([[2.0]])), "must lie in"),
        (lambda: discordant_stops(np.array([[0.5]])), "of -1, 0, 1"),
        (lambda: discordant_evalue(1, 1, prior=0), "prior must be"),
    ],
)
def test_bad_input_names_the_argument(make: object, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        make()  # type: ignore[operator]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=1, max_size=60),
    st.sampled_from([0.01, 0.05, 0.2]),
)
def test_intervals_are_nested_bounded_and_the_suite_form_closes(
    diffs: list[float], alpha: float
) -> None:
    for total in (None, len(diffs)):
        seq = PairedSequence(alpha=alpha, total=total, grid=101)
        low, high = -1.0, 1.0
        for d in diffs:
            look = seq.update(d)
            assert look.ci_low is not None
            assert look.ci_high is not None
            assert low - 1e-12 <= look.ci_low <= look.ci_high <= high + 1e-12
            low, high = look.ci_low, look.ci_high
        if total is not None:  # after the last task: the full-suite mean, exactly
            assert look.ci_low == pytest.approx(sum(diffs) / len(diffs))
            assert look.ci_high == pytest.approx(sum(diffs) / len(diffs))


def test_importing_the_statistics_does_not_load_scipy() -> None:
    # scipy loads on first use (0.5-1 s): `trialbook run` imports the statistics without needing it
    code = "import sys, trialbook.stats; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_task_order_is_the_documented_digest_order_not_a_generator_stream() -> None:
    """docs/statistics.md: the ids sorted by SHA-256 of "trialbook.task_order/1", NUL, the seed,
    NUL, the id. Computed here from that definition with hashlib, so the order cannot move with
    numpy's generator streams (numpy keeps no promise of those across versions)."""
    import hashlib

    ids = [f"task-{i}" for i in range(40)] + ["é-ünïcode", ""]
    for seed in (0, 1, 2**40):
        expected = sorted(
            ids,
            key=lambda t: hashlib.sha256(f"trialbook.task_order/1\0{seed}\0{t}".encode()).digest(),
        )
        assert task_order(ids, seed) == tuple(expected)


def test_the_task_order_puts_each_task_at_each_place_equally_often() -> None:
    """A uniform permutation: over 4,000 seeds, the place of one task among 8 is uniform
    (chi-square goodness of fit, scipy; p above 1e-4 fails once in 10,000 honest runs)."""
    from scipy.stats import chisquare

    ids = [f"t{i}" for i in range(8)]
    places = np.zeros(8)
    for seed in range(4000):
        places[task_order(ids, seed).index("t3")] += 1
    assert chisquare(places).pvalue > 1e-4
