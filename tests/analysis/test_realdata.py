"""Our numbers against the publishers' own, on real published results in ../shared/realdata/.

The conversion of each format into ledger rows is written here (the importers issue will own it):
- tau-bench: success is ``1-1e-6 <= reward <= 1+1e-6`` (their run.py); ``trial`` is the attempt index.
- Terminal-Bench: ``trial_name`` ends in ``.<i>-of-<k>``; ``is_resolved`` null counts as a failure (their
  harness does the same).
Neither format records the harness's timeout or an attempt's duration, which our ledger requires; the
tests fill ``timeout_s = 1e9`` and ``elapsed_s = 0`` and say so, since no assertion here depends on them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_path, write_jsonl
from trialbook import ScoreOptions, score_file

PLACEHOLDER = {"timeout_s": 1e9, "elapsed_s": 0.0, "helper_calls": 0, "oracle_leak": False}


def test_tau_bench_gpt4o_airline_pass_hat_k(tmp_path: Path) -> None:
    data = json.loads(shared_path("realdata", "tau-bench", "gpt-4o-airline.json").read_text())
    trials = len({r["trial"] for r in data})
    rows = [
        {
            "task_id": str(r["task_id"]),
            "attempt_index": r["trial"],
            "k_budget": trials,
            "passed": 1 - 1e-6 <= r["reward"] <= 1 + 1e-6,
            "timed_out": False,
            **PLACEHOLDER,
        }
        for r in data
    ]
    report = score_file(write_jsonl(tmp_path / "tau.jsonl", rows))
    (run,) = report.runs
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


TRIAL = re.compile(r"\.(\d+)-of-(\d+)(?:\.|$)")


def _tb_rows(
    results: list[dict[str, Any]], run_id: str, attempt_from_name: bool
) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        m = TRIAL.search(r["trial_name"])
        assert m, r["trial_name"]
        rows.append(
            {
                "run_id": run_id,
                "task_id": r["task_id"],
                "attempt_index": int(m.group(1)) - 1 if attempt_from_name else 0,
                "k_budget": int(m.group(2)),
                "passed": r["is_resolved"] is True,
                "timed_out": False,
                "tokens_in": r.get("total_input_tokens"),
                "tokens_out": r.get("total_output_tokens"),
                **PLACEHOLDER,
            }
        )
    return rows


@pytest.mark.parametrize(
    "folder",
    [
        "20250902_orchestrator_claude-4-sonnet",
        "20250902_orchestrator_qwen-3-coder-480B",
        "20250906_orchestrator_claude-4.1-opus",
    ],
)
def test_terminal_bench_stored_pass_at_k_and_accuracy(tmp_path: Path, folder: str) -> None:
    doc = json.loads(shared_path("realdata", "terminal-bench", folder, "results.json").read_text())
    rows = _tb_rows(doc["results"], folder, attempt_from_name=True)
    ks = tuple(int(k) for k in doc["pass_at_k"])
    (run,) = score_file(
        write_jsonl(tmp_path / "tb.jsonl", rows), options=ScoreOptions(ks=(1, *ks))
    ).runs
    assert (run.tasks, run.attempts) == (80, 400)
    for k in ks:
        assert run.metrics[f"pass@{k}"].estimate == pytest.approx(
            doc["pass_at_k"][str(k)], abs=1e-9
        )
    # the harness's accuracy is resolved trials / all trials: our pooled attempt rate (and, with every
    # task tried 5 times, pass@1)
    assert run.pooled_attempt_rate.estimate == pytest.approx(doc["accuracy"], abs=1e-9)
    assert run.metrics["pass@1"].estimate == pytest.approx(doc["accuracy"], abs=1e-9)


def test_terminal_bench_droid_five_single_attempt_runs(tmp_path: Path) -> None:
    folder = "20250923_droid_claude-4-1-opus"
    rows: list[dict[str, Any]] = []
    per_run: dict[str, float] = {}
    for i in range(1, 6):
        doc = json.loads(
            shared_path(
                "realdata", "terminal-bench", folder, f"tb_rc2_opus_{i}_results.json"
            ).read_text()
        )
        run_rows = _tb_rows(doc["results"], f"opus-{i}", attempt_from_name=False)
        for r in run_rows:
            r["system"] = "droid-opus"
        rows += run_rows
        per_run[f"opus-{i}"] = doc["accuracy"]
    report = score_file(write_jsonl(tmp_path / "runs.jsonl", rows))
    # realdata README: per-run accuracies 0.6, 0.5625, 0.6125, 0.575, 0.5875
    assert {r.run_id: r.metrics["pass@1"].estimate for r in report.runs} == pytest.approx(per_run)
    assert sorted(per_run.values()) == pytest.approx([0.5625, 0.575, 0.5875, 0.6, 0.6125])
    (spread,) = report.across_runs
    assert spread.runs == 5
    assert spread.median == pytest.approx(0.5875, abs=1e-12)  # the submitter's published 58.75%

    # pooled as 5 attempts per task: accuracy 0.5875, pass@2 0.6475, pass@4 0.6825, pass@5 0.6875
    pooled = []
    for r in rows:
        pooled.append(
            {**r, "run_id": "pooled", "attempt_index": int(r["run_id"][-1]) - 1, "k_budget": 5}
        )
    (run,) = score_file(write_jsonl(tmp_path / "pooled.jsonl", pooled)).runs
    expected = {"pass@1": 0.5875, "pass@2": 0.6475, "pass@4": 0.6825, "pass@5": 0.6875}
    for name, value in expected.items():
        assert run.metrics[name].estimate == pytest.approx(value, abs=1e-9), name
