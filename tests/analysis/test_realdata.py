"""Our numbers against the publishers' own, on real published results in ../shared/realdata/.

The files are read by the importers (trialbook.importers), unchanged, with nothing invented: every
expected value below is the publisher's (quoted from ../shared/realdata/README.md, where each is
traced to the publisher's code or page) or derived from it in the comment beside it.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.conftest import shared_path
from tests.importers.conftest import need_inspect
from trialbook import ScoreOptions, compare_runs, score_ledger
from trialbook.importers import ImportOptions, read_source


def test_tau_bench_gpt4o_airline_pass_hat_k() -> None:
    ledger = read_source([shared_path("realdata", "tau-bench", "gpt-4o-airline.json")], "tau-bench")
    (run,) = score_ledger(ledger).runs
    assert (run.tasks, run.attempts) == (50, 200)
    # publisher's display_metrics on this file: pass^1..4 = 0.42, 0.273333..., 0.22, 0.20
    # (0.273333... is 41/150: 50 tasks, and sum of C(c,2)/C(4,2) over tasks = 41/3)
    published = {"pass^1": 0.42, "pass^2": 41 / 150, "pass^3": 0.22, "pass^4": 0.20}
    for name, value in published.items():
        assert run.metrics[name].estimate == pytest.approx(value, abs=1e-9), name
    # realdata README, standard estimator: pass@2 = 0.566667, pass@4 = 0.72 (printed to 6 digits)
    assert run.metrics["pass@2"].estimate == pytest.approx(0.566667, abs=5e-7)
    assert run.metrics["pass@4"].estimate == pytest.approx(0.72, abs=1e-9)
    counts = sorted(t.passes for t in run.per_task)
    assert [counts.count(c) for c in range(5)] == [14, 12, 10, 4, 10]
    # the average reward 0.42 (display_metrics) is our mean partial credit: rewards are 0 or 1
    assert run.mean_score is not None
    assert run.mean_score.estimate == pytest.approx(0.42, abs=1e-9)
    # nothing invented: tau-bench records no timeout, duration or helper calls
    assert set(run.not_recorded) == {
        "timeout_s",
        "elapsed_s",
        "timed_out",
        "helper_calls",
        "oracle_leak",
    }
    assert all(v == 200 for v in run.not_recorded.values())
    assert math.isnan(run.effort.timeout_rate)
    assert math.isnan(run.effort.mean_elapsed_s)
    assert all(t.timeouts is None for t in run.per_task)


TB_FOLDERS = [
    "20250902_orchestrator_claude-4-sonnet",
    "20250902_orchestrator_qwen-3-coder-480B",
    "20250906_orchestrator_claude-4.1-opus",
]


@pytest.mark.parametrize("folder", TB_FOLDERS)
def test_terminal_bench_stored_pass_at_k_and_accuracy(folder: str) -> None:
    path = shared_path("realdata", "terminal-bench", folder, "results.json")
    doc = json.loads(path.read_text())  # the harness's own stored figures, read for the expectation
    ks = tuple(int(k) for k in doc["pass_at_k"])
    ledger = read_source([path])  # detected: a Terminal-Bench results.json
    (run,) = score_ledger(ledger, options=ScoreOptions(ks=(1, *ks))).runs
    assert run.run_id == folder
    assert (run.tasks, run.attempts) == (80, 400)
    for k in ks:
        assert run.metrics[f"pass@{k}"].estimate == pytest.approx(
            doc["pass_at_k"][str(k)], abs=1e-9
        )
    # the harness's accuracy is resolved trials / all trials: our pooled attempt rate (and, with every
    # task tried 5 times, pass@1)
    assert run.pooled_attempt_rate.estimate == pytest.approx(doc["accuracy"], abs=1e-9)
    assert run.metrics["pass@1"].estimate == pytest.approx(doc["accuracy"], abs=1e-9)
    # agent_timeout trials that passed are kept as passes after timeout (counted from the file)
    after = sum(
        1 for r in doc["results"] if r["failure_mode"] == "agent_timeout" and r["is_resolved"]
    )
    assert run.passes_after_timeout == after
    assert "timeout_s" in run.not_recorded
    assert "timed_out" not in run.not_recorded


def test_terminal_bench_droid_five_single_attempt_runs() -> None:
    folder = "20250923_droid_claude-4-1-opus"
    files = [
        shared_path("realdata", "terminal-bench", folder, f"tb_rc2_opus_{i}_results.json")
        for i in range(1, 6)
    ]
    # each file alone: realdata README per-run accuracies 0.6, 0.5625, 0.6125, 0.575, 0.5875
    per_run = [
        score_ledger(read_source([f], "terminal-bench")).runs[0].metrics["pass@1"].estimate
        for f in files
    ]
    assert per_run == pytest.approx([0.6, 0.5625, 0.6125, 0.575, 0.5875], abs=1e-12)
    assert sorted(per_run)[2] == pytest.approx(0.5875, abs=1e-12)  # the submitter's 58.75%

    # pooled as 5 attempts per task (in the order given): accuracy 0.5875, pass@2 0.6475,
    # pass@4 0.6825, pass@5 0.6875
    (run,) = score_ledger(read_source(files, "terminal-bench")).runs
    assert (run.tasks, run.attempts) == (80, 400)
    expected = {"pass@1": 0.5875, "pass@2": 0.6475, "pass@4": 0.6825, "pass@5": 0.6875}
    for name, value in expected.items():
        assert run.metrics[name].estimate == pytest.approx(value, abs=1e-9), name
    # the droid files record every trial's agent start and end: elapsed is recorded, tokens of 0 not
    assert "elapsed_s" not in run.not_recorded
    # --as-attempts runs orders by the runs' recorded starts: same pooled figures (pass@k depends
    # only on each task's count of passes)
    (by_start,) = score_ledger(
        read_source(files[::-1], "terminal-bench", ImportOptions(as_attempts="runs"))
    ).runs
    assert by_start.metrics["pass@2"].estimate == pytest.approx(0.6475, abs=1e-9)


def test_inspect_reducers_through_the_importer() -> None:
    need_inspect()
    path = shared_path("realdata", "inspect", "flaky_20x5.eval")
    (run,) = score_ledger(read_source([path])).runs
    assert (run.tasks, run.attempts) == (20, 100)
    # Inspect's own reducers over the 20 samples (realdata README): mean 0.58, pass_at_1 0.58,
    # pass_at_3 0.82, pass_k_3 0.34
    assert run.metrics["pass@1"].estimate == pytest.approx(0.58, abs=1e-9)
    assert run.metrics["pass@3"].estimate == pytest.approx(0.82, abs=1e-9)
    assert run.metrics["pass^3"].estimate == pytest.approx(0.34, abs=1e-9)
    assert run.mean_score is not None
    assert run.mean_score.estimate == pytest.approx(0.58, abs=1e-9)
    # the log's time_limit=60 (flaky_task.py) is the timeout; tokens 12 in / 3 out per sample
    # (its mock output), and Inspect priced nothing: cost not measured
    assert "timeout_s" not in run.not_recorded
    assert "elapsed_s" not in run.not_recorded
    assert run.cost.tokens_in.value == 12 * 100
    assert run.cost.tokens_out.value == 3 * 100
    assert run.cost.total_cost.value is None
    assert run.cost.total_cost.known_attempts == 0


SWE = ("realdata", "swe-bench-verified", "mini-swe-agent-4-systems.json")
OPUS = "20250802_mini-v1.0.0_claude-4-opus-20250514"


@pytest.mark.parametrize(
    ("other", "table", "exact_p"),
    [
        # realdata README (statsmodels mcnemar(exact=True)): both / only first / only second / neither
        ("20251124_mini-v1.16.0_gpt-5.1-codex", (296, 42, 34, 128), 0.422191),
        ("20250807_mini-v1.7.0_gpt-5", (296, 42, 29, 133), 0.153913),
        ("20250726_mini-v1.0.0_claude-sonnet-4-20250514", (296, 42, 28, 134), 0.119609),
    ],
)
def test_swe_bench_mcnemar_tables_through_compare(
    other: str, table: tuple[int, int, int, int], exact_p: float
) -> None:
    path = shared_path(*SWE)
    result = compare_runs(
        f"{path}:{OPUS}", f"{path}:{other}", read=lambda p: read_source([p], "swe-bench")
    )
    assert result.mcnemar is not None
    m = result.mcnemar
    assert (m.both, m.only_baseline, m.only_candidate, m.neither) == table
    assert m.exact_p_value == pytest.approx(exact_p, abs=5e-7)  # printed to 6 digits
    assert result.tasks == 500


def test_swe_bench_ids_not_the_page_percentage() -> None:
    # realdata README: the page reports 64.93% for claude-sonnet-4; its ids give 324/500
    ledger = read_source([shared_path(*SWE)])
    report = score_ledger(ledger, run="20250726_mini-v1.0.0_claude-sonnet-4-20250514")
    (run,) = report.runs
    assert run.metrics["pass@1"].estimate == pytest.approx(324 / 500, abs=1e-12)
    assert any("reports 64.93% resolved" in n and "324/500" in n for n in run.notes)


def test_terminal_bench_droid_pooled_prints_the_publishers_rounding_once() -> None:
    # issue 26 item 6: pooled over the five droid files, pass@1 is the mean of 80 per-task rates
    # (0.5874999999999999 in binary) and the pooled attempt rate 235 / 400 (0.5875): both are the
    # submitter's 58.75%, which rounds half up to 58.8%; the scorecard printed 58.7% beside 58.8%
    from click.testing import CliRunner

    from trialbook.cli import main

    folder = "20250923_droid_claude-4-1-opus"
    files = [
        str(shared_path("realdata", "terminal-bench", folder, f"tb_rc2_opus_{i}_results.json"))
        for i in range(1, 6)
    ]
    result = CliRunner().invoke(
        main, ["score", *files, "--source", "terminal-bench", "--k", "1"], env={"COLUMNS": "100"}
    )
    assert result.exit_code == 0, result.output
    assert "58.7%" not in result.output
    assert "58.8%" in result.output
    assert "the pooled attempt rate equal pass@1 here" in " ".join(result.output.split())
