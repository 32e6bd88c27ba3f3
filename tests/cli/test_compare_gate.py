"""A comparison too small to decide says so, and a gate on it does not pass silently."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import matrix_rows, write_jsonl
from trialbook.cli import main


def test_two_tasks_cannot_decide_and_the_gate_says_so(tmp_path: Path) -> None:
    # 2 tasks x 2 attempts: baseline 0/2 on each, candidate 1/2 on each (it printed +50 to +50 pp,
    # p = 0 and "improvement" before)
    base = write_jsonl(tmp_path / "a.jsonl", matrix_rows({"t1": [0, 0], "t2": [0, 0]}))
    cand = write_jsonl(tmp_path / "b.jsonl", matrix_rows({"t1": [1, 0], "t2": [0, 1]}))
    runner = CliRunner()
    doc = json.loads(
        runner.invoke(main, ["compare", str(base), str(cand), "--format", "json"]).output
    )
    assert doc["decision"] == "not enough tasks to decide"
    low, high = doc["difference"]["ci_low"], doc["difference"]["ci_high"]
    assert low <= 0 <= high
    text = runner.invoke(main, ["compare", str(base), str(cand)])
    assert text.exit_code == 0
    assert "too few tasks" in text.output
    for gate in ("fail-on-regression", "require-improvement"):
        gated = runner.invoke(main, ["compare", str(base), str(cand), "--gate", gate])
        assert gated.exit_code == 1, gate
        assert f"gate {gate}: NOT DECIDED" in gated.output
