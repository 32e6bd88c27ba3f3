"""Many paired tests at once: ``paired_p_values`` gives each column the p-value, Monte Carlo error,
pattern count and words that ``paired_test`` gives the same differences alone (the board's pairs
are compare's), on single attempts (McNemar's mid-p), every sign pattern (up to EXACT_UP_TO tasks),
random patterns, the redraws near the level, and means of 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trialbook.errors import ArgumentError
from trialbook.stats import EXACT_UP_TO, PairedPValues, paired_p_values, paired_test

# 20 tasks x 3 attempts in thirds whose mid-p lies near 0.05 (tests/stats/test_signflip.py: 1.5
# and 0.8 Monte Carlo SEs of 10,000 patterns from the level): most seeds draw again
NEAR = [
    [2, 2, -2, 0, 2, -2, 1, 0, 2, 2, 1, 2, 1, 0, 2, -3, 1, 2, 2, 0],
    [-1, 3, -3, 1, 0, -2, -3, -1, -3, -1, -1, -2, 2, -3, -3, 3, -3, 2, -3, -2],
]


def _assert_each_column_is_paired_tests(
    d: np.ndarray, *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> PairedPValues:
    many = paired_p_values(d, confidence=confidence, resamples=resamples, seed=seed)
    assert many.tasks == d.shape[0]
    assert many.p_value.shape == (d.shape[1],)
    for j in range(d.shape[1]):
        one = paired_test(d[:, j].copy(), confidence=confidence, resamples=resamples, seed=seed)
        assert many.p_value[j] == one.p_value, j  # the same number, not a close one
        assert many.estimate[j] == one.estimate, j
        assert bool(many.decidable[j]) == one.decidable
        assert int(many.informative[j]) == one.informative
        assert bool(many.exact[j]) == one.exact
        if one.exact:
            assert math.isnan(many.p_value_mc_se[j])
            assert many.resamples[j] == 0
        else:
            assert many.p_value_mc_se[j] == one.p_value_mc_se
            assert many.resamples[j] == one.resamples
        # paired_test's words are the test's, then its interval's
        assert one.method.startswith(many.method(j) + "; "), (one.method, many.method(j))
    return many


@pytest.mark.parametrize("tasks", [4, EXACT_UP_TO, EXACT_UP_TO + 1, 60, 500])
def test_single_attempts_are_mcnemars_mid_p_column_by_column(tasks: int) -> None:
    rng = np.random.default_rng(tasks)
    a = rng.random((tasks, 12)) < rng.uniform(0.2, 0.8, 12)
    b = rng.random((tasks, 12)) < rng.uniform(0.2, 0.8, 12)
    d = a.astype(float) - b.astype(float)
    d[:, 0] = 0.0  # no discordant task
    d[:, 1] = a[:, 1].astype(float) - a[::-1, 1]  # as many passes each way
    many = _assert_each_column_is_paired_tests(d)
    assert many.mcnemar.all()
    assert many.exact.all()


@pytest.mark.parametrize("tasks", [3, 9, EXACT_UP_TO])
def test_every_sign_pattern_up_to_the_exact_threshold(tasks: int) -> None:
    # differences of pass@1 over 3 attempts (thirds) and of partial credit (any value)
    rng = np.random.default_rng(100 + tasks)
    thirds = rng.integers(-3, 4, size=(tasks, 10)) / 3
    credit = rng.random((tasks, 6)) - rng.random((tasks, 6))
    d = np.column_stack([thirds, credit])
    d[:, 1] = np.where(np.arange(tasks) % 2, 1 / 3, -1 / 3)  # mean 0 for an even count
    many = _assert_each_column_is_paired_tests(d)
    assert many.exact.all()
    # a column of thirds may hold only -1, 0 and 1 (McNemar's); the mean-0 one and credit do not
    assert not many.mcnemar[[1, *range(10, 16)]].any()


@pytest.mark.parametrize(("tasks", "seed"), [(EXACT_UP_TO + 1, 0), (60, 4), (500, 9)])
def test_random_sign_patterns_above_the_threshold(tasks: int, seed: int) -> None:
    rng = np.random.default_rng(tasks)
    passes = rng.integers(0, 4, size=(tasks, 8))
    thirds = (passes - rng.integers(0, 4, size=(tasks, 8))) / 3
    credit = rng.random((tasks, 4)) - rng.random((tasks, 4))
    # as many passes in another order: a mean of 0 held as a few 1e-18
    level = passes[:, :1] / 3 - rng.permutation(passes[:, 0])[:, None] / 3
    d = np.column_stack([thirds, credit, level, np.full(tasks, 0.5)])
    many = _assert_each_column_is_paired_tests(d, resamples=2000, seed=seed)
    assert not many.exact.any()


@pytest.mark.parametrize("seed", range(8))
def test_the_redraws_near_the_level_are_paired_tests(seed: int) -> None:
    # near the level, some columns draw 10 and 100 times the patterns, others (far) do not; every
    # column ends where paired_test ends for it
    near = np.array(NEAR, dtype=float).T / 3
    far = np.random.default_rng(seed).integers(-1, 2, size=(20, 2)) / 3 + 0.8
    many = _assert_each_column_is_paired_tests(np.column_stack([near, far]), seed=seed)
    assert set(many.resamples[:2].tolist()) <= {10_000, 100_000, 1_000_000}
    assert many.resamples[2:].tolist() == [10_000, 10_000]


def test_some_seed_draws_a_hundred_times_the_patterns() -> None:
    # the redraw ladder's rungs are reached (by the seeds of the test above, with these vectors):
    # so the equality above covers the counts of every rung
    near = np.array(NEAR, dtype=float).T / 3
    counts = {
        int(n) for seed in range(8) for n in paired_p_values(near, seed=seed).resamples.tolist()
    }
    assert {100_000, 1_000_000} <= counts


def test_the_level_and_the_words() -> None:
    d = np.column_stack([np.ones(30), np.r_[np.ones(20) / 3, np.zeros(10)]])
    many = paired_p_values(d, confidence=0.9, resamples=500, seed=2)
    assert many.alpha == 0.1
    assert many.method(0) == "mid-p McNemar test"
    assert many.method(1) == "sign-flip test, 500 random sign patterns"
    few = paired_p_values(np.full((5, 1), 0.5))
    assert few.method(0) == "sign-flip test over every sign pattern"
    assert few.p_value[0] == 1 / 32  # one of 2^5 patterns reaches the observed mean: half of it


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(ArgumentError, match="tasks x comparisons") as info:
        paired_p_values([1.0, 0.0])
    assert info.value.argument == "differences"
    with pytest.raises(ArgumentError, match="finite"):
        paired_p_values([[1.0], [math.nan]])
    with pytest.raises(ArgumentError, match="non-empty"):
        paired_p_values(np.zeros((0, 3)))
    with pytest.raises(ArgumentError, match="confidence"):
        paired_p_values(np.zeros((3, 3)), confidence=1.0)
    with pytest.raises(ArgumentError, match="resamples"):
        paired_p_values(np.zeros((3, 3)), resamples=1)


@pytest.mark.parametrize(
    ("t", "resamples", "seed"),
    [(1, 5, 0), (3, 7, 1), (17, 10_000, 3), (333, 20_001, 5), (500, 100_000, 4)],
)
def test_the_random_patterns_are_numpys_int8_draws(t: int, resamples: int, seed: int) -> None:
    # the patterns as paired_test documents them: default_rng(seed).integers(0, 2, (rows, t),
    # int8) per block of 2^22 // t rows (333 tasks: blocks end inside a 32-bit word, and after
    # an odd number of them, inside a 64-bit output)
    from trialbook.stats import _sign_patterns

    assert _sign_patterns.raw_bits_agree()  # the quick reader of the raw stream is the one in use
    rng = np.random.default_rng(seed)
    batch = max(1, (1 << 22) // t)
    got = list(_sign_patterns.bit_blocks(t, resamples, seed))
    assert len(got) == -(-resamples // batch)
    for start, block in zip(range(0, resamples, batch), got, strict=True):
        expected = rng.integers(0, 2, size=(min(batch, resamples - start), t), dtype=np.int8)
        assert np.array_equal(block, expected)


def test_numpys_own_draws_give_the_same_p_values(monkeypatch: pytest.MonkeyPatch) -> None:
    # where the raw stream could not be read as numpy draws, numpy draws them itself
    from trialbook.stats import _sign_patterns

    d = np.column_stack([np.array(NEAR, dtype=float).T / 3, np.linspace(-0.5, 0.9, 20)])
    quick = paired_p_values(d, resamples=3000, seed=5)
    monkeypatch.setattr(_sign_patterns, "raw_bits_agree", lambda: False)
    slow = paired_p_values(d, resamples=3000, seed=5)
    assert np.array_equal(quick.p_value, slow.p_value)
    assert np.array_equal(quick.resamples, slow.resamples)


def test_the_order_of_the_tasks_changes_nothing() -> None:
    # a ledger lists tasks in the order their attempts finished: each column is taken sorted, as
    # paired_test takes its vector
    rng = np.random.default_rng(8)
    d = rng.integers(-3, 4, size=(30, 6)) / 3
    first = paired_p_values(d, resamples=2000)
    again = paired_p_values(d[rng.permutation(30)], resamples=2000)
    assert np.array_equal(first.p_value, again.p_value)
    assert np.array_equal(first.estimate, again.estimate)


def test_the_level_given_is_the_level_kept() -> None:
    for confidence in (0.95, 0.9, 0.99, 0.8):
        assert paired_p_values(np.ones((3, 1)), confidence=confidence).confidence == confidence
