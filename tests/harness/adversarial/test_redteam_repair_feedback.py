"""Red team: a repair round reads the oracle through the feedback of the round before.

Attacks (the agent is ``AGENT`` below, in both rounds): in round 0 the module it leaves prints every
file of ``$TRIALBOOK_ORACLE_DIR`` when the oracle test imports it; the bundled runner relays that to
its stdout, whose tail was round 1's ``TRIALBOOK_FEEDBACK``, and round 1 passed by returning the
expected value it read there. With no agent code at all the runner's own check reason,
``AssertionError: 'wrong' != 's3cr3t-...'``, handed round 1 the expected value the same way.

Expected (docs/harness.md, "Attempt protocols"): the feedback carries what the suite author chose
to reveal: by default the outcome and the named checks by name, never a reason or the grader's
output; ``feedback = "reasons"`` passes the reasons on (and ``suite freeze`` warns of it).
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.harness.adversarial._whom import Harness, harness  # noqa: F401  (fixture)
from tests.harness.test_run import TIERS, outside_tmp  # noqa: F401  (fixture)
from trialbook.cli import main
from trialbook.errors import SuiteError
from trialbook.harness import grading
from trialbook.suite import load_suite

SECRET = f"s3cr3t-{os.urandom(6).hex()}"
ORACLE_TEST = f"""import os, sys, unittest
sys.path.append(os.getcwd())
from solution import answer

class T(unittest.TestCase):
    def test_answer(self):
        self.assertEqual(answer(), {SECRET!r})
"""

PRINT_ORACLE = """import os, pathlib
for p in sorted(pathlib.Path(os.environ["TRIALBOOK_ORACLE_DIR"]).rglob("*")):
    if p.is_file():
        print(p.read_text())
"""
AGENT = r"""import os, re, sys
feedback = os.environ.get("TRIALBOOK_FEEDBACK")
told = open(feedback).read() if feedback else ""
print(told)
found = re.search(r"s3cr3t-[0-9a-f]{12}", told)
with open("solution.py", "w") as out:
    if not feedback and sys.argv[1] == "print-oracle":
        out.write(open(sys.argv[2]).read())
    out.write(f"def answer():\n    return {found.group(0) if found else 'wrong'!r}\n")
"""


def _run(
    harness: Harness, attack: str, tier: str, feedback: str | None = None
) -> list[dict[str, object]]:
    root = harness.work
    agent_dir = root / "agent"
    agent_dir.mkdir()
    (agent_dir / "agent.py").write_text(AGENT)
    (agent_dir / "print_oracle.py").write_text(PRINT_ORACLE)
    extra = 'protocol = "repair"\n' + (f'feedback = "{feedback}"\n' if feedback else "")
    # the runner of the trialbook under test, by its file (it imports nothing of trialbook)
    grader = f'python -I {harness.file(grading.__file__)} --checks "$TRIALBOOK_ORACLE_DIR"'
    rows = harness.run(
        root,
        {"t": {"grader": grader, "oracle": {"test_t.py": ORACLE_TEST}}},
        f"python {agent_dir / 'agent.py'} {attack} {agent_dir / 'print_oracle.py'}",
        tier,
        k=2,
        extra=extra,
    )
    return sorted(rows, key=lambda r: int(str(r["attempt_index"])))


def _told(root: Path, row: dict[str, object]) -> str:
    return (root / "out" / str(row["transcript"]) / "agent.stdout").read_text()


@pytest.mark.parametrize("attack", ["print-oracle", "read-the-reason"])
@pytest.mark.parametrize("tier", TIERS)
def test_the_next_round_is_not_told_the_oracle(harness: Harness, tier: str, attack: str) -> None:
    rows = _run(harness, attack, tier)
    told = _told(harness.work, rows[1])
    assert SECRET not in told, told
    assert [r["passed"] for r in rows] == [False, False]
    assert json.loads(told) == {
        "feedback": "checks",
        "attempt_index": 0,
        "passed": False,
        "status": "failed",
        "timed_out": False,
        "score": None,
        "checks": {"answer": False},  # which check failed, not why
    }


def test_reasons_are_passed_on_only_where_the_suite_allows_and_freeze_warns(
    harness: Harness,
) -> None:
    outside_tmp = harness.work
    rows = _run(harness, "read-the-reason", "process", feedback="reasons")
    assert [r["passed"] for r in rows] == [False, True]  # what the warning is about
    frozen = CliRunner().invoke(main, ["suite", "freeze", str(outside_tmp / "suite")])
    assert frozen.exit_code == 0, frozen.output
    assert "warning: task 't': its repair feedback (reasons) hands the next round the checks'" in (
        frozen.stderr
    )


def test_a_repair_suite_with_the_default_feedback_freezes_without_a_warning(
    tmp_path: Path,
) -> None:
    make_suite(tmp_path / "s", {"t": {}}, k=2, extra='protocol = "repair"\n')
    frozen = CliRunner().invoke(main, ["suite", "freeze", str(tmp_path / "s")])
    assert frozen.exit_code == 0, frozen.output
    assert "warning" not in frozen.stderr


def test_a_feedback_that_is_not_one_of_the_levels_is_refused_by_name(tmp_path: Path) -> None:
    make_suite(tmp_path / "s", {"t": {}}, k=2, extra='feedback = "everything"\n', freeze=False)
    with pytest.raises(SuiteError, match=r"suite\.toml: feedback: expected one of outcome, checks"):
        load_suite(tmp_path / "s")
