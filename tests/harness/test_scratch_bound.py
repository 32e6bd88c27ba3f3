"""The attempt's bounded scratch (harness/sandbox/_fs.py): a tmpfs of the task's size and inode
count, unmounted before its folder is removed, and one note in the run where it cannot be had."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import make_suite
from trialbook.harness import RunOptions, run_suite
from trialbook.harness.attempt import _attempt
from trialbook.harness.sandbox import _fs
from trialbook.harness.sandbox._fs import bound_problem, mount_bound, remove_tree, unmount_under
from trialbook.ledger import ledger_rows, read_ledger


def _root() -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI is root)")
    assert bound_problem() is None, bound_problem()


def test_a_bound_holds_its_bytes_and_inodes_and_goes_with_its_folder(tmp_path: Path) -> None:
    _root()
    # a name with the characters mountinfo escapes (space, tab, backslash): unmounted all the same
    top = tmp_path / "attempt \t\\ 1"
    own = top / "agent"
    own.mkdir(parents=True)
    mount_bound(own, 2, 50)
    info = os.statvfs(own)
    assert info.f_blocks * info.f_frsize == 2 << 20  # 2 MiB, as asked
    assert info.f_files == 50
    made = []
    with pytest.raises(OSError, match="No space left on device"):
        _fill(own, made)
    assert len(made) == 49  # ENOSPC at the 50th inode: the tmpfs's own root folder is the first
    assert remove_tree(top)
    assert not [p for p in _fs._mount_points() if p.startswith(str(tmp_path))]


def _fill(folder: Path, made: list[Path]) -> None:
    for index in range(100):
        (folder / f"f{index}").touch()
        made.append(folder / f"f{index}")


def test_unmounting_never_follows_a_symlink(tmp_path: Path) -> None:
    _root()
    real = tmp_path / "real"
    real.mkdir()
    mount_bound(real, 1, 10)
    link = tmp_path / "elsewhere"
    link.mkdir()
    (link / "x").symlink_to(real)
    unmount_under(link)  # the mount is at real, not below elsewhere: left alone
    assert str(real) in _fs._mount_points()
    unmount_under(real)
    assert str(real) not in _fs._mount_points()


def test_a_run_that_cannot_bound_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fs, "bound_problem", lambda: "mounting a tmpfs needs root (EPERM)")
    monkeypatch.setattr(_attempt, "bound_problem", lambda: "mounting a tmpfs needs root (EPERM)")
    suite = make_suite(tmp_path / "s", {"a": {}, "b": {}}, k=2)
    result = run_suite(
        RunOptions(suite=suite, agent="true", ledger=tmp_path / "l.db", sandbox="process")
    )
    said = [n for n in result.notes if "scratch not bounded" in n]
    assert said == [
        "attempt scratch not bounded here (mounting a tmpfs needs root (EPERM)): scratch_mb and "
        "scratch_inodes do not apply; an agent that fills the disk fails, graded as a full disk"
    ]


def test_a_fixture_larger_than_the_bound_is_said_so(tmp_path: Path) -> None:
    _root()
    big = {"big.txt": "x" * (2 << 20)}  # 2 MiB into a 1 MiB scratch
    suite = make_suite(tmp_path / "s", {"t": {"fixture": big, "toml": ["scratch_mb = 1"]}}, k=1)
    ledger = tmp_path / "l.db"
    run_suite(RunOptions(suite=suite, agent="true", ledger=ledger, sandbox="process"))
    (row,) = ledger_rows(read_ledger(ledger))
    assert row["status"] == "infra_error"
    assert "the task's fixture does not fit in the attempt's scratch (scratch_mb = 1" in str(
        row["error"]
    )
