"""The hostile-agent tests again, with the harness run by an unprivileged user (issue 12: "as root
in CI and, where the machine allows, as an unprivileged user too").

Run as root, this test makes (or reuses) the user ``tbhostile`` and runs the hostile modules as that
user in a subprocess, with this Python if the user can run it, else with a virtual environment made
from a system Python 3.11+ the user can run (a Python under a root-only home folder, as with pyenv
in /root, cannot be run by another user; the environment is kept in /var/tmp for the next run). The
machine allows it only when such a Python exists and the user can read the project: otherwise the
test says what is missing and skips. Run as a user already, the modules run directly, so there is
nothing to add here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.harness._users import as_user, make_user, python_for

USER = "tbhostile"
MODULES = [
    "tests/harness/test_hostile_sandbox_bwrap.py",
    "tests/harness/test_hostile_attempt.py",
    "tests/harness/test_hostile_sandbox_process.py",
    "tests/harness/test_hostile_sandbox_limits.py",
    "tests/demo/test_hostile_graders.py",
    "tests/harness/adversarial",
]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_hostile_tests_hold_with_the_harness_run_by_an_unprivileged_user() -> None:
    if os.geteuid() != 0:
        pytest.skip("already an unprivileged user: the hostile modules ran as this user")
    problem = make_user(USER)
    if problem:
        pytest.skip(f"the machine does not allow a run as an unprivileged user: {problem}")
    if as_user(USER, "test", "-r", str(ROOT / "tests" / "conftest.py")).returncode != 0:
        pytest.skip(f"the machine does not allow a run as {USER}: it cannot read {ROOT}")
    python, why = python_for(USER)
    if python is None:
        pytest.skip(f"the machine does not allow a run as an unprivileged user: {why}")
    work = Path(tempfile.mkdtemp(prefix="tb-user-", dir="/var/tmp"))
    shutil.chown(work, USER)
    try:
        done = as_user(
            USER,
            "env",
            f"HOME=/home/{USER}",
            f"TRIALBOOK_TEST_WORK={work}",
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={work / 'pytest'}",
            *MODULES,
            cwd=ROOT,
            timeout=850,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
