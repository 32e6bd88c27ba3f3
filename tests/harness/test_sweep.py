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
from pathlib import Path

import pytest

from trialbook.harness.sandbox._sweep import Signalled, _children, await_release, process_stat


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
        stat = process_stat(pid)
        if stat is not None and stat.dead:
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


class Holder:
    """A child of this test that makes a child of its own and reaps it only when told to: the
    grandchild's zombie belongs to another process, as an attempt's do (a zombie whose parent is
    this process, ``await_release`` reaps itself)."""

    def __init__(self, action: str) -> None:
        to_holder, self._tell = os.pipe()
        self._replies, to_test = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._tell)
            os.close(self._replies)
            kid = _child(action)
            os.write(to_test, str(kid).encode())
            os.read(to_holder, 1)
            os.waitpid(kid, 0)
            os.write(to_test, b".")
            time.sleep(60)
            os._exit(0)
        os.close(to_holder)
        os.close(to_test)
        self.kid = int(os.read(self._replies, 64))

    def reap(self) -> None:
        os.write(self._tell, b"x")
        assert os.read(self._replies, 1) == b"."

    def close(self) -> None:
        os.close(self._tell)
        os.close(self._replies)


def test_a_zombie_is_held_until_its_parent_reaps_it(children: list[int]) -> None:
    holder = Holder("exit")
    children.append(holder.pid)
    _until_zombie(holder.kid)
    signalled = Signalled()
    signalled.add([holder.kid])
    assert holder.kid in signalled.zombies
    assert not signalled.live
    assert await_release(signalled, timeout_s=0.05) == 1
    holder.reap()
    assert await_release(signalled, timeout_s=5) == 0
    holder.close()


def test_a_killed_process_is_held_until_reaped_not_only_until_it_dies(children: list[int]) -> None:
    holder = Holder("sleep")
    children.append(holder.pid)
    signalled = Signalled()
    signalled.add([holder.kid])
    assert holder.kid in signalled.live
    os.kill(holder.kid, signal.SIGKILL)
    _until_zombie(holder.kid)  # dead, not yet reaped: it still counts
    assert await_release(signalled, timeout_s=0.05) == 1
    holder.reap()
    assert await_release(signalled, timeout_s=5) == 0
    holder.close()


def test_a_zombie_of_this_process_is_reaped_here(children: list[int]) -> None:
    pid = _child("exit")
    children.append(pid)
    _until_zombie(pid)
    signalled = Signalled()
    signalled.add([pid])
    assert await_release(signalled, timeout_s=5) == 0
    assert process_stat(pid) is None


def test_the_zombie_children_of_a_signalled_process_are_waited_for_too(
    children: list[int],
) -> None:
    """A process that has not reaped its exited children: when it is killed they go to pid 1 (or a
    subreaper) and count until that reaps them. The sweep sees them only as its children, and
    looks again each time it records the process: on timeout the grace between SIGTERM and SIGKILL
    lets it make more."""
    to_child, from_test = os.pipe()
    from_child, to_test = os.pipe()
    parent = os.fork()
    if parent == 0:
        os.close(from_test)
        os.close(from_child)
        for _ in range(2):
            os.read(to_child, 1)
            kids = [_child("exit") for _ in range(3)]
            os.write(to_test, (" ".join(map(str, kids)) + "\n").encode())
        time.sleep(60)
        os._exit(0)
    children.append(parent)
    os.close(to_child)
    os.close(to_test)
    replies = os.fdopen(from_child)
    signalled = Signalled()
    batches = []
    for _ in range(2):
        os.write(from_test, b"x")
        batches.append([int(x) for x in replies.readline().split()])
        for kid in batches[-1]:
            _until_zombie(kid)
        signalled.add([parent])  # the same process again: its new zombies are recorded too
    replies.close()
    os.close(from_test)
    assert set(signalled.zombies) == set(batches[0] + batches[1])
    assert list(signalled.live) == [parent]


def test_the_start_time_is_the_processs_own(children: list[int]) -> None:
    """Field 22 of /proc/PID/stat, clock ticks after boot: the child started just now."""
    before = time.time()
    pid = _child("sleep")
    children.append(pid)
    stat = process_stat(pid)
    assert stat is not None
    assert stat.ppid == os.getpid()
    lines = Path("/proc/stat").read_text().splitlines()
    boot = next(int(line.split()[1]) for line in lines if line.startswith("btime "))
    started = boot + int(stat.start) / os.sysconf("SC_CLK_TCK")
    assert before - 2 <= started <= time.time() + 2


SUBREAPER = """
import ctypes, os, sys, time
sys.path[:0] = {path!r}
from trialbook.harness.sandbox._sweep import Signalled, await_release
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come back here
read, write = os.pipe()
if os.fork() == 0:  # a middle process that leaves an orphan behind and exits
    if os.fork() == 0:
        os.write(write, str(os.getpid()).encode())
        time.sleep(60)
        os._exit(0)
    os._exit(0)
os.wait()
orphan = int(os.read(read, 64))
signalled = Signalled()
signalled.add([orphan])
os.kill(orphan, 9)
print(await_release(signalled, timeout_s=5))
"""


def test_a_harness_that_is_a_subreaper_reaps_the_orphans_it_killed() -> None:
    """In a container started without an init the harness may be pid 1, or a subreaper: the
    attempt's orphans are then its own children, and nobody else would reap them."""
    import subprocess
    import sys

    code = SUBREAPER.format(path=sys.path)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
    assert time.monotonic() - started < 4  # released at once, not after the 5 s


def test_a_pid_given_to_a_new_process_is_not_waited_for(children: list[int]) -> None:
    holder = Holder("sleep")
    children.append(holder.pid)
    signalled = Signalled()
    signalled.live[holder.kid] = (
        b"1"  # as if this pid had been another process's, started at tick 1
    )
    started = time.monotonic()
    assert await_release(signalled, timeout_s=5) == 0
    assert time.monotonic() - started < 4  # it did not wait out the 5 s for the new process
    holder.close()


def test_an_init_is_released_once_it_has_exited(children: list[int]) -> None:
    """A sandbox's init (bwrap's, pid 1 of its namespace) has emptied its namespace by the time it
    is a zombie: its own zombie, one process, is left to its parent."""
    pid = _child("sleep")
    children.append(pid)
    stat = process_stat(pid)
    assert stat is not None
    init = {pid: stat.start}
    assert await_release(Signalled(), init, timeout_s=0.05) == 1
    os.kill(pid, signal.SIGKILL)
    _until_zombie(pid)
    assert await_release(Signalled(), init, timeout_s=5) == 0


def test_every_child_is_read_past_the_first_page_of_the_children_file(
    children: list[int],
) -> None:
    """One read of /proc/PID/task/TID/children gives one page: about 680 pids."""
    made = [_child("sleep") for _ in range(1000)]
    children.extend(made)
    assert set(made) <= set(_children(os.getpid()))
