"""Harbor job folders, as Harbor 0.25.0 wrote them when run for real (data/harbor/make_fixtures.py),
read as Harbor judges them. Every expected figure comes from data/harbor/harbor_figures.json, which
that script computed with Harbor's own classes (TrialResult.reward_valid, failure_cause,
compute_token_cost_totals, its Mean metric and pass@k) on the same folders; nothing is typed in."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.importers.conftest import run
from trialbook import ScoreOptions, score_ledger
from trialbook.errors import ArgumentError
from trialbook.importers import ImportOptions, detect_source, read_source
from trialbook.importers._base import MAX_SOURCE_BYTES
from trialbook.importers._harbor import _read_job
from trialbook.importers._harbor_rules import HARBOR_TABLE, cause_of, harbor_mean, harbor_pass_at_k
from trialbook.ledger import ledger_rows, read_checks

DATA = Path(__file__).parent / "data" / "harbor"
FIGURES: dict[str, Any] = json.loads((DATA / "harbor_figures.json").read_text())
JOBS = sorted(FIGURES["jobs"])
REWARD = {"scripted-multikey": "correctness"}
"""The key --reward names where the job's verifier records several."""


def rows_of(job: str, **options: Any) -> list[dict[str, Any]]:
    ledger = read_source([DATA / job], options=ImportOptions(reward=REWARD.get(job), **options))
    return list(ledger_rows(ledger))


def harbor_trials(job: str) -> dict[str, Any]:
    trials: dict[str, Any] = FIGURES["jobs"][job]["trials"]
    return trials


def test_the_fixtures_follow_the_table_version() -> None:
    assert FIGURES["harbor_version"] == HARBOR_TABLE


@pytest.mark.parametrize("job", JOBS)
def test_reward_valid_cause_and_usage_are_harbors(job: str) -> None:
    """Our reading of each trial equals Harbor's TrialResult properties on the same file."""
    ours = {t.name: t for t in _read_job(DATA / job, MAX_SOURCE_BYTES).trials}
    theirs = harbor_trials(job)
    assert set(ours) == set(theirs)
    for name, h in theirs.items():
        t = ours[name]
        assert t.reward_valid is h["reward_valid"], name
        assert list(t.exceptions) == h["exception_types"], name
        assert (t.causes[0] if t.causes else None) == h["failure_cause"], name
        usage = [t.usage.tokens_in, t.usage.cache, t.usage.tokens_out, t.usage.cost]
        assert usage == pytest.approx(h["token_cost_totals"]), name


@pytest.mark.parametrize("job", JOBS)
def test_harbors_mean_and_pass_at_k_by_its_rules(job: str) -> None:
    """Our copy of Harbor's rules gives what its Mean metric and pass@k gave, and what the job's
    result.json stores."""
    figures = FIGURES["jobs"][job]
    trials = harbor_trials(job).values()
    mean = harbor_mean([t["rewards"] for t in trials])
    ks = harbor_pass_at_k([(t["task_name"], t["rewards"]) for t in trials])
    assert mean == pytest.approx(figures["mean"])
    assert {str(k): v for k, v in ks.items()} == pytest.approx(figures["pass_at_k"])
    assert figures["stored_metrics"] == [pytest.approx(figures["mean"])]
    assert figures["stored_pass_at_k"] == pytest.approx(figures["pass_at_k"])


@pytest.mark.parametrize("job", JOBS)
def test_our_scorecard_beside_harbors(job: str) -> None:
    """pass@1 is Harbor's mean of the deciding key once partial rewards count 0 (ours passes only
    at 1, Harbor averages the value); pass@k equals Harbor's pass@k wherever Harbor states it; the
    run's note states both."""
    figures = FIGURES["jobs"][job]
    key = REWARD.get(job, "reward")
    ledger = read_source([DATA / job], options=ImportOptions(reward=REWARD.get(job)))
    (report,) = score_ledger(ledger).runs
    binary = [
        1.0 if (t["rewards"] or {}).get(key, 0) >= 1 else 0.0 for t in harbor_trials(job).values()
    ]
    assert report.metrics["pass@1"].estimate == pytest.approx(sum(binary) / len(binary))
    for k, value in figures["pass_at_k"].items():
        assert report.metrics[f"pass@{k}"].estimate == pytest.approx(value)
    harbor_mean_of_key = figures["mean"].get("mean", figures["mean"].get(key))
    said = " ".join(report.notes)
    assert "Harbor's own figures (stored in its result.json)" in said
    assert f"{harbor_mean_of_key:.4g}" in said
    partial = [n for n, t in harbor_trials(job).items() if 0 < (t["rewards"] or {}).get(key, 0) < 1]
    if partial:
        assert f"{len(partial)} trial(s) with a reward between 0 and 1" in said
        assert all(name in said for name in partial)
    else:
        assert "our pass@1 equals Harbor's mean" in said


def test_verifier_failures_are_failed_attempts_naming_the_exception() -> None:
    rows = rows_of("oracle-basic")
    theirs = harbor_trials("oracle-basic")
    failed = Counter(
        e for t in theirs.values() if t["failure_cause"] == "verifier_failed"
        for e in t["exception_types"]
    )  # fmt: skip
    assert failed  # the job staged both verifier failures
    ours = Counter(
        r["error"].split(" ")[0] for r in rows if r["error"] and "verifier_failed" in r["error"]
    )
    assert ours == failed
    for r in rows:
        if r["error"] and "verifier_failed" in r["error"]:
            assert (r["status"], r["passed"], r["timed_out"]) == ("failed", False, False)


def test_an_agent_timeout_that_still_passes() -> None:
    rows = rows_of("oracle-basic")
    theirs = [
        t
        for t in harbor_trials("oracle-basic").values()
        if "AgentTimeoutError" in t["exception_types"]
    ]
    timed_out = [r for r in rows if r["timed_out"]]
    assert len(timed_out) == len(theirs) > 0
    assert sum(r["passed"] for r in timed_out) == sum(t["rewards"]["reward"] >= 1 for t in theirs)
    assert all(r["graded_after_timeout"] for r in rows)
    assert all(r["status"] == "passed" for r in timed_out if r["passed"])


def test_nop_agent_fails_everything_it_is_graded_on() -> None:
    rows = rows_of("nop-basic")
    assert not any(r["passed"] for r in rows)
    valid = sum(t["reward_valid"] for t in harbor_trials("nop-basic").values())
    assert sum(r["error"] is None for r in rows) == valid


def test_a_retried_sandbox_failure_and_one_given_up() -> None:
    figures = FIGURES["jobs"]["oracle-retry"]
    ledger = read_source([DATA / "oracle-retry"])
    rows = list(ledger_rows(ledger))
    infra = [t for t in figures["trials"].values() if t["failure_cause"] == "sandbox_failed"]
    assert sum(r["status"] == "infra_error" for r in rows) == len(infra) > 0
    assert all(
        "HealthcheckError (sandbox_failed)" in r["error"]
        for r in rows
        if r["status"] == "infra_error"
    )
    (kept,) = score_ledger(ledger).runs
    (dropped,) = score_ledger(ledger, options=ScoreOptions(drop_infra_errors=True)).runs
    said = " ".join(kept.notes)
    assert f"up to {figures['max_retries']} time(s)" in said
    assert f"{figures['n_retries']} retries made" in said
    graded = [t for t in figures["trials"].values() if t["reward_valid"]]
    passes = sum(t["rewards"]["reward"] >= 1 for t in graded)
    assert kept.pooled_attempt_rate.estimate == pytest.approx(passes / len(rows))
    assert dropped.pooled_attempt_rate.estimate == pytest.approx(passes / len(graded))


def test_step_based_trials_sum_usage_and_see_step_exceptions() -> None:
    rows = rows_of("scripted-steps")
    theirs = harbor_trials("scripted-steps")
    totals = [t["token_cost_totals"] for t in theirs.values()]
    assert sum(r["tokens_in"] for r in rows) == sum(t[0] for t in totals)
    assert sum(r["tokens_out"] for r in rows) == sum(t[2] for t in totals)
    assert sum(r["cost"] for r in rows) == pytest.approx(sum(t[3] for t in totals))
    step_timeouts = sum("AgentTimeoutError" in t["exception_types"] for t in theirs.values())
    assert sum(r["timed_out"] for r in rows) == step_timeouts > 0
    partial = sorted(
        t["rewards"]["reward"] for t in theirs.values() if 0 < t["rewards"]["reward"] < 1
    )
    assert (
        sorted(r["score"] for r in rows if r.get("score") is not None and r["score"] < 1) == partial
    )
    assert all(r["timeout_s"] is None for r in rows)  # per step, in task.toml


def test_several_reward_keys_refuse_to_guess() -> None:
    with pytest.raises(ArgumentError, match=r"several reward keys \(correctness, style\)") as info:
        read_source([DATA / "scripted-multikey"])
    assert info.value.argument == "reward"
    with pytest.raises(ArgumentError, match="no reward key 'styl'"):
        read_source([DATA / "scripted-multikey"], options=ImportOptions(reward="styl"))
    theirs = harbor_trials("scripted-multikey")
    for key, other in (("correctness", "style"), ("style", "correctness")):
        rows = list(
            ledger_rows(
                read_source([DATA / "scripted-multikey"], options=ImportOptions(reward=key))
            )
        )
        # Harbor's per-key mean counts a missing key 0, as passed does here
        assert sum(r["passed"] for r in rows) == sum(
            (t["rewards"] or {}).get(key, 0) >= 1 for t in theirs.values()
        )
        named = [read_checks(r["checks"]) for r in rows if r.get("checks")]
        have_other = sum(other in (t["rewards"] or {}) for t in theirs.values())
        assert sum(other in c for c in named) == have_other


def test_attempt_index_follows_the_start_within_a_task() -> None:
    rows = rows_of("oracle-basic")
    by_task: dict[str, list[tuple[int, str]]] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], []).append((r["attempt_index"], r["started_at"]))
    for attempts in by_task.values():
        assert [s for _, s in sorted(attempts)] == sorted(s for _, s in attempts)
        assert sorted(i for i, _ in attempts) == list(range(len(attempts)))
    assert {r["k_budget"] for r in rows} == {3}  # the job config's n_attempts


def copy_job(tmp_path: Path, job: str = "oracle-basic") -> Path:
    out = tmp_path / job
    shutil.copytree(DATA / job, out)
    return out


def first_trial(job_dir: Path, prefix: str = "") -> Path:
    return sorted(p for p in job_dir.iterdir() if p.is_dir() and p.name.startswith(prefix))[0]


def edit_result(trial: Path, change: Any) -> None:
    doc = json.loads((trial / "result.json").read_text())
    change(doc)
    (trial / "result.json").write_text(json.dumps(doc))


def test_the_agent_limit_where_a_trial_config_overrides_it(tmp_path: Path) -> None:
    job = copy_job(tmp_path)
    trial = first_trial(job, "echo-answer")

    def override(doc: dict[str, Any]) -> None:
        doc["config"]["agent"]["override_timeout_sec"] = 50.0
        doc["config"]["agent"]["max_timeout_sec"] = 30.0
        doc["config"]["timeout_multiplier"] = 2.0

    edit_result(trial, override)
    rows = {r["started_at"]: r for r in rows_of(str(job))}
    doc = json.loads((trial / "result.json").read_text())
    started = datetime.fromisoformat(doc["started_at"]).isoformat()
    # Harbor's Trial._resolve_timeout_sec: min(override, max) * multiplier = min(50, 30) * 2
    assert rows[started]["timeout_s"] == 60.0
    assert sum(r["timeout_s"] is not None for r in rows.values()) == 1


def test_an_exception_name_the_table_does_not_know_is_unclassified(tmp_path: Path) -> None:
    job = copy_job(tmp_path)
    trial = first_trial(job, "echo-answer")

    def new_name(doc: dict[str, Any]) -> None:
        doc["exception_info"] = {
            "exception_type": "ErrorOfANewerHarbor",
            "exception_message": "x",
            "exception_traceback": "",
            "occurred_at": doc["started_at"],
        }

    edit_result(trial, new_name)
    assert cause_of("ErrorOfANewerHarbor") == "unclassified"
    (t,) = [t for t in _read_job(job, MAX_SOURCE_BYTES).trials if t.name == trial.name]
    # TrialResult.reward_valid: an unclassified policy's reward is not valid
    assert t.reward_valid is False
    rows = rows_of(str(job))
    (row,) = [r for r in rows if r["error"] and "ErrorOfANewerHarbor" in r["error"]]
    # graded by its reward (not an infra error: Harbor's table blames no infrastructure)
    assert row["status"] == "passed"
    assert row["error"] == "ErrorOfANewerHarbor (unclassified)"


def test_detected_by_score_compare_and_report(tmp_path: Path) -> None:
    assert detect_source(DATA / "oracle-basic") is not None
    assert detect_source(first_trial(DATA / "oracle-basic")) is None  # a trial folder is not a job
    result = run("score", str(DATA / "oracle-basic"), "--format", "json")
    assert result.exit_code == 0, result.output
    (scored,) = json.loads(result.output)["runs"]
    assert scored["run_id"] == "oracle-basic"
    assert scored["metrics"]["pass@2"]["estimate"] == pytest.approx(
        FIGURES["jobs"]["oracle-basic"]["pass_at_k"]["2"]
    )
    result = run("compare", str(DATA / "nop-basic"), str(DATA / "oracle-basic"), "--format", "json")
    assert result.exit_code in (0, 1), result.output
    assert json.loads(result.output)["tasks"] == 5
    out = tmp_path / "r.html"
    result = run("report", str(DATA / "scripted-multikey"), "--reward", "style", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.exists()
    db = tmp_path / "h.db"
    result = run(
        "import", "harbor", str(DATA / "oracle-basic"), str(DATA / "nop-basic"), "--ledger", str(db)
    )
    assert result.exit_code == 0, result.output
    assert "of runs nop-basic, oracle-basic" in result.output


def refused(tmp_path: Path, *paths: Path, extra: tuple[str, ...] = ()) -> str:
    """Import ``paths``; require exit 2, no ledger, and exactly one error line."""
    db = tmp_path / "out.db"
    result = run("import", "harbor", *map(str, paths), "--ledger", str(db), *extra)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not db.exists()
    lines = [line for line in result.output.splitlines() if line]
    assert len(lines) == 1, lines
    assert lines[0].startswith("trialbook: error: ")
    return lines[0]


def test_a_trial_folder_without_result_json(tmp_path: Path) -> None:
    job = copy_job(tmp_path)
    trial = first_trial(job)
    (trial / "result.json").unlink()
    line = refused(tmp_path, job)
    assert trial.name in line
    assert "trial folder without result.json" in line


def test_a_result_json_of_another_schema(tmp_path: Path) -> None:
    job = copy_job(tmp_path)
    trial = first_trial(job)
    shutil.copy(job / "result.json", trial / "result.json")  # the job's result, not a trial's
    line = refused(tmp_path, job)
    assert trial.name in line
    assert "not a Harbor trial result" in line
    assert "'task_name'" in line


def test_mixed_jobs(tmp_path: Path) -> None:
    job = copy_job(tmp_path)
    stray = first_trial(DATA / "nop-basic")
    shutil.copytree(stray, job / stray.name)
    line = refused(tmp_path, job)
    assert stray.name in line
    assert "1 trial(s) of other jobs mixed in" in line


def test_not_a_job_folder_and_a_bad_reward_key(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert "no config.json here" in refused(tmp_path, tmp_path / "empty")
    assert "several reward keys" in refused(tmp_path, DATA / "scripted-multikey")
    assert "--reward" in refused(tmp_path, DATA / "oracle-basic", extra=("--reward", "style"))


def test_hostile_exception_and_trial_names_reach_no_terminal(tmp_path: Path) -> None:
    """An exception type from the file is printed in rows and notes: no control or bidi
    character of it is passed on (a real one is a Python class name, kept as it is)."""
    job = copy_job(tmp_path, "oracle-retry")
    hostile = "\x1b[2J\x1b[31mEvil\u202eError"
    for trial in [p for p in job.iterdir() if p.name.startswith("broken-start")]:

        def poison(doc: dict[str, Any]) -> None:
            doc["exception_info"]["exception_type"] = hostile

        edit_result(trial, poison)
    ledger = read_source([job])
    (report,) = score_ledger(ledger).runs
    texts = [str(r["error"]) for r in ledger_rows(ledger) if r["error"]] + list(report.notes)
    assert any("Evil" in t for t in texts)
    for text in texts:
        assert not any(ch in text for ch in "\x1b\u202e"), text
    untouched = [str(r["error"]) for r in rows_of("oracle-retry") if r["error"]]
    assert untouched
    assert all(e == "HealthcheckError (sandbox_failed)" for e in untouched)
