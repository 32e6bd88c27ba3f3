"""A resume runs again, as a recorded new row (``retry`` + 1), each attempt the harness lost; never
a silent duplicate, never an agent's failure. The cluster's losses are stood in for here by an
executor that loses chosen attempts (tests/harness/test_ray.py loses them on a real cluster)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.harness.test_run import unique_run_id
from trialbook import report as render
from trialbook.analysis import ScoreOptions, score_file
from trialbook.cli import main
from trialbook.harness import LocalExecutor, RunOptions, list_runs, run_suite
from trialbook.harness.attempt._spec import AttemptResult, AttemptSpec
from trialbook.harness.executors._ray_worker import lost_result
from trialbook.ledger import read_ledger

TASKS = {f"t{i}": {"grader": "test -f done.txt"} for i in range(3)}
AGENT = "touch done.txt"


def _losing(monkeypatch: pytest.MonkeyPatch, lose: dict[tuple[str, int], bool]) -> None:
    """Attempts (task, index) -> lost (the harness vouches for it) or not (a sandbox that could
    not start, say): their first run ends in that infra_error row instead of running."""
    submit = LocalExecutor.submit

    def losing(
        self: LocalExecutor, worker: Callable[[AttemptSpec], AttemptResult], spec: AttemptSpec, /
    ) -> Future[AttemptResult]:
        key = (spec.task_id, spec.attempt_index)
        if key in lose and "retry" not in spec.row_fields:
            done: Future[AttemptResult] = Future()
            done.set_result(lost_result(spec, "stand-in loss", lost=lose[key]))
            return done
        return submit(self, worker, spec)

    monkeypatch.setattr(LocalExecutor, "submit", losing)


def _rows(ledger: Path, run_id: str) -> list[dict[str, Any]]:
    with sqlite3.connect(ledger) as conn:
        conn.row_factory = sqlite3.Row
        found = conn.execute(
            "SELECT * FROM attempts WHERE run_id = ? ORDER BY id", (run_id,)
        ).fetchall()
    return [dict(r) for r in found]


def test_a_resume_reruns_each_lost_attempt_once_as_a_recorded_new_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=2)
    ledger = tmp_path / "ledger.db"
    run_id = unique_run_id()
    options = RunOptions(suite=suite, agent=AGENT, ledger=ledger, run_id=run_id, sandbox="process")
    with monkeypatch.context() as patch:
        _losing(patch, {("t0", 1): True, ("t2", 0): True})
        first = run_suite(options)
    assert (first.written, first.reruns) == (6, 0)
    lost = [r for r in _rows(ledger, run_id) if r["status"] == "infra_error"]
    assert [(r["task_id"], r["attempt_index"], r["lost"]) for r in lost] == [
        ("t2", 0, 1),
        ("t0", 1, 1),
    ]
    # the scorecard counts the lost attempts as infrastructure errors until they are re-run
    assert score_file(ledger, options=ScoreOptions(resamples=100)).runs[0].infra_errors == 2

    resume = RunOptions(suite=None, agent=None, ledger=ledger, resume=run_id)
    second = run_suite(resume)
    assert (second.planned, second.written, second.reruns) == (2, 2, 1 + 1)
    rows = _rows(ledger, run_id)
    assert len(rows) == 6 + 2  # the original rows and the re-runs: nothing replaced
    keys = [(r["task_id"], r["attempt_index"], r["retry"] or 0) for r in rows]
    assert len(set(keys)) == len(keys)
    assert sorted(k for k in keys if k[2]) == [("t0", 1, 1), ("t2", 0, 1)]
    # every attempt's highest retry is a real outcome
    highest: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        key = (r["task_id"], r["attempt_index"])
        if (r["retry"] or 0) >= (highest.get(key, {}).get("retry") or 0):
            highest[key] = r
    assert len(highest) == 6
    assert all(r["status"] == "passed" for r in highest.values())
    with sqlite3.connect(ledger) as conn:
        (detail,) = conn.execute(
            "SELECT detail FROM run_events WHERE run_id = ? AND event = 'resumed'", (run_id,)
        ).fetchone()
        starts = conn.execute(
            "SELECT task_id, attempt_index, retry FROM attempt_starts WHERE run_id = ? "
            "AND retry IS NOT NULL ORDER BY task_id",
            (run_id,),
        ).fetchall()
    event = json.loads(detail)
    assert (event["rerun"], sorted(event["reruns"])) == (2, ["t0#1.1", "t2#0.1"])
    assert starts == [("t0", 1, 1), ("t2", 0, 1)]  # each re-run a recorded start
    report = score_file(ledger, options=ScoreOptions(resamples=100)).runs[0]
    assert (report.reruns, report.infra_errors, report.attempts) == (2, 0, 6)
    (listed,) = list_runs(ledger)
    assert (listed.done, listed.reruns, listed.superseded, listed.lost) == (6, 2, 2, 0)
    assert "2 attempt(s) re-run (2 superseded row(s) kept)" in render.runs_text([listed])

    third = run_suite(resume)  # nothing lost any more: a second resume re-runs nothing
    assert (third.planned, third.written, third.reruns) == (0, 0, 0)
    assert len(_rows(ledger, run_id)) == 8
    read_ledger(ledger)  # and the ledger is valid as a whole


def test_an_infra_error_the_harness_cannot_vouch_for_is_rerun_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=1)
    ledger = tmp_path / "ledger.db"
    run_id = unique_run_id()
    options = RunOptions(suite=suite, agent=AGENT, ledger=ledger, run_id=run_id, sandbox="process")
    with monkeypatch.context() as patch:
        _losing(patch, {("t1", 0): False})
        run_suite(options)
    (listed,) = list_runs(ledger)
    assert listed.lost == 0  # not the harness's own loss: a resume leaves it
    resume = RunOptions(suite=None, agent=None, ledger=ledger, resume=run_id)
    assert run_suite(resume).written == 0
    again = run_suite(
        RunOptions(suite=None, agent=None, ledger=ledger, resume=run_id, rerun_infra=True)
    )
    assert (again.written, again.reruns) == (1, 1)
    (rerun,) = [r for r in _rows(ledger, run_id) if r["retry"]]
    assert (rerun["task_id"], rerun["retry"], rerun["status"]) == ("t1", 1, "passed")


def test_rerun_infra_without_resume_is_one_line(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=1)
    ledger = tmp_path / "ledger.db"
    result = CliRunner().invoke(
        main, ["run", str(suite), "--agent", AGENT, "--ledger", str(ledger), "--rerun-infra"]
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "trialbook: error: --rerun-infra applies to a resume only: it runs again the infra "
        "errors of an existing run"
    ]
    assert not ledger.exists()
