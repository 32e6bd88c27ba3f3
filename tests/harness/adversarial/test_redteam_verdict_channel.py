"""Red team: code the grader runs appends its own verdict after the grader's.

Attack (``forge_verdict.py``): the agent leaves a module that the grader's code imports. The
bundled oracle runner makes itself undumpable, but its ancestors are not: the harness's
``/bin/sh -c`` wrapper and, in the bwrap tier, bwrap's init both hold the grader's captured stdout
as their fd 1. The module opens ``/proc/PID/fd/1`` of each, leaves a daemon that waits for the
grader's last lines and appends ``{"checks": {"it": passed}, "score": 1.0, "task": true}`` after
them. With the bundled runner a failed row got ``score = 1.0`` and a forged passing check; with a
careful custom grader (undumpable, its verdict printed last, ``"task": false``) the row went from
failed to passed, with no note.

Expected (docs/harness.md, "The verdict channel"): the verdict is read from a channel that no
process of the sandbox can hold, so neither forges anything.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import json
from pathlib import Path

import pytest

from tests.harness.adversarial._whom import Harness, harness  # noqa: F401  (fixture)
from tests.harness.test_run import TIERS, outside_tmp, transcript  # noqa: F401  (fixture)
from trialbook.harness import grading

HERE = Path(__file__).resolve().parent

ORACLE_TEST = """import os, sys, unittest
sys.path.append(os.getcwd())
from solution import f

class T(unittest.TestCase):
    def test_it(self):
        self.assertEqual(f(), 42)
"""

# A careful custom grader: undumpable, runs the agent's code in a child whose output it relays, and
# says its verdict last: the task was not done. Where the harness offers the verdict channel it
# sends the verdict there (connected before any of the agent's code runs).
CAREFUL_GRADER = r"""import ctypes, json, os, socket, subprocess, sys
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
path = os.environ.get("TRIALBOOK_VERDICT_SOCKET")
channel = None
if path:
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    channel.connect(path)
child = subprocess.run(
    [sys.executable, "-I", "-c", "import sys, os; sys.path.append(os.getcwd()); import solution; print(solution.f())"],
    capture_output=True, text=True,
)
sys.stdout.write(child.stdout)
done = child.stdout.strip() == "42"
verdict = json.dumps({"task": done})
if channel is not None:
    channel.sendall(verdict.encode() + b"\n")
    channel.close()
print("verdict-printed")
print(verdict, flush=True)
"""


def _agent(outside_tmp: Path) -> str:
    forge = outside_tmp / "agent" / "forge_verdict.py"
    forge.parent.mkdir()
    forge.write_text((HERE / "forge_verdict.py").read_text())
    return f"cp {forge} solution.py"


@pytest.mark.parametrize("checks", ["--checks", ""])
@pytest.mark.parametrize("tier", TIERS)
def test_code_the_runner_runs_cannot_append_a_verdict(
    harness: Harness, tier: str, checks: str
) -> None:
    # the runner of the trialbook under test, by its file (it imports nothing of trialbook), which is
    # what `python -I -m trialbook.harness.grading` runs where trialbook is installed from this tree
    grader = f'python -I {harness.file(grading.__file__)} {checks} "$TRIALBOOK_ORACLE_DIR"'
    tasks = {"t": {"grader": grader, "oracle": {"test_t.py": ORACLE_TEST}}}
    (row,) = harness.run(harness.work, tasks, _agent(harness.work), tier)
    stdout = transcript(harness.work, row, "grader.stdout")
    assert row["status"] == "failed", row
    assert row["score"] is None, f"forged score={row['score']}; grader stdout: {stdout[-400:]}"
    assert "1 later connection(s) to the verdict channel ignored" in row["error"], row["error"]
    if checks:
        assert json.loads(row["checks"])["it"]["passed"] is False, row["checks"]
    else:
        assert row["checks"] is None, row["checks"]


@pytest.mark.parametrize("tier", TIERS)
def test_code_a_careful_grader_runs_cannot_append_a_verdict(harness: Harness, tier: str) -> None:
    tasks = {
        "t": {
            "grader": 'python -I "$TRIALBOOK_ORACLE_DIR/grade.py"',
            "oracle": {"grade.py": CAREFUL_GRADER},
            "toml": ['outcomes = ["task"]'],
        }
    }
    (row,) = harness.run(harness.work, tasks, _agent(harness.work), tier)
    stdout = transcript(harness.work, row, "grader.stdout")
    assert row["task_outcome"] is False, f"forged: {row}; grader stdout: {stdout[-400:]}"
    assert row["passed"] is False
    assert row["status"] == "failed"
    assert "1 later connection(s) to the verdict channel ignored" in row["error"], row["error"]
