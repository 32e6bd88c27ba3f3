"""The project layout of docs/harness.md, run as an unprivileged user in both tiers (the rest of the
suite runs as root here and in CI)."""

from __future__ import annotations

import os
import pwd
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.harness._users import python_for
from tests.harness.test_project import TASKS, make_project
from tests.harness.test_run import TIERS


def _unprivileged() -> tuple[int, int, str]:
    if os.geteuid() != 0:
        pytest.skip("this process is unprivileged already: every other test runs as such a user")
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user to run as")
    python, why = python_for("nobody")
    if python is None:
        pytest.skip(f"the machine does not allow a run as 'nobody': {why}")
    return user.pw_uid, user.pw_gid, python


@pytest.fixture
def project_as_nobody() -> Any:
    uid, gid, python = _unprivileged()
    base = ROOT / ".test-work"
    base.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=base))
    make_project(folder)
    (folder / "trialbook.toml").write_text(
        'suite = "suite"\nagent = "./agent.sh"\nledger = "runs.db"\nsystem = "mine"\n'
    )
    for path in (folder, *folder.rglob("*")):
        os.chown(path, uid, gid)
    folder.chmod(0o755)
    yield folder, uid, gid, python
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("tier", TIERS)
def test_the_documented_layout_runs_as_an_unprivileged_user(
    project_as_nobody: tuple[Path, int, int, str], tier: str
) -> None:
    root, uid, gid, python = project_as_nobody
    trialbook = [python, "-m", "trialbook"]
    done = subprocess.run(
        [*trialbook, "run", "--sandbox", tier],
        cwd=root,
        user=uid,
        group=gid,
        extra_groups=[],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"({tier} sandbox)" in " ".join(done.stdout.split())  # the line wraps at 80 columns
    with sqlite3.connect(root / "runs.db") as conn:
        statuses = [s for (s,) in conn.execute("SELECT status FROM attempts")]
    assert statuses == ["passed"] * len(TASKS)
