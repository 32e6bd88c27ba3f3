"""Inspect AI logs produced for real (inspect-ai's mockllm, by data/inspect/make_logs.py): a
dict-valued scorer, a failed eval, errored samples with and without score_on_error, NaN scores, time
and message limits, a sample that never called the model, and the same run as a .json log.

Every expected figure is read from the log itself through inspect-ai's reader: Inspect's own
figures from its results section, ours from first principles over its samples."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.importers.conftest import need_inspect, run
from trialbook import ScoreOptions, score_ledger
from trialbook.errors import ArgumentError
from trialbook.importers import INSPECT, ImportOptions, detect_source, read_source
from trialbook.ledger import ledger_rows

DATA = Path(__file__).parent / "data" / "inspect"


def log_of(name: str) -> Any:
    """The whole log, as inspect-ai reads it."""
    return need_inspect("inspect_ai.log").read_eval_log(DATA / name)


def figure(log: Any, name: str, reducer: str, metric: str) -> float:
    """Inspect's own figure: the metric of one score and reducer in the log's results."""
    (entry,) = [s for s in log.results.scores if s.name == name and s.reducer == reducer]
    return float(entry.metrics[metric].value)


def rows_of(name: str, **options: Any) -> dict[tuple[str, int], dict[str, Any]]:
    ledger = read_source([DATA / name], "inspect", ImportOptions(**options))
    return {(r["task_id"], r["attempt_index"]): r for r in ledger_rows(ledger)}


def scored(name: str, drop: bool = False, **options: Any) -> Any:
    ledger = read_source([DATA / name], "inspect", ImportOptions(**options))
    (result,) = score_ledger(ledger, options=ScoreOptions(drop_infra_errors=drop)).runs
    return result


def as_float(value: object) -> float:
    from inspect_ai.scorer import value_to_float

    return float(value_to_float()(value))  # type: ignore[arg-type]


def per_task_mean(log: Any, passed: Any) -> float:
    """The mean over samples of the share of epochs that pass (pass@1), every epoch counted."""
    by_task: dict[str, list[bool]] = {}
    for sample in log.samples:
        by_task.setdefault(str(sample.id), []).append(bool(passed(sample)))
    return sum(sum(v) / len(v) for v in by_task.values()) / len(by_task)


def test_a_dict_valued_scorer_is_read_by_key() -> None:
    log = log_of("dict_scorer.eval")
    assert {s.scorer for s in log.results.scores} == {"dict_value"}  # the fixture is what it says
    for key in ("correct", "style"):
        result = scored("dict_scorer.eval", scorer=key)
        assert result.metrics["pass@1"].estimate == pytest.approx(
            figure(log, key, "mean", "mean"), abs=1e-12
        )
        assert result.metrics["pass@2"].estimate == pytest.approx(
            figure(log, key, "pass_at_2", "mean"), abs=1e-12
        )
        rows = rows_of("dict_scorer.eval", scorer=key)
        for sample in log.samples:
            value = sample.scores["dict_value"].value[key]
            assert rows[(str(sample.id), sample.epoch - 1)]["passed"] is (as_float(value) >= 1)
        notes = " | ".join(result.notes)
        assert f"on key '{key}' of scorer 'dict_value'" in notes
        assert f"Inspect's own figures for '{key}'" in notes
    with pytest.raises(ArgumentError, match=r"several scorers \(correct, style\)"):
        read_source([DATA / "dict_scorer.eval"], "inspect")
    with pytest.raises(ArgumentError, match=r"'dict_value' gives a dict.*\('correct', 'style'\)"):
        read_source([DATA / "dict_scorer.eval"], "inspect", ImportOptions(scorer="dict_value"))


def test_a_failed_eval_checks_the_scorer_against_its_samples() -> None:
    log = log_of("failed.eval")
    assert log.status == "error"
    assert log.results is None
    path = DATA / "failed.eval"
    with pytest.raises(ArgumentError, match=r"no scorer 'nope' in the log \(scores: 'parity'\)"):
        read_source([path], "inspect", ImportOptions(scorer="nope"))
    result = run("score", str(path), "--scorer", "nope")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "'parity'" in result.output
    rows = rows_of("failed.eval")
    assert rows == rows_of("failed.eval", scorer="parity")
    for sample in log.samples:
        row = rows[(str(sample.id), 0)]
        if sample.error is not None:
            assert row["status"] == "infra_error"
            assert row["error"] == sample.error.message
        else:
            assert row["passed"] is (as_float(sample.scores["parity"].value) >= 1)
    notes = " | ".join(scored("failed.eval").notes)
    assert "on scorer 'parity'" in notes
    assert "Inspect computed no figures" in notes


def test_errored_samples_are_infra_errors_and_dropping_them_gives_inspects_figure() -> None:
    log = log_of("errors.eval")
    errored = [s for s in log.samples if s.error is not None]
    assert errored
    assert all(not s.scores for s in errored)  # Inspect did not score them
    rows = rows_of("errors.eval")
    for sample in errored:
        row = rows[(str(sample.id), sample.epoch - 1)]
        assert (row["status"], row["error"]) == ("infra_error", sample.error.message)
    counted = scored("errors.eval")
    # ours: an errored epoch is a failure, every epoch counted
    assert counted.metrics["pass@1"].estimate == pytest.approx(
        per_task_mean(log, lambda s: s.error is None and as_float(s.scores["parity"].value) >= 1)
    )
    inspect_accuracy = figure(log, "parity", "mean", "accuracy")
    assert counted.metrics["pass@1"].estimate < inspect_accuracy
    dropped = scored("errors.eval", drop=True)
    assert dropped.metrics["pass@1"].estimate == pytest.approx(inspect_accuracy, abs=1e-12)
    notes = " | ".join(counted.notes)
    assert f"accuracy {inspect_accuracy:.6g}" in notes
    assert f"{len(errored)} sample(s) ended in an error without a score" in notes
    assert "--drop-infra-errors leaves them out as Inspect does" in notes


def test_errored_samples_scored_on_error_are_graded_attempts() -> None:
    log = log_of("errors_scored.eval")
    errored = [s for s in log.samples if s.error is not None]
    assert errored
    assert all(s.scores for s in errored)  # score_on_error: Inspect scored them
    rows = rows_of("errors_scored.eval")
    for sample in errored:
        row = rows[(str(sample.id), sample.epoch - 1)]
        passed = as_float(sample.scores["parity"].value) >= 1
        assert row["status"] == ("passed" if passed else "failed")
        assert row["passed"] is passed
        assert row["error"] == sample.error.message
    inspect_accuracy = figure(log, "parity", "mean", "accuracy")
    for drop in (False, True):
        result = scored("errors_scored.eval", drop=drop)
        assert result.metrics["pass@1"].estimate == pytest.approx(inspect_accuracy, abs=1e-12)
    notes = " | ".join(scored("errors_scored.eval").notes)
    assert f"{len(errored)} sample(s) ended in an error but Inspect scored them" in notes


def test_nan_scores_are_failures_counted_in_the_note() -> None:
    log = log_of("nan.eval")
    nans = [s for s in log.samples if math.isnan(as_float(s.scores["sometimes_nan"].value))]
    assert nans
    inspect_mean = figure(log, "sometimes_nan", "mean", "mean")
    ours = per_task_mean(log, lambda s: as_float(s.scores["sometimes_nan"].value) >= 1)
    assert ours != pytest.approx(inspect_mean)  # the log shows the gap it is meant to show
    for drop in (False, True):
        result = scored("nan.eval", drop=drop)
        assert result.metrics["pass@1"].estimate == pytest.approx(ours, abs=1e-12)
    rows = rows_of("nan.eval")
    for sample in nans:
        row = rows[(str(sample.id), sample.epoch - 1)]
        assert (row["status"], row["error"]) == ("failed", "unscored")
    notes = " | ".join(scored("nan.eval").notes)
    assert f"{len(nans)} sample(s) scored NaN" in notes
    assert f"mean {inspect_mean:.6g}" in notes


@pytest.mark.parametrize("name", ["limits.eval", "limits.json"])
def test_limits_unused_model_and_json_logs(name: str) -> None:
    log = log_of(name)
    path = DATA / name
    assert detect_source(path) is INSPECT
    result = scored(name)
    assert result.metrics["pass@1"].estimate == pytest.approx(
        figure(log, "parity", "mean", "accuracy"), abs=1e-12
    )
    assert result.metrics["pass@2"].estimate == pytest.approx(
        figure(log, "parity", "pass_at_2", "accuracy"), abs=1e-12
    )
    rows = rows_of(name)
    hits = {s.limit.type for s in log.samples if s.limit is not None}
    assert hits == {"time", "message"}
    for sample in log.samples:
        row = rows[(str(sample.id), sample.epoch - 1)]
        hit = sample.limit.type if sample.limit is not None else None
        assert row["timed_out"] is (hit == "time")
        assert row["passed"] is (as_float(sample.scores["parity"].value) >= 1)
        if hit == "time":
            assert row["timeout_s"] == sample.limit.limit
    # tokens: a sample that never called the model made zero calls, and the sums are Inspect's
    unused = [s for s in log.samples if not s.model_usage]
    assert unused
    priced = all(u.total_cost is not None for u in log.stats.model_usage.values())
    assert not priced  # mockllm is not priced: a sample without model calls has no known cost
    for sample in unused:
        row = rows[(str(sample.id), sample.epoch - 1)]
        assert (row["tokens_in"], row["tokens_out"]) == (0, 0)
        assert row["cost"] is None
    (usage,) = log.stats.model_usage.values()
    assert result.cost.tokens_in.value == usage.input_tokens
    assert result.cost.tokens_out.value == usage.output_tokens
    assert result.cost.tokens_in.known_attempts == result.attempts
    assert any(f"{len(unused)} sample(s) never called a model" in n for n in result.notes)
    # detected: no --source needed on the command line
    cli = run("score", str(path))
    assert cli.exit_code == 0, cli.output
    assert "pass@1" in cli.output


def test_a_sample_without_model_calls_costs_nothing_in_a_priced_log(tmp_path: Path) -> None:
    log_module = need_inspect("inspect_ai.log")
    log = log_module.read_eval_log(DATA / "limits.eval")
    # price every call as Inspect does with a cost table: 0.01 per call of 12 in / 3 out
    for sample in log.samples:
        for usage in sample.model_usage.values():
            usage.total_cost = 0.01 * usage.input_tokens / 12
    for usage in log.stats.model_usage.values():
        usage.total_cost = 0.01 * usage.input_tokens / 12
    path = tmp_path / "priced.json"
    log_module.write_eval_log(log, str(path), format="json")
    ledger = read_source([path])
    rows = {(r["task_id"], r["attempt_index"]): r for r in ledger_rows(ledger)}
    for sample in log.samples:
        expected = sum(u.total_cost for u in sample.model_usage.values())
        assert rows[(str(sample.id), sample.epoch - 1)]["cost"] == pytest.approx(expected)
    (result,) = score_ledger(ledger).runs
    (total,) = log.stats.model_usage.values()
    assert result.cost.total_cost.value == pytest.approx(total.total_cost)


def test_a_dict_valued_scorer_in_a_log_without_results(tmp_path: Path) -> None:
    log_module = need_inspect("inspect_ai.log")
    log = log_module.read_eval_log(DATA / "dict_scorer.eval")
    with_results = rows_of("dict_scorer.eval", scorer="correct")
    log.results, log.status = None, "error"  # as a failed eval writes it
    path = tmp_path / "failed_dict.json"
    log_module.write_eval_log(log, str(path), format="json")
    ledger = read_source([path], options=ImportOptions(scorer="correct"))
    assert {(r["task_id"], r["attempt_index"]): r["passed"] for r in ledger_rows(ledger)} == {
        key: row["passed"] for key, row in with_results.items()
    }
    with pytest.raises(ArgumentError, match=r"'dict_value' gives a dict.*\('correct', 'style'\)"):
        read_source([path], options=ImportOptions(scorer="dict_value"))
    with pytest.raises(ArgumentError, match=r"no scorer 'nope' .*\(scores: 'correct', 'style'\)"):
        read_source([path], options=ImportOptions(scorer="nope"))
    with pytest.raises(ArgumentError, match=r"several scores \(correct, style\)"):
        read_source([path])


def test_a_scorer_named_like_its_dict_key_and_hostile_names(tmp_path: Path) -> None:
    log_module = need_inspect("inspect_ai.log")
    log = log_module.read_eval_log(DATA / "dict_scorer.eval")
    hostile = "style\x1b[2J"
    for entry in log.results.scores:
        entry.scorer = "correct"
        if entry.name == "style":
            entry.name = hostile
    for sample in log.samples:
        value = sample.scores.pop("dict_value").value
        value[hostile] = value.pop("style")
        sample.scores["correct"] = log_module.EvalSampleScore(value=value)
    path = tmp_path / "renamed.json"
    log_module.write_eval_log(log, str(path), format="json")
    (result,) = score_ledger(read_source([path], options=ImportOptions(scorer="correct"))).runs
    assert result.metrics["pass@1"].estimate == pytest.approx(
        figure(log, "correct", "mean", "mean"), abs=1e-12
    )
    with pytest.raises(ArgumentError) as refused:
        read_source([path])
    assert "\x1b" not in str(refused.value)
    assert repr(hostile) in str(refused.value)
