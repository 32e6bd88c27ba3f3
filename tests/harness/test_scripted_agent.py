"""trialbook.harness.testing: the scripted agent, through the real harness in both sandbox tiers.

(It tests a harness module; it sits beside the demo, its other user, until tests/harness/ takes it.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_suite
from trialbook.harness import RunOptions, bwrap_problem, run_suite
from trialbook.harness.testing import Attempt, ScriptedAgent
from trialbook.ledger import ledger_rows, read_ledger

TIERS = [
    "process",
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(
            bwrap_problem() is not None and not os.environ.get("CI"),
            reason=f"{bwrap_problem()} (CI installs it)",
        ),
    ),
]

CHECK = {"grader": "grep -q good a.txt"}


def _run(tmp_path: Path, agent: str, tier: str, *, k: int, timeout_s: float = 10) -> Any:
    suite = make_suite(tmp_path / "suite", {"t": CHECK, "u": CHECK}, k=k, timeout_s=timeout_s)
    ledger = tmp_path / "out" / "ledger.db"
    result = run_suite(
        RunOptions(suite=suite, agent=agent, ledger=ledger, system="s", sandbox=tier, grace_s=0.5)
    )
    rows = sorted(
        ledger_rows(read_ledger(ledger)), key=lambda r: (r["task_id"], r["attempt_index"])
    )
    return result, {(r["task_id"], r["attempt_index"]): r for r in rows}


@pytest.mark.parametrize("tier", TIERS)
def test_each_attempt_does_what_its_script_says(tmp_path: Path, tier: str) -> None:
    agent = ScriptedAgent(
        attempts={
            "t": [
                Attempt(files={"a.txt": "good"}, usage=({"tokens_in": 10, "cost": 0.5},)),
                Attempt(files={"a.txt": "bad"}, exit_code=3),
                Attempt(hang=True, files={"a.txt": "good"}),
            ]
        },
        default=Attempt(files={"a.txt": "good"}, leave_process=True),
    )
    result, rows = _run(tmp_path, agent.command(), tier, k=4, timeout_s=3)
    assert result.written == 8
    t0, t1, t2, t3 = (rows["t", i] for i in range(4))
    assert (t0["passed"], t0["tokens_in"], t0["cost"]) == (True, 10, 0.5)
    assert t1["passed"] is False
    assert "3" in t1["error"]
    for hung in (t2, t3):  # the last scripted attempt repeats
        assert (hung["timed_out"], hung["passed"]) == (True, False)
    for i in range(4):  # any other task: the default, which leaves a process behind
        u = rows["u", i]
        assert u["passed"] is True
        if tier == "process":  # (in bwrap it dies with the sandbox's pid namespace, unseen)
            assert "left behind were killed" in u["error"]


def test_the_script_round_trips_through_json() -> None:
    agent = ScriptedAgent(
        attempts={"t": [Attempt(say="hi", usage=({"tokens_in": 1},), files={"x/y.txt": "z"})]},
        default=Attempt(exit_code=1, copy_from="/somewhere"),
    )
    assert ScriptedAgent.from_json(agent.to_json()) == agent
    assert agent.attempt_for("t", 7) == agent.attempts["t"][0]
    assert agent.attempt_for("other", 0) == agent.default


def test_a_written_script_runs_on_its_own(tmp_path: Path) -> None:
    material = tmp_path / "material"
    (material / "pkg").mkdir(parents=True)
    (material / "pkg" / "fix.py").write_text("fixed = True\n")
    script = ScriptedAgent(
        attempts={"t": [Attempt(copy_from=str(material), usage=({"tool_calls": 2},), say="go")]}
    ).write(tmp_path / "agent")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    usage = tmp_path / "usage.jsonl"
    env = {
        **os.environ,
        "TRIALBOOK_TASK_ID": "t",
        "TRIALBOOK_ATTEMPT": "0",
        "TRIALBOOK_USAGE_FILE": str(usage),
    }
    done = subprocess.run(
        [str(script)], cwd=workspace, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["go"]
    assert (workspace / "pkg" / "fix.py").read_text() == "fixed = True\n"
    assert [json.loads(line) for line in usage.read_text().splitlines()] == [{"tool_calls": 2}]


def test_the_module_refuses_a_missing_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trialbook.harness.testing"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "usage:" in done.stderr
