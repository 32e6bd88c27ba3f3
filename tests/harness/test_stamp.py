"""Stamps on the folders a harness leaves behind: a later harness clears a dead one's, never a live
one's, and never judges one from another pid namespace (two containers sharing /tmp or a cgroup
tree, where the same pid names different processes)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from trialbook.harness.sandbox import _cgroup, _scratch
from trialbook.harness.sandbox._stamp import _pid_namespace, is_dead, pid_of, stamp


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_live_harness_is_alive_and_a_gone_one_dead() -> None:
    me = stamp(os.getpid())
    assert me is not None
    assert me.startswith(f"ns{_pid_namespace()}-{os.getpid()}-")
    assert not is_dead(me)
    assert pid_of(me) == os.getpid()
    assert is_dead(f"ns{_pid_namespace()}-{_dead_pid()}-12345")
    # our own pid with another start time: a reused pid, the old harness is gone
    assert is_dead(f"ns{_pid_namespace()}-{os.getpid()}-1")


def test_a_stamp_of_another_pid_namespace_is_never_judged_dead() -> None:
    other = str(int(_pid_namespace()) + 1)
    assert not is_dead(f"ns{other}-{_dead_pid()}-12345")
    assert not is_dead("not-a-stamp")
    assert not is_dead("")


def test_a_stamp_without_namespace_is_judged_here() -> None:
    # as trialbook 0.1 wrote them
    assert is_dead(f"{_dead_pid()}-12345")
    me = stamp(os.getpid())
    assert me is not None
    assert not is_dead("-".join(me.split("-")[1:]))


def test_trialbook_0_1_skips_these_stamps() -> None:
    """0.1 took the text before the first '-' as the pid and skipped a name where that is not a
    number: a 0.1 harness on the same machine must not judge (and remove) a live folder of ours."""
    me = stamp(os.getpid())
    assert me is not None
    assert not me.split("-", 1)[0].isdigit()


def test_a_new_run_leaves_another_namespaces_scratch_folder_alone() -> None:
    other = str(int(_pid_namespace()) + 1)
    theirs = Path(tempfile.mkdtemp(prefix=f"trialbook-run-ns{other}-{_dead_pid()}-12345."))
    ours_dead = Path(
        tempfile.mkdtemp(prefix=f"trialbook-run-ns{_pid_namespace()}-{_dead_pid()}-12345.")
    )
    try:
        _scratch.clean_stale_runs()
        assert theirs.exists()
        assert not ours_dead.exists()
    finally:
        for folder in (theirs, ours_dead):
            if folder.exists():
                folder.rmdir()


@pytest.mark.skipif(not _cgroup.available(), reason="no writable cgroup here")
def test_a_new_run_leaves_another_namespaces_cgroups_alone() -> None:
    other = str(int(_pid_namespace()) + 1)
    (_, where), *_ = _cgroup._hierarchies()
    theirs = where / f"trialbook-ns{other}-{_dead_pid()}-12345"
    ours_dead = where / f"trialbook-ns{_pid_namespace()}-{_dead_pid()}-12345"
    for folder in (theirs, ours_dead):
        (folder / "c0").mkdir(parents=True)
    try:
        _cgroup.clean_stale()
        assert theirs.exists()
        assert not ours_dead.exists()
    finally:
        for folder in (theirs, ours_dead):
            for sub in (folder / "c0", folder):
                if sub.exists():
                    sub.rmdir()
