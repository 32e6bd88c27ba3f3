"""Running tests as an unprivileged user from a root test run: the user, and a Python it can run
with this project's trialbook (this one, or a virtual environment made from a system Python 3.11+
and kept in /var/tmp per project folder: a Python under a root-only home folder, as pyenv in /root,
cannot be run by another user)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

__all__ = ["as_user", "checkout_for", "make_user", "python_for"]


def as_user(user: str, *argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
    """``argv`` run as ``user`` (runuser keeps the environment)."""
    return subprocess.run(
        ["runuser", "-u", user, "--", *argv],
        capture_output=True,
        text=True,
        check=False,
        **kw,  # type: ignore[arg-type]
    )


def make_user(user: str) -> str | None:
    """Why ``user`` cannot be had here (None: it exists now)."""
    if shutil.which("runuser") is None or shutil.which("useradd") is None:
        return "runuser/useradd are not installed"
    if subprocess.run(["id", user], capture_output=True, check=False).returncode != 0:
        made = subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/sh", user],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            return f"useradd {user} failed: {made.stderr.strip()}"
    return None


def checkout_for(user: str) -> Path:
    """THIS project's checkout as ``user`` can read it: the checkout itself, or, where the user
    cannot read it (a clone under /root, whose home folder is private), a copy of its source,
    tests and project files kept in /var/tmp per project folder and refreshed on every call
    (``python_for`` installs it, editable, in a Python of its own)."""
    if as_user(user, "test", "-r", str(ROOT / "src" / "trialbook" / "__init__.py")).returncode == 0:
        return ROOT
    digest = hashlib.sha256(bytes(ROOT)).hexdigest()[:12]
    copy = Path(f"/var/tmp/trialbook-test-checkout-{digest}")
    shutil.rmtree(copy, ignore_errors=True)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".test-work")
    copy.mkdir()
    for name in ("src", "tests"):
        shutil.copytree(ROOT / name, copy / name, ignore=skip)
    for entry in ROOT.iterdir():  # pyproject.toml, setup.py, README.md...: what an install reads
        if entry.is_file() and not entry.name.startswith("."):
            shutil.copy(entry, copy / entry.name)
    subprocess.run(["chmod", "-R", "a+rX", str(copy)], check=True)
    return copy


def _runs_the_tests(user: str, python: str, checkout: Path) -> bool:
    """Whether ``user`` can run ``python`` with pytest and the trialbook of ``checkout``, also
    with ``-I`` (which ignores PYTHONPATH: the demo graders run ``python -I -m ...``)."""
    check = "import pytest, pytest_timeout, trialbook; print(trialbook.__file__)"
    done = as_user(user, python, "-I", "-c", check, cwd="/")
    here = str(checkout / "src" / "trialbook" / "__init__.py")
    return done.returncode == 0 and done.stdout.strip() == here


def python_for(user: str, checkout: Path = ROOT) -> tuple[str | None, str]:
    """A Python ``user`` can run the tests with, THIS project's trialbook installed from
    ``checkout`` (the checkout, or its copy: ``checkout_for``), or None and why there is none."""
    if _runs_the_tests(user, sys.executable, checkout):
        return sys.executable, ""
    digest = hashlib.sha256(bytes(checkout)).hexdigest()[:12]
    venv = Path(f"/var/tmp/trialbook-test-user-venv-{digest}")
    python = str(venv / "bin" / "python")
    if venv.exists() and _runs_the_tests(user, python, checkout):
        return python, ""
    system = next(
        (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if _is_311_or_later(p)), None
    )
    if system is None:
        return None, f"{user} cannot run {sys.executable} and there is no system Python 3.11+"
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [system, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "-q", "-e", str(checkout), "pytest", "pytest-timeout"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0:
            return None, f"could not make a Python for {user}: {done.stderr.strip()[-300:]}"
    if not _runs_the_tests(user, python, checkout):
        return None, f"{user} cannot run {python} (a folder on its path is private)"
    return python, ""


def _is_311_or_later(python: str) -> bool:
    if not os.access(python, os.X_OK):
        return False
    check = "import sys; sys.exit(sys.version_info < (3, 11))"
    return subprocess.run([python, "-c", check], check=False).returncode == 0
