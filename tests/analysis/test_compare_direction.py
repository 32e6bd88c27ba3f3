"""The direction, the method and the rows of a comparison: what a transposed table, a wrong method
choice or a quarantined row would get wrong (each test was checked to fail on that mutant)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import base_row, write_jsonl
from trialbook.analysis import CompareOptions, compare_runs
from trialbook.errors import InsufficientAttemptsError


def _single(tmp_path: Path, name: str, passes: list[bool], **extra: object) -> Path:
    rows = [base_row(f"t{i:02d}", 0, passed=ok, k=1, **extra) for i, ok in enumerate(passes)]
    return write_jsonl(tmp_path / f"{name}.jsonl", rows)


@pytest.mark.parametrize("direction", ["improvement", "regression"])
def test_a_clear_single_attempt_difference_has_its_sign(tmp_path: Path, direction: str) -> None:
    # 30 tasks; the better side passes 25, the worse 5, every pass of the worse side shared:
    # only the better side passes 20 tasks, the other side none (first principles: +20/30)
    worse = [i < 5 for i in range(30)]
    better = [i < 25 for i in range(30)]
    base, cand = (worse, better) if direction == "improvement" else (better, worse)
    c = compare_runs(str(_single(tmp_path, "a", base)), str(_single(tmp_path, "b", cand)))
    sign = 1 if direction == "improvement" else -1
    assert c.mcnemar is not None
    assert (c.mcnemar.only_baseline, c.mcnemar.only_candidate) == ((0, 20) if sign > 0 else (20, 0))
    assert c.difference.estimate == pytest.approx(sign * 20 / 30)
    assert c.mcnemar.difference == pytest.approx(sign * 20 / 30)
    assert c.ci_low <= sign * 20 / 30 <= c.ci_high
    assert (c.ci_low > 0) if sign > 0 else (c.ci_high < 0)
    assert c.decision == direction
    assert c.candidate.estimate - c.baseline.estimate == pytest.approx(sign * 20 / 30)


def test_a_single_attempt_run_against_a_multi_attempt_run_is_not_a_mcnemar_table(
    tmp_path: Path,
) -> None:
    one = _single(tmp_path, "one", [i % 2 == 0 for i in range(12)])
    rows = [
        base_row(f"t{i:02d}", j, passed=(i + j) % 3 == 0, k=3) for i in range(12) for j in range(3)
    ]
    three = write_jsonl(tmp_path / "three.jsonl", rows)
    for a, b in ((one, three), (three, one)):
        c = compare_runs(str(a), str(b))
        assert c.mcnemar is None
        assert "sign-flip" in c.ci_method
        assert c.p_value is not None
        assert (c.ci_low > 0 or c.ci_high < 0) == (c.p_value < 0.05)


def test_oracle_leak_rows_are_not_compared(tmp_path: Path) -> None:
    # the baseline's only attempt at t00 leaked its oracle (and passed): t00 is not compared
    base_rows = [base_row("t00", 0, passed=True, k=1, oracle_leak=True)]
    base_rows += [base_row(f"t{i:02d}", 0, passed=False, k=1) for i in range(1, 10)]
    base = write_jsonl(tmp_path / "base.jsonl", base_rows)
    cand = _single(tmp_path, "cand", [False] * 10)
    c = compare_runs(str(base), str(cand))
    assert c.tasks == 9
    assert c.dropped_candidate_only == 1
    assert c.baseline.estimate == 0.0
    assert c.mcnemar is not None
    assert c.mcnemar.only_baseline == 0


def test_a_metric_beyond_some_tasks_attempts_names_those_tasks(tmp_path: Path) -> None:
    rows = [base_row("short", j, passed=True, k=3) for j in range(3)]
    rows += [base_row("long", j, passed=j == 0, k=3) for j in range(3)]
    a = write_jsonl(tmp_path / "a.jsonl", rows)
    with pytest.raises(
        InsufficientAttemptsError,
        match=r"pass@4: k=4 exceeds the attempts of 2 task\(s\): 'long' \(n=3\), 'short' \(n=3\)",
    ):
        compare_runs(str(a), str(a), CompareOptions(metric="pass@4"))


def test_a_task_with_one_leaked_attempt_is_not_compared_at_all(tmp_path: Path) -> None:
    # t00's second attempt leaked: its first attempt must not be compared either
    rows = [
        base_row("t00", 0, passed=True, k=2),
        base_row("t00", 1, passed=True, k=2, oracle_leak=True),
    ]
    rows += [base_row(f"t{i:02d}", j, passed=False, k=2) for i in range(1, 8) for j in range(2)]
    base = write_jsonl(tmp_path / "leak.jsonl", rows)
    cand_rows = [base_row(f"t{i:02d}", j, passed=False, k=2) for i in range(8) for j in range(2)]
    cand = write_jsonl(tmp_path / "c.jsonl", cand_rows)
    c = compare_runs(str(base), str(cand))
    assert c.tasks == 7
    assert c.baseline.estimate == 0.0


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 14),
    st.integers(1, 3),
    st.lists(st.integers(0, 3), min_size=28, max_size=28),
    st.lists(st.integers(0, 3), min_size=28, max_size=28),
)
def test_for_random_ledgers_the_decision_is_the_interval_and_the_p_value(
    tasks: int, attempts: int, base: list[int], cand: list[int]
) -> None:
    import tempfile

    def rows(passes: list[int]) -> list[dict[str, object]]:
        return [
            base_row(f"t{i:02d}", j, passed=j < min(passes[i], attempts), k=attempts)
            for i in range(tasks)
            for j in range(attempts)
        ]

    with tempfile.TemporaryDirectory() as tmp:
        a = write_jsonl(Path(tmp) / "a.jsonl", rows(base))
        b = write_jsonl(Path(tmp) / "b.jsonl", rows(cand))
        c = compare_runs(str(a), str(b), CompareOptions(resamples=500))
    assert c.p_value is not None
    excludes = c.ci_low > 0 or c.ci_high < 0
    decided = c.decision in ("improvement", "regression")
    assert decided == (excludes and c.p_value < 0.05)
    if c.decision != "not enough tasks to decide":
        assert excludes == (c.p_value < 0.05)
