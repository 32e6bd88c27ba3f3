"""The hostile-agent tests again, with the harness run by an unprivileged user (issue 12: "as root
in CI and, where the machine allows, as an unprivileged user too").

Run as root, this test makes (or reuses) the user ``tbhostile`` and runs the hostile modules as that
user in a subprocess. The machine allows it only when that user can run this Python and read the
project (a Python under a root-only home folder, as with pyenv in /root, cannot be run by another
user): otherwise the test says which of the two is missing and skips. Run as a user already, the
modules run directly, so there is nothing to add here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

USER = "tbhostile"
MODULES = [
    "tests/harness/test_hostile_sandbox_bwrap.py",
    "tests/harness/test_hostile_attempt.py",
    "tests/harness/test_hostile_sandbox_process.py",
    "tests/harness/test_hostile_sandbox_limits.py",
    "tests/demo/test_hostile_graders.py",
]


def _as_user(*argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["runuser", "-u", USER, "--", *argv],
        capture_output=True,
        text=True,
        check=False,
        **kw,  # type: ignore[arg-type]
    )


def _user_can_run_the_tests() -> str | None:
    """Why the user cannot run the tests here (None: it can)."""
    if shutil.which("runuser") is None or shutil.which("useradd") is None:
        return "runuser/useradd are not installed"
    if subprocess.run(["id", USER], capture_output=True, check=False).returncode != 0:
        made = subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/sh", USER],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            return f"useradd {USER} failed: {made.stderr.strip()}"
    if _as_user(sys.executable, "-c", "import trialbook, pytest").returncode != 0:
        return (
            f"{USER} cannot run {sys.executable} with trialbook (a folder on its path is private)"
        )
    if _as_user("test", "-r", str(ROOT / "tests" / "conftest.py")).returncode != 0:
        return f"{USER} cannot read the project at {ROOT}"
    return None


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_hostile_tests_hold_with_the_harness_run_by_an_unprivileged_user() -> None:
    if os.geteuid() != 0:
        pytest.skip("already an unprivileged user: the hostile modules ran as this user")
    problem = _user_can_run_the_tests()
    if problem:
        pytest.skip(f"the machine does not allow a run as an unprivileged user: {problem}")
    work = Path(tempfile.mkdtemp(prefix="tb-user-", dir="/var/tmp"))
    shutil.chown(work, USER)
    try:
        done = _as_user(
            "env",
            f"HOME=/home/{USER}",
            f"TRIALBOOK_TEST_WORK={work}",
            sys.executable,
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
