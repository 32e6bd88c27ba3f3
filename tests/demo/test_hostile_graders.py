"""The shipped graders against an agent that shadows the test runner (issue 12, item 5): a workspace
``unittest/`` package that exits 0 must not pass any demo task, and ``grader-check`` must catch a
grader that would be fooled by one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main
from trialbook.demo import SUITE_DIR
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.sandbox._sandbox import bwrap_problem
from trialbook.ledger import ledger_rows, read_ledger
from trialbook.suite import load_suite

pytestmark = pytest.mark.timeout(300)

SHADOW = (
    "mkdir -p unittest && "
    "printf 'import sys\\nsys.exit(0)\\n' > unittest/__main__.py && "
    "printf 'import os\\nos._exit(0)\\n' > unittest/__init__.py && "
    "cp unittest/__init__.py sitecustomize.py"
)
"""An agent that does not do the task but plants a test runner that always succeeds."""


def test_no_demo_task_passes_an_agent_that_shadows_unittest(tmp_path: Path) -> None:
    assert _smoke_statuses(tmp_path, SHADOW) == ["failed"] * 15


def test_the_workspace_modules_of_the_demo_shadow_nothing_installed() -> None:
    """The oracle tests append the workspace LAST to sys.path: sound only if no name they import
    from it is found before it (in the standard library or site-packages)."""
    names = set()
    for task in load_suite(SUITE_DIR).tasks:
        for test in task.oracle.glob("test_*.py"):
            names |= set(re.findall(r"^from (\w+) import", test.read_text(), re.M))
    assert len(names) >= 21
    found = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import importlib.util, sys; "
            "print([n for n in sys.argv[1:] if importlib.util.find_spec(n) is not None])",
            *sorted(names),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "[]"


def test_grader_check_catches_a_grader_that_imports_from_the_workspace(tmp_path: Path) -> None:
    test = "import unittest\n\nfrom m import f\n\n\nclass T(unittest.TestCase):\n"
    test += "    def test_f(self):\n        self.assertEqual(f(), 1)\n"
    fooled = 'python -m unittest discover -s "$TRIALBOOK_ORACLE_DIR" -p "test_*.py"'
    task = {
        "grader": fooled,
        "fixture": {"m.py": "def f():\n    return 0\n"},
        "oracle": {"test_m.py": test},
        "reference": {"m.py": "def f():\n    return 1\n"},
    }
    root = make_suite(tmp_path / "s", {"t": task})
    out = CliRunner().invoke(
        main, ["grader-check", str(root), "--sandbox", "process", "--format", "json"]
    )
    assert out.exit_code == 1, out.output
    data = json.loads(out.output)
    bad = [c for c in data["cases"] if c["verdict"] != "ok"]
    assert [c["case"] for c in bad] == ["decoy:shadow-stdlib", "decoy:exit-on-import"]


def test_grader_check_catches_a_grader_that_judges_the_process_importing_the_agent(
    tmp_path: Path,
) -> None:
    """Isolated (``-I``, oracle tests run from the oracle folder) yet fooled: the exit code is that
    of the process that imported the agent's module. The runner in trialbook.harness.grading is not."""
    test = "import os\nimport sys\nimport unittest\n\nsys.path.append(os.getcwd())\n"
    test += "from m import f  # noqa: E402\n\n\nclass T(unittest.TestCase):\n"
    test += "    def test_f(self):\n        self.assertEqual(f(), 1)\n"
    fooled = 'python -I -m unittest discover -s "$TRIALBOOK_ORACLE_DIR" -t "$TRIALBOOK_ORACLE_DIR"'
    runner = 'python -I -m trialbook.harness.grading "$TRIALBOOK_ORACLE_DIR"'
    verdicts = {}
    for name, grader in (("fooled", fooled), ("runner", runner)):
        task = {
            "grader": grader,
            "fixture": {"m.py": "def f():\n    return 0\n"},
            "oracle": {"test_m.py": test},
            "reference": {"m.py": "def f():\n    return 1\n"},
        }
        root = make_suite(tmp_path / name, {"t": task})
        out = CliRunner().invoke(
            main, ["grader-check", str(root), "--sandbox", "process", "--format", "json"]
        )
        data = json.loads(out.output)
        verdicts[name] = (out.exit_code, [c["case"] for c in data["cases"] if c["verdict"] != "ok"])
    assert verdicts["fooled"] == (1, ["decoy:exit-on-import"])
    assert verdicts["runner"] == (0, [])


def _oracle_imports(task_dir: Path) -> set[str]:
    return {
        name
        for test in (task_dir / "oracle").glob("test_*.py")
        for name in re.findall(r"^from (\w+) import", test.read_text(), re.M)
    }


def test_no_demo_task_passes_an_agent_whose_modules_exit_0_when_imported(tmp_path: Path) -> None:
    """The agent writes the modules the task asks for (their names are in the prompts) so that
    importing one ends the process with exit 0: a grader that runs the oracle tests in the process
    that imports them passes every task (found after issue 12's first round)."""
    suite = load_suite(SUITE_DIR)
    smoke = [t for t in suite.tasks if t.id in suite.subsets["smoke"]]
    names = sorted(set().union(*(_oracle_imports(t.dir) for t in smoke)))
    agent = "; ".join(f"printf 'import os\\nos._exit(0)\\n' > {n}.py" for n in names)
    assert _smoke_statuses(tmp_path, agent) == ["failed"] * 15


def _smoke_statuses(tmp_path: Path, agent: str) -> list[str]:
    """The statuses of ``agent``'s 15 attempts (smoke subset, k = 5) on the bundled suite, in the
    strongest tier here."""
    tier = "bwrap" if bwrap_problem() is None else "process"
    ledger = tmp_path / "ledger.db"
    result = run_suite(
        RunOptions(
            suite=SUITE_DIR,
            agent=agent,
            ledger=ledger,
            system="hostile",
            sandbox=tier,
            run_id=f"test-{uuid.uuid4().hex}",
            subset="smoke",
            jobs=2,
            grace_s=0.5,
        )
    )
    assert not result.interrupted
    return [str(r["status"]) for r in ledger_rows(read_ledger(ledger))]
