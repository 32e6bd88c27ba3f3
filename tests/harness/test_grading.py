"""The oracle test runner (trialbook.harness.grading) against workspaces that try to pass without
doing the task: exiting 0 on import, exiting 0 after the tests failed, printing a fake result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trialbook.harness.grading import class_check_name, expected_tests

TEST = """import os
import sys
import unittest

sys.path.append(os.getcwd())

from m import f  # noqa: E402


class T(unittest.TestCase):
    def test_one(self):
        self.assertEqual(f(1), 2)

    def test_two(self):
        self.assertEqual(f(2), 4)

    def helper(self):
        pass


class NotATest:
    def test_ignored(self):
        pass
"""


def _grade(tmp_path: Path, module: str, *flags: str) -> tuple[int, str]:
    oracle, workspace = tmp_path / "oracle", tmp_path / "ws"
    oracle.mkdir()
    workspace.mkdir()
    (oracle / "test_m.py").write_text(TEST)
    (workspace / "m.py").write_text(module)
    done = subprocess.run(
        [sys.executable, "-I", "-m", "trialbook.harness.grading", *flags, str(oracle)],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def test_the_tests_are_named_without_importing_them(tmp_path: Path) -> None:
    (tmp_path / "test_m.py").write_text(TEST + "\nraise SystemExit('imported')\n")
    assert expected_tests(tmp_path) == {"test_m.T.test_one", "test_m.T.test_two"}


def test_a_correct_module_passes(tmp_path: Path) -> None:
    code, last = _grade(tmp_path, "def f(x):\n    return 2 * x\n")
    assert (code, last) == (0, "grading: PASS: 2 test(s) passed")


def test_a_wrong_module_fails(tmp_path: Path) -> None:
    code, last = _grade(tmp_path, "def f(x):\n    return x + 1\n")  # right for 1, wrong for 2
    assert code == 1
    assert last == "grading: FAIL: 1 test(s) failed: test_m.T.test_two"


@pytest.mark.parametrize(
    "module",
    [
        "import os\nos._exit(0)\n",
        "import sys\nsys.exit(0)\n",
        "print('Ran 2 tests in 0.001s\\n\\nOK')\nimport os\nos._exit(0)\n",
    ],
    ids=["os._exit on import", "sys.exit on import", "fake output then exit"],
)
def test_a_module_that_ends_the_process_when_imported_fails(tmp_path: Path, module: str) -> None:
    code, last = _grade(tmp_path, module)
    assert code == 1
    assert last.startswith("grading: FAIL: "), last


def test_a_module_that_exits_0_after_the_tests_failed_fails(tmp_path: Path) -> None:
    module = "import atexit, os\natexit.register(os._exit, 0)\n\ndef f(x):\n    return 0\n"
    code, last = _grade(tmp_path, module)
    assert code == 1
    assert last == "grading: FAIL: 2 test(s) failed: test_m.T.test_one, test_m.T.test_two"


def test_an_oracle_without_tests_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "trialbook.harness.grading", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no unittest tests" in done.stderr


def test_with_checks_each_test_is_a_named_check_on_the_last_line(tmp_path: Path) -> None:
    code, last = _grade(tmp_path, "def f(x):\n    return x + 1\n", "--checks")
    assert code == 1
    checks = json.loads(last)["checks"]
    assert checks["one"] == {"passed": True, "reason": None}
    assert checks["two"]["passed"] is False
    assert checks["two"]["reason"] == "AssertionError: 3 != 4"  # f(2) = 3, the test wants 4


def test_with_class_checks_each_testcase_class_is_one_check(tmp_path: Path) -> None:
    code, last = _grade(tmp_path, "def f(x):\n    return x + 1\n", "--class-checks")
    assert code == 1
    assert json.loads(last) == {
        "checks": {"t": {"passed": False, "reason": "two: AssertionError: 3 != 4"}}
    }
    assert class_check_name("ExistingBehaviourKept") == "existing behaviour kept"
    assert class_check_name("TestHTTPServer") == "http server"


def test_forged_results_give_no_checks(tmp_path: Path) -> None:
    """A workspace that writes the runner's result pipe itself cannot name checks: nothing on the
    pipe is trusted then, and no checks line is printed."""
    module = (
        "import os\n"
        "for fd in range(3, 20):\n"
        "    try:\n"
        "        os.write(fd, b'not the protocol\\n')\n"
        "    except OSError:\n"
        "        pass\n"
        "def f(x):\n    return 2 * x\n"
    )
    code, last = _grade(tmp_path, module, "--checks")
    assert code == 1
    assert last == "grading: FAIL: the test process wrote something else on its result pipe"


def test_a_channel_that_says_failed_fails_an_exit_code_of_0() -> None:
    """The exit code comes through the wrapper shell, which the agent's code can ptrace; the
    verdict channel's ``"passed": false`` is the grader's own word (docs/harness.md)."""
    from trialbook.harness.attempt._verdict import read_verdict

    forged = read_verdict('{"passed": true}\n', True, (), channel='{"passed": false}\n')
    assert forged.passed is False
    assert "verdict channel said it failed" in forged.notes[0]
    assert read_verdict("", True, (), channel='{"passed": true}\n').passed is True
    assert read_verdict("", False, (), channel='{"passed": true}\n').passed is False
    # on stdout the key is no verdict (anyone holding stdout can append it)
    assert read_verdict('{"passed": false}\n', True, ()).passed is True


def test_the_runner_says_its_verdict_on_the_channel(tmp_path: Path) -> None:
    from trialbook.harness import grading
    from trialbook.harness.attempt._channel import VERDICT_VAR, VerdictChannel

    oracle, workspace = tmp_path / "oracle", tmp_path / "ws"
    oracle.mkdir()
    workspace.mkdir()
    (oracle / "test_m.py").write_text(TEST)
    (workspace / "m.py").write_text("def f(x):\n    return x + 1\n")
    channel = VerdictChannel(tmp_path)
    try:
        done = subprocess.run(
            # this tree's runner by its file (it imports nothing of trialbook)
            [sys.executable, "-I", grading.__file__, "--checks", str(oracle)],
            cwd=workspace,
            env={**os.environ, VERDICT_VAR: str(channel.path)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        said, others = channel.take()
    finally:
        channel.close()
    assert done.returncode == 1, done.stderr
    assert others == 0
    assert said is not None
    verdict = json.loads(said)
    assert verdict["passed"] is False
    assert verdict["checks"]["two"]["passed"] is False
