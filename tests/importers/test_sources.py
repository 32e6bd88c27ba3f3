"""What each importer decides, on small files built here: statuses, timeouts, infrastructure errors,
what is not recorded, and the notes the scorecard prints. Every expectation is counted from the
file written in the test."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_row, shared_path
from tests.importers.conftest import (
    need_inspect,
    run,
    swe_report,
    tau2_results,
    tau_bench,
    terminal_bench,
    write,
)
from trialbook import ScoreOptions, score_ledger
from trialbook.errors import ArgumentError, LedgerError
from trialbook.importers import ImportOptions, read_runs, read_source
from trialbook.ledger import LedgerStore, ledger_rows, read_ledger

# ---------------------------------------------------------------- tau-bench


def test_tau_bench_success_band_and_exceptions(tmp_path: Path) -> None:
    doc = tau_bench({0: [1.0, 1 - 5e-7], 1: [1 - 2e-6, 0.0]})
    doc[3]["info"] = {"error": "openai.APIConnectionError", "traceback": "..."}
    ledger = read_source([write(tmp_path / "t.json", doc)], "tau-bench")
    rows = list(ledger_rows(ledger))
    # within 1e-6 of 1 passes (tau-bench's band); 1 - 2e-6 does not
    assert [r["passed"] for r in rows] == [True, True, False, False]
    assert rows[3]["status"] == "infra_error"
    assert rows[3]["error"] == "openai.APIConnectionError"
    assert rows[0]["timeout_s"] is None
    assert rows[0]["elapsed_s"] is None
    (counted,) = score_ledger(ledger).runs
    (dropped,) = score_ledger(ledger, options=ScoreOptions(drop_infra_errors=True)).runs
    # tau-bench's own figure counts the exception a failure: 2 passes of 4; dropped: 2 of 3
    assert counted.pooled_attempt_rate.estimate == pytest.approx(2 / 4)
    assert dropped.pooled_attempt_rate.estimate == pytest.approx(2 / 3)
    assert any("1 trial(s) raised" in n for n in counted.notes)


def test_tau_bench_run_id_names_one_file(tmp_path: Path) -> None:
    a = write(tmp_path / "a.json", tau_bench({0: [1.0]}))
    b = write(tmp_path / "b.json", tau_bench({0: [0.0]}))
    assert read_source([a, b], "tau-bench").run_ids == ("a", "b")
    with pytest.raises(ArgumentError, match="one run per file"):
        read_source([a, b], "tau-bench", ImportOptions(run_id="x"))


# ---------------------------------------------------------------- tau2-bench


def test_tau2_infrastructure_errors_are_kept_and_the_difference_said(tmp_path: Path) -> None:
    doc = tau2_results(
        [
            ("1", 0, 1.0, "user_stop"),
            ("1", 1, None, "infrastructure_error"),
            ("2", 0, 0.0, "timeout"),
            ("2", 1, 1.0, "agent_stop"),
        ]
    )
    ledger = read_source([write(tmp_path / "results.json", doc)])  # detected
    rows = list(ledger_rows(ledger))
    assert [r["status"] for r in rows] == ["passed", "infra_error", "timed_out", "passed"]
    assert rows[0]["elapsed_s"] == 60.0
    assert rows[0]["cost"] == 0.01
    assert rows[0]["system"] == "claude-x"
    assert rows[0]["timeout_s"] is None  # tau2 saves no wall-clock limit in its results
    assert rows[2]["timed_out"] is True
    (kept,) = score_ledger(ledger).runs
    (tau2,) = score_ledger(ledger, options=ScoreOptions(drop_infra_errors=True)).runs
    # tau2's own figure drops the infrastructure error (2 passes of 3); kept here: 2 of 4
    assert kept.pooled_attempt_rate.estimate == pytest.approx(2 / 4)
    assert tau2.pooled_attempt_rate.estimate == pytest.approx(2 / 3)
    assert any("tau2 drops them from its metrics" in n for n in kept.notes)
    assert kept.source is not None
    assert kept.source.source_version == "git abc123"


# ---------------------------------------------------------------- Terminal-Bench


def test_terminal_bench_timeouts_null_resolved_and_zero_tokens(tmp_path: Path) -> None:
    doc = terminal_bench({"a": [True, False, True], "b": [None, False, False]})
    results = doc["results"]
    results[0]["failure_mode"] = "agent_timeout"  # passed after the agent timed out
    results[1]["failure_mode"] = "agent_timeout"  # timed out and failed
    results[4]["total_input_tokens"] = 0  # Terminal-Bench's 0: no usage reported
    results[4]["total_output_tokens"] = 0
    ledger = read_source([write(tmp_path / "results.json", doc)])
    rows = list(ledger_rows(ledger))
    assert [r["status"] for r in rows] == [
        "passed",
        "timed_out",
        "passed",
        "failed",
        "failed",
        "failed",
    ]
    assert rows[0]["timed_out"]
    assert rows[0]["passed"]
    assert rows[0]["graded_after_timeout"]
    assert rows[3]["error"] == "not judged: parse_error"
    assert rows[4]["tokens_in"] is None
    assert rows[5]["tokens_in"] == 100
    (score,) = score_ledger(ledger).runs
    assert score.passes_after_timeout == 1
    assert score.effort.timeout_rate == pytest.approx(2 / 6)
    assert any("is_resolved null" in n and "parse_error 1" in n for n in score.notes)
    assert score.not_recorded["timeout_s"] == 6
    assert "timed_out" not in score.not_recorded


def test_terminal_bench_pooling(tmp_path: Path) -> None:
    def one(name: str, resolved: bool, start: str) -> Path:
        doc = terminal_bench({"a": [resolved]})
        doc["results"][0]["trial_name"] = f"a.1-of-1.{name}"
        doc["results"][0]["trial_started_at"] = start
        return write(tmp_path / f"{name}.json", doc)

    late = one("late", True, "2025-09-22T03:00:00+00:00")
    early = one("early", False, "2025-09-22T02:00:00+00:00")
    by_order = list(ledger_rows(read_source([late, early], "terminal-bench")))
    assert [(r["attempt_index"], r["passed"]) for r in by_order] == [(0, True), (1, False)]
    by_start = list(
        ledger_rows(read_source([late, early], "terminal-bench", ImportOptions(as_attempts="runs")))
    )
    assert sorted((r["attempt_index"], r["passed"]) for r in by_start) == [(0, False), (1, True)]
    assert {r["k_budget"] for r in by_start} == {2}
    multi = write(tmp_path / "multi.json", terminal_bench({"a": [True, False]}))
    with pytest.raises(LedgerError, match="multi-attempt run"):
        read_source([multi, late], "terminal-bench")


# ---------------------------------------------------------------- SWE-bench


def test_swe_bench_report_lists(tmp_path: Path) -> None:
    doc = swe_report(
        ["r1", "r2"],
        ["u1"],
        infra_failure_ids=["i1"],
        incomplete_ids=["n1"],
    )
    doc["error_ids"] = ["e1"]
    doc["empty_patch_ids"] = ["p1"]
    doc["total_instances"] = 7
    ledger = read_source([write(tmp_path / "model.run1.json", doc)])
    by_task = {r["task_id"]: r for r in ledger_rows(ledger)}
    assert by_task["i1"]["status"] == "infra_error"
    assert {t for t, r in by_task.items() if r["status"] == "failed"} == {"u1", "e1", "p1", "n1"}
    assert by_task["e1"]["error"] == "error"
    assert by_task["p1"]["error"] == "empty_patch"
    (score,) = score_ledger(ledger).runs
    assert score.run_id == "model.run1"
    assert score.tasks == 7
    assert score.metrics["pass@1"].estimate == pytest.approx(2 / 7)  # total_instances denominator
    notes = " | ".join(score.notes)
    assert "1 empty patches, counted as failures" in notes
    assert "1 infrastructure failures" in notes
    assert score.source is not None
    assert score.source.source_version == "report schema 2"


# ---------------------------------------------------------------- Inspect


@pytest.fixture
def inspect_log(tmp_path: Path) -> Any:
    """The real Inspect log as an EvalLog to edit, and a writer of it as a .json log."""
    log_module = need_inspect("inspect_ai.log")
    log = log_module.read_eval_log(shared_path("realdata", "inspect", "flaky_20x5.eval"))

    def save(name: str = "log.json") -> Path:
        path = tmp_path / name
        log_module.write_eval_log(log, str(path), format="json")
        return path

    return log, save, log_module


def test_inspect_partial_errors_limits_and_retries(inspect_log: Any) -> None:
    log, save, log_module = inspect_log
    samples = log.samples
    samples[0].scores["flaky_scorer"].value = "P"  # partial: 0.5, not a pass
    samples[1].scores["flaky_scorer"].value = "C"
    samples[1].limit = log_module.EvalSampleLimit(type="time", limit=60)  # scored after the limit
    samples[2].error = log_module.EvalError(message="boom", traceback="", traceback_ansi="")
    samples[2].scores = {}
    samples[3].scores = {}  # unscored, no error
    samples[4].error_retries = [samples[2].error, samples[2].error]
    ledger = read_source([save()], "inspect")
    by_key = {(r["task_id"], r["attempt_index"]): r for r in ledger_rows(ledger)}
    rows = [by_key[(str(s.id), s.epoch - 1)] for s in samples[:5]]
    assert rows[0]["passed"] is False
    assert rows[0]["score"] == 0.5
    assert rows[1]["passed"]
    assert rows[1]["timed_out"]
    assert rows[1]["status"] == "passed"
    assert rows[2]["status"] == "infra_error"
    assert rows[2]["error"] == "boom"
    assert rows[3]["status"] == "failed"
    assert rows[3]["error"] == "unscored"
    assert rows[0]["timeout_s"] == 60.0  # eval.config.time_limit of flaky_task.py
    assert rows[0]["helper_calls"] is None
    assert rows[0]["not_recorded"] == "helper_calls,oracle_leak"
    (score,) = score_ledger(ledger).runs
    notes = " | ".join(score.notes)
    assert "1 sample(s) without a value for the scorer" in notes
    assert "1 sample(s) ended in an error" in notes
    assert "1 sample(s) were retried after errors (2 errored tries" in notes
    assert score.passes_after_timeout == 1


def test_inspect_several_scorers_refuse_to_guess(inspect_log: Any) -> None:
    log, save, _ = inspect_log
    extra = log.results.scores[0].model_copy(update={"name": "other", "scorer": "other"})
    log.results.scores.append(extra)
    for sample in log.samples:
        sample.scores["other"] = sample.scores["flaky_scorer"].model_copy(update={"value": "C"})
    path = save()
    with pytest.raises(ArgumentError, match=r"several scorers \(flaky_scorer, other\)"):
        read_source([path], "inspect")
    (score,) = score_ledger(read_source([path], "inspect", ImportOptions(scorer="other"))).runs
    assert score.metrics["pass@1"].estimate == 1.0
    result = run("score", str(path), "--source", "inspect", "--scorer", "nope")
    assert result.exit_code == 2
    assert "--scorer" in result.output
    assert "nope" in result.output


# ---------------------------------------------------------------- the import command


def test_import_records_the_source_and_is_all_or_nothing(tmp_path: Path) -> None:
    good = write(tmp_path / "good.json", tau_bench({0: [1.0, 0.0], 1: [0.0, 1.0]}))
    db = tmp_path / "l.db"
    result = run("import", "tau-bench", str(good), "--ledger", str(db), "--system", "gpt")
    assert result.exit_code == 0, result.output
    assert "imported 4 attempts of run good" in result.output
    with LedgerStore(db, readonly=True) as store:
        (status,) = store.runs()
    record = status.record
    assert record.source == "tau-bench"
    assert record.system == "gpt"
    assert record.source_files[0].path == str(good)
    import hashlib

    assert record.source_files[0].sha256 == hashlib.sha256(good.read_bytes()).hexdigest()
    assert any("not recorded by the source" in n for n in record.source_notes)
    # the store gives the provenance back to every scorecard, and the rows their unrecorded fields
    ledger = read_ledger(db)
    assert ledger.source_of("good") is not None
    assert set(ledger.not_recorded()) == {
        "timeout_s",
        "elapsed_s",
        "timed_out",
        "helper_calls",
        "oracle_leak",
    }
    table = run("score", str(db))
    assert "timeout rate" in table.output
    assert "not recorded by the source" in table.output
    doc = json.loads(run("score", str(db), "--format", "json").output)
    (r,) = doc["runs"]
    assert r["effort"]["timeout_rate"] is None
    assert r["effort"]["mean_elapsed_s"] is None
    assert r["not_recorded"]["elapsed_s"] == 4
    assert r["source"]["source"] == "tau-bench"
    # a second import of the same run is refused whole, the ledger unchanged
    bad = write(tmp_path / "bad.json", [{"task_id": 1}])
    again = run("import", "tau-bench", str(good), str(bad), "--ledger", str(db))
    assert again.exit_code == 2
    assert len(read_ledger(db)) == 4
    again = run("import", "tau-bench", str(good), "--ledger", str(db))
    assert again.exit_code == 2
    assert "already in the ledger" in again.output


def test_score_detects_the_source_and_says_when_it_cannot(tmp_path: Path) -> None:
    tb = write(tmp_path / "results.json", terminal_bench({"a": [True], "b": [False]}))
    assert run("score", str(tb)).exit_code == 0
    absent = run("score", str(tmp_path / "absent.json"))
    assert absent.exit_code == 2
    assert f"{tmp_path / 'absent.json'}: no such file" in absent.output
    unknown = write(tmp_path / "other.json", {"hello": 1})
    result = run("score", str(unknown))
    assert result.exit_code == 2
    assert "name its source with --source" in result.output


def test_two_sources_giving_one_run_id_are_refused(tmp_path: Path) -> None:
    a = tmp_path / "x" / "r.json"
    b = tmp_path / "y" / "r.json"
    a.parent.mkdir()
    b.parent.mkdir()
    write(a, tau_bench({0: [1.0]}))
    write(b, tau_bench({0: [0.0]}))
    with pytest.raises(ArgumentError, match="both called 'r'"):
        read_runs("tau-bench", [a, b], ImportOptions())


def test_nothing_invented_for_the_companion_figures(tmp_path: Path) -> None:
    ledger = read_source([write(tmp_path / "t.json", tau_bench({0: [1.0], 1: [0.0]}))])
    (score,) = score_ledger(ledger).runs
    assert math.isnan(score.effort.helper_calls_per_attempt)
    assert math.isnan(score.effort.median_elapsed_s)


def test_harness_options_are_refused_for_a_ledger_file(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    ledger.write_text(json.dumps(base_row("a", 0, passed=True, k=1)) + "\n")
    result = run("score", str(ledger), "--system", "x")
    assert result.exit_code == 2
    assert "--system applies to other harnesses' files" in result.output


def test_a_figure_some_rows_do_not_record_is_over_those_that_do(tmp_path: Path) -> None:
    doc = terminal_bench({"a": [True, False]})
    doc["results"][0]["agent_started_at"] = "2025-09-22T02:00:00+00:00"
    doc["results"][0]["agent_ended_at"] = "2025-09-22T02:00:30+00:00"  # 30 s; the other: none
    ledger = read_source([write(tmp_path / "results.json", doc)])
    (score,) = score_ledger(ledger).runs
    assert score.not_recorded["elapsed_s"] == 1
    assert score.effort.mean_elapsed_s == 30.0  # over the one attempt that records it, not (30+0)/2
    table = run("score", str(tmp_path / "results.json"))
    assert "over 1 of 2 attempts; rest not recorded by the source" in " ".join(table.output.split())


def test_a_folder_stands_for_the_files_in_it_that_a_reader_recognises(tmp_path: Path) -> None:
    # docs/cli.md: a folder stands for its files. The folder of one SWE-bench report (beside a
    # README and a hidden file, which no reader takes) scores as the report itself
    folder = tmp_path / "swe"
    folder.mkdir()
    report = write(folder / "report.json", swe_report(["a", "b"], ["c"]))
    (folder / "README.md").write_text("how these results were made\n")
    (folder / ".DS_Store").write_bytes(b"\0\1")
    by_file = json.loads(run("score", str(report), "--format", "json").output)["runs"]
    done = run("score", str(folder), "--format", "json")
    assert done.exit_code == 0, done.output
    by_folder = json.loads(done.output)["runs"]
    assert [r["metrics"] for r in by_folder] == [r["metrics"] for r in by_file]
    assert by_folder[0]["metrics"]["pass@1"]["estimate"] == pytest.approx(2 / 3)
    # named, the source's importer reads the folder itself
    named = run("score", str(folder), "--source", "swe-bench", "--format", "json")
    assert json.loads(named.output)["runs"][0]["metrics"] == by_file[0]["metrics"]
    # a folder of nothing a reader takes: one line naming the folder and --source, exit 2
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("x")
    empty = run("score", str(tmp_path / "notes"))
    assert empty.exit_code == 2
    assert empty.output.strip() == (
        f"trialbook: error: {tmp_path / 'notes'}: no file in this folder is a ledger (.db, "
        ".jsonl, .csv) or another harness's result file (a folder stands for its files); name "
        "the file, or its source with --source"
    )
    # another harness's file beside it: refused, as files of two kinds are
    write(folder / "tau.json", tau_bench({0: [1.0]}))
    mixed = run("score", str(folder))
    assert mixed.exit_code == 2
    assert "the files are of different kinds" in mixed.output
    # a wrong source for the folder: its file is named with the source it looks like
    wrong = run("score", str(folder), "--source", "terminal-bench")
    assert wrong.exit_code == 2
    assert f"{report}: read as terminal-bench, but it looks like swe-bench" in wrong.output


@pytest.mark.parametrize(
    ("doc", "named", "right"),
    [
        (swe_report(["a"], ["b"]), "tau-bench", "swe-bench"),
        (tau_bench({0: [1.0, 0.0]}), "terminal-bench", "tau-bench"),
        (terminal_bench({"a": [True]}), "swe-bench", "terminal-bench"),
    ],
)
def test_a_wrong_source_says_which_source_the_file_looks_like(
    tmp_path: Path, doc: Any, named: str, right: str
) -> None:
    path = write(tmp_path / "results.json", doc)
    result = run("score", str(path), "--source", named)
    assert result.exit_code == 2
    hint = f"trialbook: error: {path}: read as {named}, but it looks like {right}: try --source {right}"
    assert hint in result.output.splitlines()
    assert run("score", str(path), "--source", right).exit_code == 0
    ledger = write_jsonl_ledger(tmp_path / "l.jsonl")
    as_source = run("score", str(ledger), "--source", named)
    assert as_source.exit_code == 2
    assert f"read as {named}, but this is a ledger file: leave out --source" in as_source.output


def write_jsonl_ledger(path: Path) -> Path:
    path.write_text(json.dumps(base_row("t", 0, passed=True, k=1)) + "\n")
    return path


def test_importing_the_same_file_twice_is_one_line_naming_the_run(tmp_path: Path) -> None:
    # 3 tasks x 4 trials: the second import would write 12 rows already stored; one line says
    # the run was imported already and names it
    source = write(tmp_path / "airline.json", tau_bench({0: [1.0] * 4, 1: [0.0] * 4, 2: [1.0] * 4}))
    db = str(tmp_path / "l.db")
    assert run("import", "tau-bench", str(source), "--ledger", db).exit_code == 0
    again = run("import", "tau-bench", str(source), "--ledger", db)
    assert again.exit_code == 2
    assert again.output.splitlines() == [
        f"trialbook: error: {source}: run 'airline' is already in the ledger: all 12 of its "
        "attempts here were stored before (rows are never overwritten; give it another run id "
        "to keep both)"
    ]
    assert run("import", "tau-bench", str(source), "--ledger", db, "--run-id", "b").exit_code == 0
