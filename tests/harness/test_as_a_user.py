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

import hashlib
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


def _make_user() -> str | None:
    """Why the user cannot be had here (None: it exists)."""
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
    return None


def _runs_the_tests(python: str) -> bool:
    """Whether the user can run ``python`` with pytest and THIS project's trialbook."""
    check = "import pytest, pytest_timeout, trialbook; print(trialbook.__file__)"
    done = _as_user(python, "-c", check)
    here = str(ROOT / "src" / "trialbook" / "__init__.py")
    return done.returncode == 0 and done.stdout.strip() == here


def _user_python() -> tuple[str | None, str]:
    """A Python the user can run the tests with, or None and why there is none."""
    if _runs_the_tests(sys.executable):
        return sys.executable, ""
    venv = Path(f"/var/tmp/trialbook-test-user-venv-{hashlib.sha256(bytes(ROOT)).hexdigest()[:12]}")
    python = str(venv / "bin" / "python")
    if venv.exists() and _runs_the_tests(python):
        return python, ""
    system = next(
        (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if _is_311_or_later(p)), None
    )
    if system is None:
        return None, f"{USER} cannot run {sys.executable} and there is no system Python 3.11+"
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [system, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "-q", "-e", str(ROOT), "pytest", "pytest-timeout"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0:
            return None, f"could not make a Python for {USER}: {done.stderr.strip()[-300:]}"
    if not _runs_the_tests(python):
        return None, f"{USER} cannot run {python} (a folder on its path is private)"
    return python, ""


def _is_311_or_later(python: str) -> bool:
    if not os.access(python, os.X_OK):
        return False
    check = "import sys; sys.exit(sys.version_info < (3, 11))"
    return subprocess.run([python, "-c", check], check=False).returncode == 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_hostile_tests_hold_with_the_harness_run_by_an_unprivileged_user() -> None:
    if os.geteuid() != 0:
        pytest.skip("already an unprivileged user: the hostile modules ran as this user")
    problem = _make_user()
    if problem:
        pytest.skip(f"the machine does not allow a run as an unprivileged user: {problem}")
    if _as_user("test", "-r", str(ROOT / "tests" / "conftest.py")).returncode != 0:
        pytest.skip(f"the machine does not allow a run as {USER}: it cannot read {ROOT}")
    python, why = _user_python()
    if python is None:
        pytest.skip(f"the machine does not allow a run as an unprivileged user: {why}")
    work = Path(tempfile.mkdtemp(prefix="tb-user-", dir="/var/tmp"))
    shutil.chown(work, USER)
    try:
        done = _as_user(
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
