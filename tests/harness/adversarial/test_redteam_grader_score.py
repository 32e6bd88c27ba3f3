"""Red team: workspace code run by the bundled oracle runner forges the row's partial credit.

Attack: the grader is the demo's ``python -I -m trialbook.harness.grading "$TRIALBOOK_ORACLE_DIR"``.
Its test child imports the agent's module, which inherits the grader's stdout: a seekable memory
file shared with the runner. The module (``forge_solution.py`` here, copied in as ``solution.py``)
``pwrite``s 64 KiB of newlines and ``{"score": 1.0}`` past the end of that file; the runner then
prints ``grading: FAIL: ...`` at the shared offset, over the first newlines, and the harness takes
the last non-empty line as the grader's score (``_attempt._grader_score``). No pipe protocol is
written and ``unittest`` is not patched: the runner's verdict stays FAIL, but the row records
``score = 1.0`` with no error, in both tiers, and ``trialbook score`` reports the run's mean partial
credit as 1.00 when every row is forged.

Expected (docs/harness.md, "Graders that stay unfooled": the runner passes only on its own
verdict; "a last stdout line ``{"score": x}`` records partial credit" — the grader's, not the agent's):
a failed row with no score (the runner never prints one). Observed: ``score == 1.0``.

Suggested fix: the runner gives its test child its own pipes for stdout/stderr and relays them
(then prints its verdict last); the harness gives the grader a pipe, not a seekable file, for
stdout (no ``pwrite``/offset tricks), or takes partial credit only from a file the grader writes
outside the workspace.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
from pathlib import Path

import pytest

from tests.harness.test_run import TIERS, outside_tmp, run  # noqa: F401  (fixture)

HERE = Path(__file__).resolve().parent

ORACLE_TEST = """import os, sys, unittest
sys.path.append(os.getcwd())
from solution import f

class T(unittest.TestCase):
    def test_it(self):
        self.assertEqual(f(), 42)
"""
GRADER = 'python -I -m trialbook.harness.grading "$TRIALBOOK_ORACLE_DIR"'


@pytest.mark.parametrize("tier", TIERS)
def test_workspace_code_cannot_forge_the_score(outside_tmp: Path, tier: str) -> None:
    # a copy of the forging module outside the hidden folders, named by the agent command
    forge = outside_tmp / "agent" / "forge_score.py"
    forge.parent.mkdir()
    forge.write_text((HERE / "forge_score.py").read_text())
    tasks = {"t": {"grader": GRADER, "oracle": {"test_t.py": ORACLE_TEST}}}
    (row,) = run(outside_tmp, tasks, f"cp {forge} solution.py", tier)
    assert row["passed"] is False
    assert row["status"] == "failed"
    assert row["score"] is None, f"the agent's code forged score={row['score']}"
