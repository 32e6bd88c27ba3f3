"""The messages a new user meets first: each says what to do once, in one wording, before
anything else is printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.conftest import base_row, make_suite, write_jsonl
from trialbook.cli import main


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_run_id_that_exists_says_resume_or_leave_it_out(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {"grader": "true"}}, k=1)
    ledger = tmp_path / "l.db"
    args = ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", "process"]
    assert invoke(*args, "--run-id", "r1").exit_code == 0
    again = invoke(*args, "--run-id", "r1")
    assert again.exit_code == 2
    assert again.output.splitlines() == [
        f"trialbook: error: --run-id: run 'r1' already exists in {ledger}: to finish it, "
        "--resume r1; for a new run, leave out --run-id (or give a new id)"
    ]


def test_a_missing_lock_gives_its_advice_once(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {"grader": "true"}}, k=1, freeze=False)
    out = invoke("run", str(suite), "--agent", "true", "--ledger", str(tmp_path / "l.db"))
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"trialbook: error: {suite}: the suite has no lock: run 'trialbook suite freeze {suite}' "
        "first"
    ]
    assert not (tmp_path / "l.db").exists()


def test_a_missing_file_is_said_in_one_wording_by_every_command(tmp_path: Path) -> None:
    nope = tmp_path / "nope.db"
    want = f"trialbook: error: {nope}: no such file"
    for args in (
        ["score", str(nope)],
        ["runs", str(nope)],
        ["report", str(nope), "-o", str(tmp_path / "r.html")],
        ["budget", str(nope)],
        ["export", str(nope), "--format", "jsonl"],
        ["compare", str(nope), str(nope)],
        ["compare", str(nope)],
    ):
        out = invoke(*args)
        assert out.exit_code == 2, args
        assert out.output.splitlines() == [want], args
    resume = invoke("run", "--resume", "r1", "--ledger", str(nope))
    assert resume.exit_code == 2
    assert resume.output.splitlines() == [
        f"trialbook: error: --resume: {nope}: no such file (no ledger to resume from)"
    ]


def test_the_too_few_tasks_warning_stays_visible_in_markdown(tmp_path: Path) -> None:
    rows = [base_row(f"t{i}", a, passed=a < i, k=2) for i in range(3) for a in range(2)]
    out = invoke("score", str(write_jsonl(tmp_path / "l.jsonl", rows)), "--format", "markdown")
    assert out.exit_code == 0
    head, _, _ = out.output.partition("<details>")  # before the first folded section
    assert "> **warning:** too few tasks for a reliable interval: 3 task(s)" in head
    assert out.output.count("too few tasks for a reliable interval: 3") == 1
    doc = json.loads(
        invoke("score", str(tmp_path / "l.jsonl"), "--format", "json").output
    )  # the note itself is unchanged
    assert any(n.startswith("too few tasks") for n in doc["runs"][0]["notes"])
