"""The board: score's interval per system, compare's p-value per pair, the frontier and the costs,
the four SWE-bench Verified systems of ../shared/realdata, and the bad input it refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import base_row, shared_path, write_jsonl
from trialbook.analysis import (
    BoardOptions,
    CompareOptions,
    ScoreOptions,
    board_runs,
    compare_runs,
    score_ledger,
)
from trialbook.errors import ArgumentError
from trialbook.importers import read_source
from trialbook.ledger import read_ledger

RATES = {"alpha": 0.75, "beta": 0.6, "gamma": 0.55, "delta": 0.3}


def _rows(
    rates: dict[str, float],
    *,
    tasks: int = 30,
    k: int = 3,
    seed: int = 0,
    cost: dict[str, float | None] | None = None,
    extra: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    rows = []
    for run, p in rates.items():
        per_attempt = None if cost is None else cost.get(run, 1.0)
        for t in range(tasks):
            for a in range(k):
                ok = bool(rng.random() < p)
                row = base_row(
                    f"task-{t:03d}",
                    a,
                    passed=ok,
                    k=k,
                    run_id=run,
                    system=f"system {run}",
                    dataset_id="suite-1",
                    status="passed" if ok else "failed",
                    **(extra or {}).get(run, {}),
                )
                if per_attempt is not None:
                    row["cost"] = round(per_attempt * rng.uniform(0.5, 1.5), 6)
                rows.append(row)
    return rows


def _ledger(tmp_path: Path, rows: list[dict[str, Any]], name: str = "board.jsonl") -> Path:
    return write_jsonl(tmp_path / name, rows)


@pytest.mark.parametrize(
    ("k", "metric", "tasks"), [(3, "pass@1", 30), (1, "pass@1", 60), (3, "pass^2", 12)]
)
def test_each_pair_p_value_is_compares(tmp_path: Path, k: int, metric: str, tasks: int) -> None:
    # three designs: random sign patterns (30 tasks, fractions), McNemar (single attempts), and
    # every sign pattern enumerated (12 tasks)
    path = _ledger(tmp_path, _rows(RATES, k=k, tasks=tasks, seed=k))
    board = board_runs([path], BoardOptions(metric=metric, resamples=4000, seed=11))
    assert len(board.pairs) == 6
    for pair in board.pairs:
        # the pair's difference is a - b: compare with b as the baseline and a as the candidate
        c = compare_runs(
            f"{path}:{pair.b}",
            f"{path}:{pair.a}",
            CompareOptions(metric=metric, resamples=4000, seed=11),
        )
        assert pair.p_value == c.p_value  # the same number: the board tests pairs in a batch
        assert pair.p_value_mc_se == c.p_value_mc_se  # None where exact (McNemar, 12 tasks)
        # compare's words are the test's, then its interval's (the board draws no interval)
        assert c.ci_method.startswith(pair.method + "; ")
        assert pair.difference == pytest.approx(c.difference.estimate, abs=1e-12)
        if k == 1:
            assert pair.mcnemar is not None
            assert c.mcnemar is not None
            assert pair.mcnemar.only_candidate == c.mcnemar.only_candidate
            assert pair.mcnemar.only_baseline == c.mcnemar.only_baseline
            assert (pair.mcnemar.both, pair.mcnemar.neither) == (c.mcnemar.both, c.mcnemar.neither)
            assert pair.mcnemar.p_value == c.mcnemar.p_value
            assert pair.mcnemar.exact_p_value == c.mcnemar.exact_p_value


def test_each_system_metric_is_scores(tmp_path: Path) -> None:
    path = _ledger(tmp_path, _rows(RATES))
    for method in ("wilson", "percentile"):
        board = board_runs([path], BoardOptions(method=method, resamples=3000, seed=4))
        scored = score_ledger(
            read_ledger(path), options=ScoreOptions(ks=(1,), method=method, resamples=3000, seed=4)
        )
        by_run = {r.run_id: r.metrics["pass@1"] for r in scored.runs}
        for s in board.systems:
            assert s.metric == by_run[s.run_id]
            assert s.tasks == 30
            assert s.attempts == 90


def test_holm_adjusts_over_every_pair_and_decides_the_ranks(tmp_path: Path) -> None:
    from statsmodels.stats.multitest import multipletests

    path = _ledger(tmp_path, _rows(RATES, tasks=80))
    board = board_runs([path], BoardOptions(resamples=4000))
    raw = [p.p_value for p in board.pairs]
    reject, expected, _, _ = multipletests(raw, alpha=0.05, method="holm")
    assert [p.p_adjusted for p in board.pairs] == pytest.approx(list(expected), abs=1e-15)
    decided = {(p.a, p.b) for p in board.pairs if p.decision == "a better"}
    assert len(decided) == int(reject.sum())  # a is ranked above b: never "b better" here
    for s in board.systems:
        above = sum((o.run_id, s.run_id) in decided for o in board.systems)
        below = sum((s.run_id, o.run_id) in decided for o in board.systems)
        assert (s.rank_low, s.rank_high) == (1 + above, len(board.systems) - below)
    assert [s.run_id for s in board.leaders] == [s.run_id for s in board.systems if s.rank_low == 1]


def test_costs_frontier_and_dominance(tmp_path: Path) -> None:
    # omega: worse than alpha by far and three times its cost on every attempt (dominated with
    # confidence); delta: cheapest (on the frontier); gamma and beta close, same cost
    rates = {**RATES, "omega": 0.2}
    cost: dict[str, float | None] = {"alpha": 1.0, "beta": 0.5, "gamma": 0.5, "delta": 0.1}
    cost["omega"] = 3.0
    rows = _rows(rates, tasks=80, cost=cost)
    path = _ledger(tmp_path, rows)
    board = board_runs([path], BoardOptions(resamples=4000))
    by = {s.run_id: s for s in board.systems}
    for run in rates:
        mine = [r for r in rows if r["run_id"] == run]
        # cost per task: every attempt's cost over the tasks
        assert by[run].cost == pytest.approx(sum(r["cost"] for r in mine) / 80, rel=1e-12)
        low, high = by[run].cost_low, by[run].cost_high
        assert low is not None
        assert high is not None
        assert low < by[run].cost < high
    assert by["omega"].frontier == "dominated"
    assert "alpha" in by["omega"].dominated_by
    assert by["delta"].frontier == "on"
    assert by["alpha"].frontier == "on"

    per_success = board_runs([path], BoardOptions(cost="per-success", resamples=2000))
    for s in per_success.systems:
        mine = [r for r in rows if r["run_id"] == s.run_id]
        solved = {r["task_id"] for r in mine if r["passed"]}
        assert s.cost == pytest.approx(sum(r["cost"] for r in mine) / len(solved), rel=1e-12)


def test_a_system_without_cost_is_ranked_but_off_the_cost_axis(tmp_path: Path) -> None:
    rows = _rows(RATES, cost={"alpha": 1.0, "beta": 0.5, "gamma": 0.5, "delta": 0.1})
    for r in rows:
        if r["run_id"] == "beta":
            del r["cost"]
        elif r["run_id"] == "gamma" and r["task_id"] == "task-003":
            del r["cost"]  # measured on all but three attempts: not measured as a whole
    board = board_runs([_ledger(tmp_path, rows)], BoardOptions(resamples=2000))
    by = {s.run_id: s for s in board.systems}
    assert by["beta"].cost is None
    assert by["beta"].frontier is None
    assert by["beta"].cost_note == "cost not measured"
    assert by["gamma"].cost is None
    assert by["gamma"].cost_note == "cost not measured on 3 of 90 attempts"
    assert by["alpha"].cost is not None
    assert by["alpha"].frontier in ("on", "off")
    assert any("off the cost axis" in n and "beta" in n and "gamma" in n for n in board.notes)
    assert {s.run_id for s in board.no_cost} == {"beta", "gamma"}


def test_mean_score_is_scores_mean_partial_credit(tmp_path: Path) -> None:
    rows = _rows(RATES)
    rng = np.random.default_rng(9)
    for r in rows:
        r["score"] = 1.0 if r["passed"] else round(float(rng.uniform(0, 0.9)), 3)
    path = _ledger(tmp_path, rows)
    board = board_runs([path], BoardOptions(metric="mean-score", resamples=2000))
    scored = score_ledger(read_ledger(path), options=ScoreOptions(ks=(1,), resamples=2000))
    by_run = {r.run_id: r.mean_score for r in scored.runs}
    for s in board.systems:
        assert s.metric == by_run[s.run_id]


def test_runs_on_different_suites_need_the_flag_and_rank_the_shared_tasks(tmp_path: Path) -> None:
    a = _rows({"alpha": 0.7, "beta": 0.5}, tasks=20)
    b = _rows({"gamma": 0.6}, tasks=25, seed=3)
    for r in b:
        r["dataset_id"] = "suite-2"
    path = _ledger(tmp_path, a + b)
    with pytest.raises(ArgumentError, match=r"different suites.*--allow-different-suites"):
        board_runs([path])
    board = board_runs([path], BoardOptions(allow_different_suites=True, resamples=2000))
    assert board.tasks == 20
    assert board.notes[0].startswith("NOT THE SAME SUITE")
    assert any("dropped: gamma 5" in n for n in board.notes)
    assert all(s.tasks == 20 and s.attempts == 60 for s in board.systems)


def test_bad_input(tmp_path: Path) -> None:
    one = _ledger(tmp_path, _rows({"alpha": 0.5}), "one.jsonl")
    with pytest.raises(ArgumentError, match="at least two runs; the ledgers given hold 1"):
        board_runs([one])
    rows = _rows(RATES, extra={"delta": {"protocol": "repair"}})
    path = _ledger(tmp_path, rows)
    with pytest.raises(ArgumentError, match="'delta' is a repair run"):
        board_runs([path])
    path = _ledger(tmp_path, _rows(RATES), "four.jsonl")
    with pytest.raises(ArgumentError, match="run given twice: 'beta'") as info:
        board_runs([path], runs=["alpha", "beta", "beta"])
    assert info.value.argument == "runs"
    with pytest.raises(ArgumentError, match="not in the ledgers given: 'zeta'"):
        board_runs([path], runs=["alpha", "zeta"])
    other = _ledger(tmp_path, _rows({"alpha": 0.5}), "other.jsonl")
    with pytest.raises(ArgumentError, match="'alpha' is in both"):
        board_runs([path, other])
    with pytest.raises(ArgumentError, match="metric must be pass@K, pass\\^K or mean-score"):
        BoardOptions(metric="within@2")
    with pytest.raises(ArgumentError, match="mean-score needs a partial-credit"):
        board_runs([path], BoardOptions(metric="mean-score"))


def test_the_four_swe_bench_verified_systems_match_the_readme() -> None:
    # ../shared/realdata/README.md, "swe-bench-verified": 338, 330, 325 and 324 resolved of 500;
    # McNemar tables of claude-4-opus against each other and statsmodels' exact p-values
    path = shared_path("realdata", "swe-bench-verified", "mini-swe-agent-4-systems.json")
    board = board_runs([path], read=lambda p: read_source([p], "swe-bench"))
    doc = json.loads(path.read_text())
    key = {name.split("_", 2)[2]: name for name in doc}
    opus = key["claude-4-opus-20250514"]
    order = [opus, key["gpt-5.1-codex"], key["gpt-5"], key["claude-sonnet-4-20250514"]]
    assert [s.run_id for s in board.systems] == order
    assert [s.metric.estimate for s in board.systems] == [0.676, 0.66, 0.65, 0.648]
    assert [s.rank for s in board.systems] == [1, 2, 3, 4]
    assert all(s.cost is None and s.cost_note == "cost not measured" for s in board.systems)
    assert all(s.tasks == 500 for s in board.systems)
    pairs = {(p.a, p.b): p for p in board.pairs}
    for other, (both, first, second, neither, exact) in {
        order[1]: (296, 42, 34, 128, 0.422191),
        order[2]: (296, 42, 29, 133, 0.153913),
        order[3]: (296, 42, 28, 134, 0.119609),
    }.items():
        m = pairs[(opus, other)].mcnemar
        assert m is not None
        # a (opus) is the candidate: only_candidate is "only first" in the README
        assert (m.both, m.only_candidate, m.only_baseline, m.neither) == (
            both,
            first,
            second,
            neither,
        )
        assert m.exact_p_value == pytest.approx(exact, abs=5e-7)
    # no pair is separated at 95% after Holm: all four lead
    assert len(board.leaders) == 4


def test_equal_estimates_tie_even_when_their_last_bits_differ(tmp_path: Path) -> None:
    # beta and gamma pass 95 of 180 attempts each, on different tasks: score's means come out
    # 0.5277777777777776 and 0.5277777777777779. Equal counts are a tie: one shared rank, and the
    # cheaper of the two (beta) beats the other on cost at an equal metric
    rows = _rows(RATES, tasks=60, cost={"alpha": 1.0, "beta": 0.5, "gamma": 0.6, "delta": 0.1})
    board = board_runs([_ledger(tmp_path, rows)], BoardOptions(resamples=2000, seed=3))
    by = {s.run_id: s for s in board.systems}
    passes = {r: sum(x["passed"] for x in rows if x["run_id"] == r) for r in ("beta", "gamma")}
    assert passes == {"beta": 95, "gamma": 95}
    assert by["beta"].rank == by["gamma"].rank == 2
    assert [s.run_id for s in board.systems][1:3] == ["beta", "gamma"]  # by run id within a tie
    assert by["beta"].frontier == "on"
    assert by["gamma"].frontier == "off"


def test_a_run_id_with_a_colon_is_ranked_as_itself(tmp_path: Path) -> None:
    # a run id is the ledger's text: "org:model:v2" or a URL is read as that run, never split
    # as LEDGER:RUN at one of its colons
    names = {"alpha": "org:alpha:v2", "beta": "https://e.example/beta"}
    rows = _rows({"alpha": 0.7, "beta": 0.4}, tasks=20)
    for r in rows:
        r["run_id"] = names[r["run_id"]]
    board = board_runs([_ledger(tmp_path, rows)], BoardOptions(resamples=1000))
    assert {s.run_id for s in board.systems} == set(names.values())
