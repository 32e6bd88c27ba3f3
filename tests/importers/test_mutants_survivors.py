"""Importer decisions that a mutation run found no test of its module pinning: tau2's
infrastructure errors and passes after a timeout, Terminal-Bench's trial index against its k, and
Inspect's working-time limit. Every expectation is read off the file written in the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_path
from tests.importers.conftest import need_inspect, tau2_results, terminal_bench, write
from trialbook.errors import LedgerError
from trialbook.importers import read_source
from trialbook.ledger import ledger_rows


def test_tau2_an_infrastructure_error_with_reward_1_is_not_a_pass(tmp_path: Path) -> None:
    # tau2 may store a reward beside an infrastructure_error; the attempt did not run to its end,
    # so it is an infrastructure error (a failure by default), never a pass
    doc = tau2_results([("1", 0, 1.0, "infrastructure_error"), ("1", 1, 1.0, "user_stop")])
    rows = list(ledger_rows(read_source([write(tmp_path / "results.json", doc)])))
    assert [(r["status"], r["passed"]) for r in rows] == [("infra_error", False), ("passed", True)]


def test_tau2_a_timeout_with_reward_1_is_a_pass_after_timeout(tmp_path: Path) -> None:
    # tau2 scores a simulation that hit its limit as it stands: reward 1 there is a pass after a
    # timeout, and every row of the run says its grader judged after timeouts
    doc = tau2_results(
        [
            ("1", 0, 1.0, "timeout"),
            ("1", 1, 0.0, "timeout"),
            ("2", 0, 1.0, "user_stop"),
            ("2", 1, 1.0, "agent_stop"),
        ]
    )
    rows = list(ledger_rows(read_source([write(tmp_path / "results.json", doc)])))
    assert [(r["status"], r["passed"], r["timed_out"]) for r in rows] == [
        ("passed", True, True),
        ("timed_out", False, True),
        ("passed", True, False),
        ("passed", True, False),
    ]
    assert {r["graded_after_timeout"] for r in rows} == {True}


def test_tau2_without_a_passing_timeout_nothing_says_graded_after_timeout(tmp_path: Path) -> None:
    doc = tau2_results([("1", 0, 0.0, "timeout"), ("1", 1, 1.0, "user_stop")])
    rows = list(ledger_rows(read_source([write(tmp_path / "results.json", doc)])))
    assert {r["graded_after_timeout"] for r in rows} == {None}


@pytest.mark.parametrize(("index", "of"), [(3, 2), (0, 2)])
def test_terminal_bench_a_trial_index_outside_1_to_k_is_refused(
    tmp_path: Path, index: int, of: int
) -> None:
    # '<task>.<i>-of-<k>' numbers trials 1..k: trial 3 of 2 (or 0 of 2) is not a trial of it
    doc = terminal_bench({"a": [True, False]})
    doc["results"][1]["trial_name"] = f"a.{index}-of-{of}"
    with pytest.raises(LedgerError, match=f"trial {index} of {of} is out of range"):
        read_source([write(tmp_path / "results.json", doc)])


@pytest.fixture
def inspect_log(tmp_path: Path) -> Any:
    log_module = need_inspect("inspect_ai.log")
    log = log_module.read_eval_log(shared_path("realdata", "inspect", "flaky_20x5.eval"))

    def save() -> Path:
        path = tmp_path / "log.json"
        log_module.write_eval_log(log, str(path), format="json")
        return path

    return log, save, log_module


@pytest.mark.parametrize("kind", ["time", "working"])
def test_inspect_a_wall_or_working_time_limit_is_a_timeout(inspect_log: Any, kind: str) -> None:
    # Inspect's time_limit (wall clock) and working_limit (time spent working, waits excluded)
    # both stop the sample for running out of time: timed_out, whatever the score says after
    log, save, log_module = inspect_log
    first, second = log.samples[0], log.samples[1]
    first.scores["flaky_scorer"].value = "I"
    first.limit = log_module.EvalSampleLimit(type=kind, limit=30)
    second.scores["flaky_scorer"].value = "I"
    second.limit = log_module.EvalSampleLimit(type="token", limit=1000)  # not a time limit
    by_key = {
        (r["task_id"], r["attempt_index"]): r for r in ledger_rows(read_source([save()], "inspect"))
    }
    row = by_key[(str(first.id), first.epoch - 1)]
    assert (row["timed_out"], row["status"]) == (True, "timed_out")
    other = by_key[(str(second.id), second.epoch - 1)]
    assert (other["timed_out"], other["status"]) == (False, "failed")
