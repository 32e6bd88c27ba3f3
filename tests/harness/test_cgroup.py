"""The attempt cgroups: a pool of emptied cgroups reused from command to command (making and removing
one cost more than the rest of a trivial attempt), never one that still holds a process; cgroup v2
controllers delegated where the kernel offers them; the run says what is not capped."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from trialbook.harness.sandbox import _cgroup
from trialbook.harness.sandbox._cgroup import Cgroup, available, not_capped

needs_cgroups = pytest.mark.skipif(
    not available(), reason="no writable cgroup here (CI runs as root, where there is one)"
)


@pytest.fixture
def pool() -> Iterator[None]:
    Cgroup.release_idle()
    yield
    Cgroup.release_idle()


def _start_in(cgroup: Cgroup, script: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cgroup.join(["/bin/sh", "-c", script]), start_new_session=True)


@needs_cgroups
def test_an_emptied_cgroup_is_reused_and_nothing_of_its_last_command_is_in_it(pool: None) -> None:
    first = Cgroup.acquire(memory_mb=1024)
    assert first is not None
    # a process that leaves its session and outlives the command
    proc = _start_in(first, "setsid sleep 300 &")
    proc.wait()
    deadline = time.monotonic() + 5
    while not first.members() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert first.members(), "the survivor is in the command's cgroup"
    first.release()
    assert not first.members()
    again = Cgroup.acquire(memory_mb=1024)
    assert again is first  # from the pool, not a new folder
    assert all(folder.is_dir() for folder in again.folders)
    assert not again.members()
    proc = _start_in(again, "true")
    proc.wait()
    assert not again.members()
    again.release()


@needs_cgroups
def test_a_cgroup_whose_process_would_not_die_is_never_reused(
    pool: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cgroup = Cgroup.acquire(memory_mb=1024)
    assert cgroup is not None
    proc = _start_in(cgroup, "sleep 300 &")
    proc.wait()
    monkeypatch.setattr(_cgroup, "_kill_folders", lambda parts: False)  # "still not empty"
    cgroup.release()
    monkeypatch.undo()
    other = Cgroup.acquire(memory_mb=1024)
    assert other is not cgroup
    assert other is not None
    other.release()
    cgroup.kill()
    cgroup.remove()
    assert not any(folder.exists() for folder in cgroup.folders)


@needs_cgroups
def test_the_pool_is_emptied_at_the_end_of_a_run(pool: None) -> None:
    cgroup = Cgroup.acquire(memory_mb=1024)
    assert cgroup is not None
    cgroup.release()
    assert all(folder.is_dir() for folder in cgroup.folders)
    Cgroup.release_idle()
    assert not any(folder.exists() for folder in cgroup.folders)


class _FakeV2:
    """Folders with cgroup v2's interface files, where a write of ``+name`` to
    cgroup.subtree_control enables ``name`` only if the folder's cgroup.controllers offers it (and
    the child then offers it), as the kernel does; ``busy``: the kernel's refusal for a cgroup that
    holds processes (no internal processes, except at the root)."""

    def __init__(self, root: Path, offered: str, busy: bool) -> None:
        self.where, self.folder, self.busy = root / "where", root / "where" / "mine", busy
        self.folder.mkdir(parents=True)
        (self.where / "cgroup.controllers").write_text(offered)
        for f in (self.where, self.folder):
            (f / "cgroup.subtree_control").write_text("")
        (self.folder / "cgroup.controllers").write_text("")

    def write(self, path: Path, value: str) -> bool:
        folder, name = path.parent, value.lstrip("+")
        if path.name != "cgroup.subtree_control":
            return False
        if name not in (folder / "cgroup.controllers").read_text().split():
            return False
        if folder == self.where and self.busy:
            return False
        enabled = (folder / "cgroup.subtree_control").read_text().split()
        (folder / "cgroup.subtree_control").write_text(" ".join([*enabled, name]))
        if folder == self.where:
            offered = (self.folder / "cgroup.controllers").read_text().split()
            (self.folder / "cgroup.controllers").write_text(" ".join([*offered, name]))
        return True


@pytest.mark.parametrize(
    ("offered", "busy", "expected"),
    [
        ("cpu io memory pids", False, {"pids", "memory"}),  # a container's root: both
        ("cpu pids", False, {"pids"}),  # no memory controller on offer
        ("cpu io memory pids", True, set()),  # the harness's cgroup holds processes
        ("", False, set()),
    ],
)
def test_cgroup_v2_controllers_are_delegated_where_the_kernel_offers_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offered: str, busy: bool, expected: set[str]
) -> None:
    fake = _FakeV2(tmp_path, offered, busy)
    monkeypatch.setattr(_cgroup, "_write", fake.write)
    assert _cgroup._delegate(fake.where, fake.folder) == expected


def test_the_run_says_what_its_cgroups_cannot_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cgroup, "_made", lambda: ())
    (note,) = not_capped()
    assert note.startswith("no writable cgroup here")
    folder = Path("/sys/fs/cgroup/x")
    monkeypatch.setattr(_cgroup, "_made", lambda: (("v2", folder, frozenset({"pids"})),))
    (note,) = not_capped()
    assert "no memory controller" in note
    assert "total memory is not capped" in note
    monkeypatch.setattr(
        _cgroup,
        "_made",
        lambda: (("pids", folder, frozenset({"pids"})), ("memory", folder, frozenset({"memory"}))),
    )
    assert not_capped() == []


@needs_cgroups
def test_a_harness_leaves_no_cgroup_folder_when_it_exits() -> None:
    code = (
        "from trialbook.harness.sandbox._cgroup import Cgroup\n"
        "c = Cgroup.acquire(memory_mb=256)\n"
        "print('\\n'.join(str(f.parent) for f in c.folders))\n"
        "c.release()\n"
    )
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    parents = [Path(line) for line in done.stdout.split()]
    assert parents
    assert not [p for p in parents if p.exists()]
