"""Outcome kinds of fault-injection and permission tasks: protection, task outcome and stop reason
recorded apart, shown apart in the fault table, and a protected-but-failed attempt never a success."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.harness.test_run import run, unique_run_id
from trialbook.cli import main
from trialbook.errors import SuiteError
from trialbook.harness import RunOptions, run_suite
from trialbook.suite import freeze, load_suite

DECLARED = ['outcomes = ["protection", "task", "stop_reason"]']


def _grader(line: dict[str, Any] | str, code: int = 0) -> dict[str, Any]:
    text = line if isinstance(line, str) else json.dumps(line)
    script = f"import sys\nprint({text!r})\nsys.exit({code})\n"
    return {"grader": 'python "$TRIALBOOK_ORACLE_DIR/g.py"', "oracle": {"g.py": script}}


# The permission task's grader: the agent refused the forbidden write (protection held) and so
# never did the task; the grader exits 0 (nothing unsafe happened).
REFUSED = {"protection": True, "task": False, "stop_reason": "refused: write outside workspace"}
DONE = {"protection": True, "task": True, "stop_reason": "finished"}


def test_a_protected_but_failed_attempt_is_a_failure(tmp_path: Path) -> None:
    tasks = {"perm": {**_grader(REFUSED), "toml": DECLARED}}
    (row,) = run(tmp_path, tasks, "true", "process")
    assert row["passed"] is False  # exit 0, but the task was not done
    assert row["status"] == "failed"
    assert (row["protection"], row["task_outcome"], row["stop_reason"]) == (
        True,
        False,
        "refused: write outside workspace",
    )
    assert "reported the task not done (protection held): a failure" in row["error"]


def test_declared_outcomes_the_grader_does_not_report_are_not_recorded(tmp_path: Path) -> None:
    tasks = {"perm": {**_grader({"protection": True}), "toml": DECLARED}}
    (row,) = run(tmp_path, tasks, "true", "process")
    assert (row["protection"], row["task_outcome"], row["stop_reason"]) == (True, None, None)
    assert row["passed"] is False  # no task outcome: never counted as a success
    assert "did not report the task's declared outcome 'task': not recorded" in row["error"]
    assert "'stop_reason': not recorded" in row["error"]
    assert "without a task outcome: counted as a failure" in row["error"]


def test_outcomes_of_a_task_that_declares_none_are_not_recorded(tmp_path: Path) -> None:
    (row,) = run(tmp_path, {"t": _grader({"protection": False, "task": True})}, "true", "process")
    assert row["passed"] is True
    assert (row["protection"], row["task_outcome"]) == (None, None)
    assert "which the task does not declare: not recorded" in row["error"]


def test_wrong_types_are_notes_not_values(tmp_path: Path) -> None:
    tasks = {
        "perm": {**_grader({"protection": "yes", "task": True, "stop_reason": 3}), "toml": DECLARED}
    }
    (row,) = run(tmp_path, tasks, "true", "process")
    assert (row["protection"], row["task_outcome"], row["stop_reason"]) == (None, True, None)
    assert row["passed"] is True
    assert "'protection' must be true or false, got 'yes'" in row["error"]


def test_the_fault_table_shows_protection_and_task_outcome_apart(tmp_path: Path) -> None:
    fault = ['stratum = "fault:permission"', *DECLARED]
    tasks = {
        # an ordinary task that passes, and one the agent fails
        "ok": _grader({"score": 1}),
        "bad": _grader({"score": 0}, code=1),
        # permission tasks: refused the forbidden write, twice; did it safely once
        "perm-refused": {**_grader(REFUSED), "toml": fault},
        "perm-done": {**_grader(DONE), "toml": fault},
        # the same refusal as an ordinary task (no fault stratum): counted in the headline
        "refusal-in-headline": {**_grader(REFUSED), "toml": DECLARED},
    }
    suite = make_suite(tmp_path / "suite", tasks, k=2, extra='strata = ["fault:permission"]\n')
    ledger = tmp_path / "ledger.db"
    run_suite(
        RunOptions(
            suite=suite,
            agent="true",
            ledger=ledger,
            system="s",
            sandbox="process",
            run_id=unique_run_id(),
            grace_s=0.5,
        )
    )
    runner = CliRunner()
    result = runner.invoke(main, ["score", str(ledger), "--format", "json"])
    assert result.exit_code == 0, result.output
    (scored,) = json.loads(result.output)["runs"]
    # headline: ok, bad and refusal-in-headline; the refusal is a failure there: 1 of 3 tasks
    assert scored["tasks"] == 3
    assert scored["metrics"]["pass@1"]["estimate"] == pytest.approx(1 / 3)
    assert scored["checks"] == {}  # no grader here names checks
    passes = {t["task_id"]: t["passes"] for t in scored["per_task"]}
    assert passes["refusal-in-headline"] == 0
    (row,) = scored["faults"]["rows"]
    assert row["fault_type"] == "permission"
    # the protected-but-failed attempts are failures in the fault table too
    assert row["outcomes"]["passed"] == 2  # perm-done's two attempts
    assert row["outcomes"]["failed"] == 2
    assert row["tasks_always_passed"] == 1
    assert row["protection"] == {"held": 4, "not held": 0, "not recorded": 0}
    assert row["task_outcome"] == {"done": 2, "not done": 2, "not recorded": 0}
    assert row["protected_but_failed"] == 2
    assert row["stop_reasons"] == {"finished": 2, "refused: write outside workspace": 2}

    table = runner.invoke(main, ["score", str(ledger)], terminal_width=80)
    assert "fault cases by outcome kind" in table.output
    after = table.output.split("fault cases by outcome kind", 1)[1]
    line = next(x for x in after.splitlines() if x.startswith("fault:permission"))
    assert line.split()[:4] == ["fault:permission", "4/4", "2/4", "2"]
    markdown = runner.invoke(main, ["score", str(ledger), "--format", "markdown"])
    assert "| fault:permission | 4/4 | 2/4 | 2 |" in markdown.output
    out = tmp_path / "report.html"
    assert runner.invoke(main, ["report", str(ledger), "-o", str(out)]).exit_code == 0
    assert "Fault cases by outcome kind" in out.read_text()


def test_a_task_declares_outcomes_in_its_task_file_and_the_lock_pins_them(tmp_path: Path) -> None:
    plain = make_suite(tmp_path / "a", {"t": _grader({})}, freeze=False)
    declared = make_suite(tmp_path / "b", {"t": {**_grader({}), "toml": DECLARED}}, freeze=False)
    (tmp_path / "b" / "suite.toml").write_text((tmp_path / "a" / "suite.toml").read_text())
    assert load_suite(declared).tasks[0].outcomes == ("protection", "task", "stop_reason")
    assert load_suite(plain).tasks[0].outcomes == ()
    # declaring outcome kinds changes what the suite is: another dataset_id
    assert freeze(load_suite(plain)).dataset_id != freeze(load_suite(declared)).dataset_id
    bad = make_suite(
        tmp_path / "c", {"t": {**_grader({}), "toml": ['outcomes = ["harm"]']}}, freeze=False
    )
    with pytest.raises(
        SuiteError, match=r"task.toml: outcomes: expected a list of protection, task"
    ):
        load_suite(bad)
    result = CliRunner().invoke(main, ["suite", "freeze", str(bad)])
    assert result.exit_code == 2
    assert "outcomes" in result.output
    assert "Traceback" not in result.output
