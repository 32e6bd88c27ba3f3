"""The hostile-agent tests again, with the harness run by an unprivileged user (issue 12: "as root
in CI and, where the machine allows, as an unprivileged user too").

Run as root, this test makes (or reuses) the user ``tbhostile`` and runs the hostile modules as that
user in a subprocess, with this Python if the user can run it, else with a virtual environment made
from a system Python 3.11+ the user can run (a Python under a root-only home folder, as with pyenv
in /root, cannot be run by another user; the environment is kept in /var/tmp for the next run). Where
the user cannot read the project (a clone under /root) it runs a copy of the project's source and
tests kept in /var/tmp (``_users.checkout_for``). The machine allows it only when such a Python
exists: otherwise the test says what is missing and skips, and under CI (root, so it can always
make the user) it fails. Run as a user already, the modules run directly, so there is
nothing to add here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.harness._users import as_user, checkout_for, make_user, python_for

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
        if os.environ.get("CI"):
            pytest.fail(f"CI runs as root and must run this as {USER}: {problem}")
        pytest.skip(f"the machine does not allow a run as an unprivileged user: {problem}")
    checkout = checkout_for(USER)  # a copy where the user cannot read this one (under /root)
    python, why = python_for(USER, checkout)
    if python is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs as root and must run this as {USER}: {why}")
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
            cwd=checkout,
            timeout=850,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
