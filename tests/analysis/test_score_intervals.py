"""A score's interval stays honest at the edges: all-pass, all-fail, one task, tiny strata."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from tests.conftest import matrix_rows
from trialbook.analysis import ScoreOptions, score_ledger
from trialbook.ledger import ledger_from_rows
from trialbook.stats import wilson_task_interval


def _score(successes: dict[str, list[int]], **options: object) -> object:
    ledger = ledger_from_rows(matrix_rows(successes), "t.jsonl", "r")
    return score_ledger(ledger, options=ScoreOptions(**options)).runs[0]  # type: ignore[arg-type]


def test_an_all_pass_run_gets_the_binomial_bound_on_tasks() -> None:
    # first principles: with T of T tasks passing, Clopper-Pearson's lower bound is (alpha/2)^(1/T)
    run = _score({f"t{i}": [1] * 5 for i in range(20)})
    m = run.metrics["pass@1"]  # type: ignore[attr-defined]
    assert (m.ci_low, m.ci_high) == pytest.approx((0.025 ** (1 / 20), 1.0), abs=1e-9)
    assert m.ci_low == pytest.approx(0.8316, abs=1e-4)
    fail = _score({f"t{i}": [0] * 5 for i in range(20)}).metrics["pass@1"]  # type: ignore[attr-defined]
    assert (fail.ci_low, fail.ci_high) == pytest.approx((0.0, 1 - 0.025 ** (1 / 20)), abs=1e-9)


def test_one_task_is_not_a_zero_width_interval() -> None:
    run = _score({"only": [1, 0, 0, 0, 0]})
    m = run.metrics["pass@1"]  # type: ignore[attr-defined]
    assert m.ci_low < 0.2 < m.ci_high
    assert m.ci_high - m.ci_low > 0.5
    assert any("too few tasks for a reliable interval" in n for n in run.notes)  # type: ignore[attr-defined]


def test_a_stratum_of_two_tasks_is_not_the_range_of_its_two_values() -> None:
    rows = matrix_rows({"a": [1, 1, 1, 1, 0], "b": [1, 1, 1, 1, 1]}, stratum="repair")
    rows += matrix_rows({f"c{i}": [i % 2] * 5 for i in range(10)}, stratum="other")
    run = score_ledger(ledger_from_rows(rows, "s.jsonl", "r")).runs[0]
    repair = next(s for s in run.strata if s.stratum == "repair").metrics["pass@1"]
    assert repair.ci_low < 0.8  # the lower task value is 0.8: the interval reaches beyond it
    assert any("stratum(s) repair" in n for n in run.notes)


def test_binary_task_values_give_wilsons_interval_over_t_minus_1_tasks() -> None:
    # per-task values 0/1: the task-clustered SE^2 is m(1-m)/(T-1), so the effective number of
    # tasks is T - 1 and the interval is Wilson's for m of T - 1 (statsmodels computes it here)
    values = np.array([1.0] * 13 + [0.0] * 7)
    low, high = wilson_task_interval(values)
    ref = proportion_confint(13 / 20 * 19, 19, alpha=0.05, method="wilson")
    assert (low[0], high[0]) == pytest.approx(ref, abs=1e-12)


def test_the_percentile_bootstrap_can_still_be_asked_for() -> None:
    run = _score({f"t{i}": [1] * 5 for i in range(20)}, method="percentile")
    m = run.metrics["pass@1"]  # type: ignore[attr-defined]
    assert (m.ci_low, m.ci_high) == (1.0, 1.0)  # what the bootstrap says; wilson is the default
    assert run.interval_method == "percentile"  # type: ignore[attr-defined]


def test_partial_credit_is_reported_as_a_mean_score() -> None:
    # a task scored 0.9 on every attempt fails every attempt (passed is the grader's verdict) but
    # earns 0.9: first principles, the mean over tasks of per-task means, (0.9 + 0.5) / 2
    rows = [dict(r, score=0.9) for r in matrix_rows({"a": [0, 0, 0]})]
    rows += [dict(r, score=float(r["passed"])) for r in matrix_rows({"b": [1, 0, 1, 0][:3]})]
    rows[-1]["score"] = 0.5 - 1 / 6  # b: 1, 0, 1/3 -> mean 4/9
    run = score_ledger(ledger_from_rows(rows, "p.jsonl", "r")).runs[0]
    assert run.metrics["pass@1"].estimate == pytest.approx((0 + 2 / 3) / 2)
    assert run.mean_score is not None
    assert run.mean_score.estimate == pytest.approx((0.9 + (1 + 0 + 1 / 3) / 3) / 2)
    assert run.mean_score.ci_low <= run.mean_score.estimate <= run.mean_score.ci_high
    partial = [
        dict(r, score=0.9) if r["task_id"] == "a" else r for r in matrix_rows({"a": [0], "b": [1]})
    ]
    run = score_ledger(ledger_from_rows(partial, "q.jsonl", "r")).runs[0]
    assert run.mean_score is None
    assert any("recorded on 1 of 2 attempts" in n for n in run.notes)


def test_the_json_carries_the_mean_score() -> None:
    from trialbook.report import score_to_dict

    rows = [dict(r, score=0.25) for r in matrix_rows({"a": [0, 0], "b": [0, 0]})]
    doc = score_to_dict(score_ledger(ledger_from_rows(rows, "p.jsonl", "r")))
    assert doc["runs"][0]["mean_score"]["estimate"] == pytest.approx(0.25)
    plain = score_to_dict(score_ledger(ledger_from_rows(matrix_rows({"a": [1]}), "q.jsonl", "r")))
    assert plain["runs"][0]["mean_score"] is None


def test_a_tiny_task_spread_buys_no_more_than_independent_attempts() -> None:
    # nine tasks at 1 of 2 and one at 2 of 2: the task SE is small, but 20 attempts cannot say more
    # than 20 independent outcomes would: the interval is at least Wilson's for 11 of 20
    rows = {f"t{i}": [1, 0] for i in range(9)} | {"t9": [1, 1]}
    run = _score(rows)
    m = run.metrics["pass@1"]  # type: ignore[attr-defined]
    ref_low, ref_high = proportion_confint(0.55 * 20, 20, alpha=0.05, method="wilson")
    assert m.ci_low <= ref_low + 1e-12
    assert m.ci_high >= ref_high - 1e-12
