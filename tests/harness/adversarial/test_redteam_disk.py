"""Red team: an agent that fills the disk, of bytes or of inodes, must not starve the harness.

Attack: the agent writes files in its workspace until the file system is full (RLIMIT_FSIZE caps
one file at 1 GiB, not how many files), or makes empty files until no inode is left, then exits 1.
When the harness's own files share that file system, the oracle copy for the grader then fails
with ENOSPC, and the OSError became ``status = infra_error`` (``score --drop-infra-errors`` then
removed the failure; ``--rerun-infra`` re-rolled it).

Where the harness can mount (root), each attempt's workspace and io folder are a tmpfs of the task's
``scratch_mb`` and ``scratch_inodes`` (docs/harness.md, "The attempt's scratch"): the agent fills
that, the oracle copy, the grader and the file system around them are untouched, and the attempt
is graded on what it left. Where it cannot (an unprivileged harness), the run's notes say so once
and a full disk after the agent ran is the agent's failure, not graded.

Each test runs the harness as root and as the unprivileged user (``_whom.harness``); the small
file systems they need are mounted by the test as root, so they need root (CI is root).
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run and _whom)
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.adversarial._whom import USER, Harness, harness  # noqa: F401  (fixture)
from tests.harness.test_run import TIERS, outside_tmp, transcript  # noqa: F401  (fixture)
from trialbook.harness.attempt import _attempt
from trialbook.harness.sandbox import _fs

FILL = (
    "python -c \"f = open('fill', 'wb')\n"
    "try:\n"
    "    while True: f.write(b'x' * 65536)\n"
    "except OSError: pass\n"
    '"; exit 1'
)
EXHAUST_INODES = (
    'python -c "import os\n'
    "i = 0\n"
    "try:\n"
    "    while True:\n"
    "        os.close(os.open(f'f{i}', os.O_CREAT | os.O_WRONLY)); i += 1\n"
    "except OSError: pass\n"
    '"; exit 1'
)
NOT_BOUNDED = "attempt scratch not bounded here"


def _small_tmpfs(harness: Harness, monkeypatch: pytest.MonkeyPatch, options: str) -> Iterator[Path]:
    """A small tmpfs as the harness's temporary folder (its run folder goes there)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = harness.work / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tbred", str(mnt)], check=True)
    harness.give(mnt)
    harness.tmpdir = mnt
    monkeypatch.setattr(tempfile, "tempdir", str(mnt))
    try:
        yield mnt
    finally:
        monkeypatch.setattr(tempfile, "tempdir", None)
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def not_bounded(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> Harness:
    """The harness gets no bounded scratch: the user's cannot mount; root's is told it cannot."""
    if harness.who == "root":
        monkeypatch.setattr(_fs, "bound_problem", lambda: "the test says so")
        monkeypatch.setattr(_attempt, "bound_problem", lambda: "the test says so")
    return harness


@pytest.fixture
def small_tmpdir(not_bounded: Harness, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from _small_tmpfs(not_bounded, monkeypatch, "size=8m")


@pytest.fixture
def few_inodes(not_bounded: Harness, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from _small_tmpfs(not_bounded, monkeypatch, "size=64m,nr_inodes=3000")


def _said_once(harness: Harness, rows: list[dict[str, object]]) -> None:
    """The run's notes say once that the scratch is not bounded (the user's run prints them)."""
    if harness.who != "root":
        assert harness.output.count(NOT_BOUNDED) == 1, harness.output
    assert NOT_BOUNDED not in str(rows[0]["error"])  # the run's, not each row's


@pytest.mark.parametrize("tier", TIERS)
def test_filling_an_unbounded_disk_is_the_agents_failure(
    not_bounded: Harness, small_tmpdir: Path, tier: str
) -> None:
    oracle = {"answer.txt": "x" * 200_000}
    tasks = {"t": {"grader": "true", "oracle": oracle}}
    rows = not_bounded.run(not_bounded.work, tasks, FILL, tier)
    (row,) = rows
    assert row["status"] == "failed", row["error"]
    assert str(row["error"]).startswith("the agent filled the disk (not graded)"), row["error"]
    _said_once(not_bounded, rows)


# The agent runs out the file system's inodes instead of its bytes: empty files until none is left.
# The oracle copy's mkdtemp then fails with ENOSPC while most bytes are still free, so a check that
# counts bytes alone called the full disk the harness's (an infra_error, re-run by --rerun-infra).
@pytest.mark.parametrize("tier", TIERS)
def test_running_out_the_inodes_of_an_unbounded_disk_is_the_agents_failure(
    not_bounded: Harness, few_inodes: Path, tier: str
) -> None:
    oracle = {"answer.txt": "42\n"}
    tasks = {"t": {"grader": "true", "oracle": oracle}}
    rows = not_bounded.run(not_bounded.work, tasks, EXHAUST_INODES, tier)
    (row,) = rows
    free = os.statvfs(few_inodes)
    assert free.f_bavail * free.f_frsize > 32 << 20, "the bytes were never short"
    assert row["status"] == "failed", row["error"]
    assert str(row["error"]).startswith("the agent filled the disk (not graded)"), row["error"]
    _said_once(not_bounded, rows)


# The bounded scratch: the grader reports what is free on the file system of the oracle copy (the
# harness's own files, outside the bound) while it runs, reads the oracle, and passes only when the
# workspace holds the expected answer.
GRADE = """import os, sys
oracle = os.environ["TRIALBOOK_ORACLE_DIR"]
outer = os.statvfs(oracle)
print("outer", outer.f_bavail * outer.f_frsize, outer.f_favail)
expected = open(os.path.join(oracle, "answer.txt")).read()
print("oracle read", len(expected))
sys.exit(0 if os.path.isfile("answer.txt") and open("answer.txt").read() == expected else 1)
"""
SCRATCH_MB, SCRATCH_INODES = 8, 1000
"""The bound, well inside the outer tmpfs below (64 MiB, 4000 inodes)."""
HARNESS_OWN = (1 << 20, 100)
"""What the harness itself may take of the outer file system by grading time: the run and attempt
folders, the prompt, an oracle copy of two small files, the grader's home and verdict channel, a
few dozen entries of at most a page (4 KiB) each. The agent without a bound takes it all."""


@pytest.fixture
def bounded(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Root's harness (the user's cannot mount: its scratch is not bounded, tests above)."""
    if os.geteuid() == 0 and _fs.bound_problem():
        pytest.fail(f"root cannot bound the scratch here: {_fs.bound_problem()}")
    yield from _small_tmpfs(Harness("root", outside_tmp), monkeypatch, "size=64m,nr_inodes=4000")


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("attack", ["bytes", "inodes"])
@pytest.mark.parametrize("left", ["nothing", "the answer"])
def test_an_agent_fills_its_own_bounded_scratch_and_is_graded_on_what_it_left(
    outside_tmp: Path, bounded: Path, tier: str, attack: str, left: str
) -> None:
    harness = Harness("root", outside_tmp)
    before = os.statvfs(bounded)
    agent = FILL if attack == "bytes" else EXHAUST_INODES
    if left == "the answer":
        agent = f"echo 42 > answer.txt; {agent}"
    task = {
        "grader": 'python "$TRIALBOOK_ORACLE_DIR/grade.py"',
        "oracle": {"answer.txt": "42\n", "grade.py": GRADE},
        "toml": [f"scratch_mb = {SCRATCH_MB}", f"scratch_inodes = {SCRATCH_INODES}"],
    }
    (row,) = harness.run(harness.work, {"t": task}, agent, tier)
    graded = transcript(harness.work, row, "grader.stdout")
    assert "oracle read 3" in graded, (row["error"], graded)  # the oracle copy and the grader ran
    _, free_bytes, free_inodes = next(
        ln for ln in graded.splitlines() if ln.startswith("outer ")
    ).split()
    assert int(free_bytes) >= before.f_bavail * before.f_frsize - HARNESS_OWN[0], graded
    assert int(free_inodes) >= before.f_favail - HARNESS_OWN[1], graded
    assert row["status"] == ("passed" if left == "the answer" else "failed"), row["error"]
    what = f"the agent filled its scratch ({SCRATCH_MB} MiB, {SCRATCH_INODES} files)"
    assert what in str(row["error"]), row["error"]
    assert not [p for p in _fs._mount_points() if p.startswith(str(bounded) + "/")]


# The bwrap tier's own /tmp (the agent's TMPDIR there), /var/tmp, /dev/shm and /run are tmpfs
# mounts bwrap makes; with bwrap's --size each holds at most the task's scratch_mb, for a harness
# of any user (their inodes are not bounded: memory, charged to the attempt's cgroup).
FILL_TMP = (
    "python -c \"f = open('/tmp/fill', 'wb')\n"
    "try:\n"
    "    while True: f.write(b'x' * 65536)\n"
    "except OSError: pass\n"
    "f.close()\n"
    "import os; open('size.txt', 'w').write(str(os.path.getsize('/tmp/fill')))\n"
    '"'
)


@pytest.mark.parametrize("tier", [t for t in TIERS if getattr(t, "values", (t,))[0] == "bwrap"])
def test_the_sandboxs_own_tmp_holds_the_scratch_size(harness: Harness, tier: str) -> None:
    mib = 8
    # passes when the file the agent could write in /tmp is at most the bound and at least all
    # of it but a few pages (bwrap's --size is the tmpfs's size=)
    grader = (
        f'test "$(cat size.txt)" -le {mib << 20} && test "$(cat size.txt)" -ge {(mib - 1) << 20}'
    )
    task = {"grader": grader, "toml": [f"scratch_mb = {mib}"]}
    (row,) = harness.run(harness.work, {"t": task}, FILL_TMP, tier)
    assert row["status"] == "passed", (row["error"], transcript(harness.work, row, "grader.stderr"))
