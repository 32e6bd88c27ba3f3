"""Red team: an agent that fills the disk turns its own failure into an ``infra_error``.

Attack: the agent writes files in its workspace until the file system holding the run's scratch
folder is full (RLIMIT_FSIZE caps one file at 1 GiB, not how many files: nothing caps an attempt's
disk use), then exits 1. The harness then copies the oracle for the grader into the same scratch
folder, that copy fails with ENOSPC, and the OSError becomes ``status = infra_error`` ("harness
error: ... No space left on device"); ``score --drop-infra-errors`` then removes the failure (and a
full disk also breaks the concurrent attempts' workspaces and the ledger, when they share it).

Expected (docs/harness.md, "Whose failure": once the agent has run, what it did to the paths under
its attempt folder is its data; infra_error only for the harness's own failures): ``failed``, with
the reason in ``error``, or the disk use capped per attempt. Observed: ``infra_error``, both tiers.

The test mounts an 8 MiB tmpfs as the scratch folder's parent (root only) so the disk fills in
milliseconds. Suggested fix: cap each attempt's disk use (a size-limited tmpfs or a quota for the
workspace and io folder, and a free-space reserve checked before the oracle copy); once the agent
has run, an ENOSPC is the agent's failure.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_run import TIERS, outside_tmp, run  # noqa: F401  (fixture)

FILL = (
    "python -c \"f = open('fill', 'wb')\n"
    "try:\n"
    "    while True: f.write(b'x' * 65536)\n"
    "except OSError: pass\n"
    '"; exit 1'
)


@pytest.fixture
def small_tmpdir(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = outside_tmp / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tbred", str(mnt)], check=True)
    monkeypatch.setattr(tempfile, "tempdir", str(mnt))
    yield mnt
    monkeypatch.setattr(tempfile, "tempdir", None)
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("tier", TIERS)
def test_filling_the_disk_is_the_agents_failure(
    outside_tmp: Path,
    small_tmpdir: Path,
    tier: str,
) -> None:
    oracle = {"answer.txt": "x" * 200_000}
    (row,) = run(outside_tmp, {"t": {"grader": "true", "oracle": oracle}}, FILL, tier)
    assert row["status"] != "infra_error", row["error"]


# The agent runs out the file system's inodes instead of its bytes: empty files until none is left.
# The oracle copy's mkdtemp then fails with ENOSPC while most bytes are still free, so a check that
# counts bytes alone called the full disk the harness's (an infra_error, re-run by --rerun-infra).
EXHAUST_INODES = (
    'python -c "import os\n'
    "i = 0\n"
    "try:\n"
    "    while True:\n"
    "        os.close(os.open(f'f{i}', os.O_CREAT | os.O_WRONLY)); i += 1\n"
    "except OSError: pass\n"
    '"; exit 1'
)


@pytest.fixture
def few_inodes(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = outside_tmp / "few-inodes"
    mnt.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m,nr_inodes=3000", "tbinodes", str(mnt)], check=True
    )
    monkeypatch.setattr(tempfile, "tempdir", str(mnt))
    yield mnt
    monkeypatch.setattr(tempfile, "tempdir", None)
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("tier", TIERS)
def test_running_out_the_inodes_is_the_agents_failure(
    outside_tmp: Path, few_inodes: Path, tier: str
) -> None:
    oracle = {"answer.txt": "42\n"}
    (row,) = run(outside_tmp, {"t": {"grader": "true", "oracle": oracle}}, EXHAUST_INODES, tier)
    free = os.statvfs(few_inodes)
    assert free.f_bavail * free.f_frsize > 32 << 20, "the bytes were never short"
    assert row["status"] == "failed", row["error"]
    assert row["error"].startswith("the agent filled the disk (not graded)"), row["error"]
