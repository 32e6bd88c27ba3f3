"""Finding an attempt's processes, stopping and killing them, and waiting until the kernel has let
them go.

Every process of an attempt carries ``TRIALBOOK_SANDBOX_TOKEN`` in its environment (inherited through
forks and ``setsid``). When the command ends or its time is up, the harness finds the attempt's
processes by that token (and, for ones that dropped their environment, by a working directory inside
the workspace), stops them all with SIGSTOP so that none can fork again while the sweep runs, then
kills them.

A killed process is not gone until its parent reaps it: a zombie still counts against its user's
process limit (``RLIMIT_NPROC``, machine-wide) and its cgroup's ``pids.max``, and an orphan's parent is
pid 1 (or a subreaper), which may take seconds. A fork bomb's 4,000 zombies would then make the next
attempt of the same user fail to fork at all, or its grader. So a sweep records what it signalled
(:class:`Signalled`), and :func:`await_release` waits until the kernel has released each of them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import signal
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "RELEASE_S",
    "TOKEN_VAR",
    "Signalled",
    "Stat",
    "alive",
    "await_release",
    "find_processes",
    "process_stat",
    "run_key",
    "signal_group",
    "start_key",
    "sweep",
]

TOKEN_VAR = "TRIALBOOK_SANDBOX_TOKEN"

_TOKEN_SECRET = secrets.token_bytes(16)
"""This harness process's key for the opaque parts of its tokens (never written anywhere)."""


def run_key(run_id: str) -> str:
    """The first part of the sandbox tokens of run ``run_id`` started by this harness process: a
    keyed digest, not the run id, so that an agent cannot read its run from its token (a race's
    two runs are ``RACE_ID-baseline`` and ``RACE_ID-candidate``: the agent knew its side)."""
    return hashlib.blake2b(run_id.encode(), key=_TOKEN_SECRET, digest_size=8).hexdigest()


def start_key(run_id: str, start_id: int) -> str:
    """The last part of an attempt's token: a keyed digest of its start marker's id, which tells
    nothing of the order attempts started in (a race runs a batch of the baseline, then the same
    batch of the candidate, so start ids told the sides apart too)."""
    data = f"{run_id}\0{start_id}".encode()
    return hashlib.blake2b(data, key=_TOKEN_SECRET, digest_size=8).hexdigest()


RELEASE_S = 10.0
"""How long the end of a command waits for the processes it killed to be reaped."""


def _read(path: str) -> bytes:
    """The whole file. Until its end: one ``read`` of a /proc file gives at most one page of a
    seq_file (``children``: about 680 pids) and at most what was asked of ``environ`` (where an agent
    may put its token behind a megabyte of other variables)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = [os.read(fd, 1 << 16)]
        while parts[-1]:
            parts.append(os.read(fd, 1 << 16))
        return b"".join(parts)
    finally:
        os.close(fd)


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's), from /proc/PID/task/TID/children."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            out += [int(x) for x in _read(f"/proc/{pid}/task/{tid}/children").split()]
        except OSError:
            continue
    return out


_ANCESTRY: tuple[int, int, list[int]] = (0, 0, [])


def _ancestry() -> list[int]:
    """This process and its ancestors up to pid 1 (cached while this process and its parent stay)."""
    global _ANCESTRY
    me, ppid = os.getpid(), os.getppid()
    if _ANCESTRY[:2] == (me, ppid):
        return _ANCESTRY[2]
    chain = [me]
    while chain[-1] > 1:
        stat = process_stat(chain[-1])
        if stat is None or stat.ppid <= 0:
            break
        chain.append(stat.ppid)
    _ANCESTRY = (me, ppid, chain)
    return chain


_HAS_CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _candidates() -> tuple[list[int], bool]:
    """Pids that may belong to an attempt, and whether their subtrees must be walked.

    An attempt's processes are descendants of the harness until their parent dies; an orphan is then
    re-parented to the nearest ancestor that is a child subreaper, or to pid 1, which are all on the
    harness's own ancestry. So the roots to look at are the direct children of the harness and of
    its ancestors, a few dozen at most, not every process on the machine. Kernels without
    /proc/PID/task/TID/children get the full scan.
    """
    if not _HAS_CHILDREN_FILES:
        return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit()], False
    chain = _ancestry()
    # Our own children were started from any of our threads: read every thread's list. An orphan
    # re-parented to an ancestor lands on that ancestor's leading thread while it lives.
    roots: set[int] = set(_children(chain[0]))
    for pid in chain[1:]:
        try:
            roots.update(int(x) for x in _read(f"/proc/{pid}/task/{pid}/children").split())
        except OSError:
            continue
    return sorted(roots - set(chain)), True


def find_processes(token: str, workspace: Path | None = None, *, prefix: bool = False) -> list[int]:
    """Pids of live processes whose environment carries ``token`` (or whose cwd is in ``workspace``,
    an absolute path without symbolic links), with every descendant of such a process.

    ``prefix``: match every token that starts with ``token`` (all attempts of a run: ``"RUN/"``).
    """
    needle = f"\0{TOKEN_VAR}={token}{'' if prefix else chr(0)}".encode()
    root = str(workspace) if workspace is not None else None  # absolute and resolved by the caller
    me = os.getpid()

    def matches(pid: int) -> bool:
        try:
            if needle in b"\0" + _read(f"/proc/{pid}/environ"):
                return True
            if root is not None:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                return cwd == root or cwd.startswith(root + "/")
        except OSError:
            pass  # gone, a zombie, or not ours to read
        return False

    candidates, walk = _candidates()
    found: list[int] = []
    seen: set[int] = {me}
    stack = [p for p in candidates if p != me]
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if matches(pid):
            found.append(pid)
            if walk:  # a process of the attempt: all its descendants are too
                for child in _all_descendants(pid, seen):
                    seen.add(child)
                    if alive(child):
                        found.append(child)
    return found


def alive(pid: int) -> bool:
    """Running or stopped, not a zombie (nor gone)."""
    stat = process_stat(pid)
    return stat is not None and not stat.dead


def _all_descendants(pid: int, seen: set[int]) -> list[int]:
    out: list[int] = []
    stack = _children(pid)
    while stack:
        child = stack.pop()
        if child in seen or child in out:
            continue
        out.append(child)
        stack += _children(child)
    return out


def sweep(
    token: str,
    workspace: Path | None = None,
    sig: int = signal.SIGKILL,
    *,
    prefix: bool = False,
    signalled: Signalled | None = None,
) -> int:
    """Stop every process of ``token``, then send ``sig`` to them; returns how many there were.

    SIGSTOP first, repeated until no new process appears, so a fork loop cannot outrun the sweep.
    ``signalled`` records each of them, and the zombies among their children, for
    :func:`await_release`.
    """
    stopped: set[int] = set()
    for _ in range(100):
        fresh = [p for p in find_processes(token, workspace, prefix=prefix) if p not in stopped]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
            stopped.add(pid)
    if signalled is not None:
        signalled.add(stopped)  # while they are stopped: their children lists hold still
    for pid in stopped:
        _signal(pid, sig)
        if sig != signal.SIGKILL:
            _signal(pid, signal.SIGCONT)
    return len(stopped)


class Signalled:
    """The processes of one command that the harness signalled, and the zombies among their
    children, each by pid and start time (a pid the kernel gave to a new process is not waited
    for)."""

    def __init__(self) -> None:
        self.live: dict[int, bytes] = {}
        """Processes that were alive when signalled (what the command left behind)."""
        self.zombies: dict[int, bytes] = {}
        """Their children that had already exited, waiting for them to reap them: when their
        parent is killed they go to pid 1, and count until it does."""

    def add(self, pids: Iterable[int]) -> None:
        """Record ``pids`` and their exited children; a pid seen before is looked at again (its
        children may have exited since: a grace period lets them run on)."""
        for pid in pids:
            stat = process_stat(pid)
            if stat is None:
                continue
            if stat.dead:
                self.zombies.setdefault(pid, stat.start)
                continue
            self.live.setdefault(pid, stat.start)
            for child in _children(pid):
                child_stat = process_stat(child)
                if child_stat is not None and child_stat.dead:
                    self.zombies.setdefault(child, child_stat.start)


class Stat(NamedTuple):
    """What ``/proc/PID/stat`` says of a process that the sweep uses."""

    state: bytes
    ppid: int
    start: bytes
    """Start time in clock ticks since boot: with the pid, it names one process."""

    @property
    def dead(self) -> bool:
        """Exited, not yet reaped (a zombie) or being reaped."""
        return self.state in (b"Z", b"X")


def process_stat(pid: int) -> Stat | None:
    """``pid``'s :class:`Stat`, None when there is no such process."""
    try:
        stat = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()  # the name in parentheses may hold anything
    if len(fields) <= 19:
        return None
    return Stat(state=fields[0], ppid=int(fields[1]), start=fields[19])


def await_release(
    signalled: Signalled, inits: Mapping[int, bytes] | None = None, timeout_s: float = RELEASE_S
) -> int:
    """Wait until every process in ``signalled`` is reaped (gone from the process table) and each
    init in ``inits`` (pid: start time; a sandbox's own init, whose pid namespace is empty once it
    has exited) has exited; returns how many were still held when ``timeout_s`` ran out (0: all
    released).

    A zombie whose parent is this process (an orphan re-parented to a harness that is pid 1 or a
    child subreaper, as in a container started without an init) is reaped here: nobody else will.
    Only recorded processes are, never a command this process started and waits for itself: that
    one is reaped (``poll``, ``wait``) before this wait begins.
    """
    held = {**signalled.zombies, **signalled.live}
    exiting = dict(inits or {})
    deadline = time.monotonic() + timeout_s
    pause = 0.0005
    while True:
        held = {pid: t for pid, t in held.items() if _held(pid, t, dead_is_gone=False)}
        exiting = {pid: t for pid, t in exiting.items() if _held(pid, t, dead_is_gone=True)}
        if not (held or exiting) or time.monotonic() >= deadline:
            return len(held) + len(exiting)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _held(pid: int, start: bytes, *, dead_is_gone: bool) -> bool:
    stat = process_stat(pid)
    if stat is None or stat.start != start:
        return False  # reaped (a new process with its pid started later)
    if stat.dead and dead_is_gone:
        return False
    if stat.dead and stat.ppid == os.getpid():
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        return process_stat(pid) is not None
    return True


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
