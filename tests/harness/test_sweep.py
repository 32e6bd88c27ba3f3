"""What the sweep records of the processes it signals, and the wait until the kernel releases them.

A killed process counts against its user's process limit (and its cgroup's ``pids.max``) until it
is reaped. These tests hold zombies of their own (children this test process has not reaped yet) to
see that ``await_release`` waits for exactly those and for nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import pytest

from trialbook.harness._sweep import Signalled, _children, _state, await_release


def _child(action: str) -> int:
    """A child of this process that exits at once (``exit``) or sleeps until killed (``sleep``)."""
    pid = os.fork()
    if pid == 0:
        if action == "sleep":
            time.sleep(60)
        os._exit(0)
    return pid


def _until_zombie(pid: int) -> None:
    for _ in range(2000):
        state = _state(pid)
        if state is not None and state[0] == b"Z":
            return
        time.sleep(0.001)
    raise AssertionError(f"{pid} did not exit")


@pytest.fixture
def children() -> Iterator[list[int]]:
    made: list[int] = []
    yield made
    for pid in made:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def test_a_zombie_is_held_until_its_parent_reaps_it(children: list[int]) -> None:
    pid = _child("exit")
    children.append(pid)
    _until_zombie(pid)
    signalled = Signalled()
    signalled.add([pid])
    assert pid in signalled.zombies
    assert not signalled.live
    assert await_release(signalled, timeout_s=0.05) == 1
    os.waitpid(pid, 0)
    assert await_release(signalled, timeout_s=5) == 0


def test_a_killed_process_is_held_until_reaped_not_only_until_it_dies(children: list[int]) -> None:
    pid = _child("sleep")
    children.append(pid)
    signalled = Signalled()
    signalled.add([pid])
    assert pid in signalled.live
    os.kill(pid, signal.SIGKILL)
    _until_zombie(pid)  # dead, not yet reaped: it still counts
    assert await_release(signalled, timeout_s=0.05) == 1
    os.waitpid(pid, 0)
    assert await_release(signalled, timeout_s=5) == 0


def test_the_zombie_children_of_a_signalled_process_are_waited_for_too(
    children: list[int],
) -> None:
    """A process that has not reaped its exited children: when it is killed they go to pid 1 (or a
    subreaper) and count until that reaps them. The sweep sees them only as its children."""
    read, write = os.pipe()
    parent = os.fork()
    if parent == 0:
        os.close(read)
        kids = [_child("exit") for _ in range(3)]
        os.write(write, " ".join(map(str, kids)).encode())
        time.sleep(60)
        os._exit(0)
    children.append(parent)
    os.close(write)
    kids = [int(x) for x in os.read(read, 4096).split()]
    os.close(read)
    for kid in kids:
        _until_zombie(kid)
    signalled = Signalled()
    signalled.add([parent])
    assert set(signalled.zombies) == set(kids)
    assert list(signalled.live) == [parent]


def test_a_pid_given_to_a_new_process_is_not_waited_for(children: list[int]) -> None:
    pid = _child("exit")
    children.append(pid)
    _until_zombie(pid)
    signalled = Signalled()
    signalled.add([pid])
    signalled.zombies[pid] = b"1"  # as if this pid had been another process's, started at tick 1
    started = time.monotonic()
    assert await_release(signalled, timeout_s=5) == 0
    assert time.monotonic() - started < 4  # it did not wait out the 5 s for the new process


def test_an_init_is_released_once_it_has_exited(children: list[int]) -> None:
    """A sandbox's init (bwrap's, pid 1 of its namespace) has emptied its namespace by the time it
    is a zombie: its own zombie, one process, is left to its parent."""
    pid = _child("sleep")
    children.append(pid)
    assert await_release(Signalled(), [pid], timeout_s=0.05) == 1
    os.kill(pid, signal.SIGKILL)
    _until_zombie(pid)
    assert await_release(Signalled(), [pid], timeout_s=5) == 0


def test_every_child_is_read_past_the_first_page_of_the_children_file(
    children: list[int],
) -> None:
    """One read of /proc/PID/task/TID/children gives one page: about 680 pids."""
    made = [_child("sleep") for _ in range(1000)]
    children.extend(made)
    assert set(made) <= set(_children(os.getpid()))
