"""One cgroup per sandboxed command, where the harness may make them: what an agent cannot shed.

A process can drop its environment, leave the workspace, start a new session and make itself
undumpable, but it cannot leave its cgroup without write access to another cgroup's ``cgroup.procs``
(root-owned, and read-only inside the bwrap tier). So where cgroups are writable (a harness run as
root, in CI or a container; or a delegated subtree), each command runs in a cgroup of its own:
every process in it at the end is a survivor, counted in the row and killed (``cgroup.kill`` on
cgroup v2, else by pid until none is left); ``pids.max`` caps its processes (a fork bomb fails to
fork) and the memory controller its total memory, each where the controller is available (cgroup v2
with the controller enabled, or the v1 ``pids`` / ``memory`` hierarchies).

Each harness keeps its cgroups under ``trialbook-STAMP`` (``_stamp``) beside its own cgroup; a harness
that was killed leaves that folder behind, and the next run (or the run's watchdog) kills what is in
it and removes it (:func:`clean_stale`).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shlex
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import ClassVar

from trialbook.harness.sandbox._stamp import is_dead, pid_of, stamp

__all__ = ["PIDS_MAX", "Cgroup", "available", "clean_stale", "not_capped"]

PIDS_MAX = 4096
"""Processes one command (with every descendant) may have at once."""
_PREFIX = "trialbook-"


@cache
def _hierarchies() -> tuple[tuple[str, Path], ...]:
    """(kind, the cgroup folder this process is in) for ``v2``, ``pids`` and ``memory``."""
    mounts: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return ()
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        if parts[2] == "cgroup2":
            mounts.setdefault("v2", Path(parts[1]))
        elif parts[2] == "cgroup":
            for kind in ("pids", "memory"):
                if kind in parts[3].split(","):
                    mounts.setdefault(kind, Path(parts[1]))
    found: list[tuple[str, Path]] = []
    for line in own:
        number, controllers, path = line.split(":", 2)
        kind = "v2" if number == "0" and controllers == "" else controllers
        if kind in mounts:
            found.append((kind, mounts[kind] / path.lstrip("/")))
    return tuple(found)


_CONTROLLERS = ("pids", "memory")


def _delegate(where: Path, folder: Path) -> frozenset[str]:
    """Enable the pids and memory controllers for the cgroups under ``folder`` (cgroup v2) where
    the kernel offers them: first in the harness's own cgroup ``where`` (which the kernel allows only
    where it holds no process of its own, as at a container's root), then in ``folder``. Returns the
    controllers the attempt cgroups get."""
    for parent in (where, folder):
        try:
            offered = (parent / "cgroup.controllers").read_text().split()
            enabled = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return frozenset()
        for controller in _CONTROLLERS:
            if controller in offered and controller not in enabled:
                _write(parent / "cgroup.subtree_control", f"+{controller}")
    try:
        enabled = (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return frozenset()
    return frozenset(enabled) & frozenset(_CONTROLLERS)


@cache
def _made() -> tuple[tuple[str, Path, frozenset[str]], ...]:
    """This harness's own folder of attempt cgroups in each writable hierarchy (made once), with
    the controllers the cgroups made in it get."""
    name = f"{_PREFIX}{stamp(os.getpid())}"
    made: list[tuple[str, Path, frozenset[str]]] = []
    for kind, where in _hierarchies():
        folder = where / name
        try:
            folder.mkdir(exist_ok=True)
        except OSError:
            continue
        controls = _delegate(where, folder) if kind == "v2" else frozenset({kind})
        made.append((kind, folder, controls))
    atexit.register(_remove_parents, [folder for _, folder, _ in made])
    if any(kind == "pids" for kind, _, _ in made):
        # v1 pids already holds every process of a command: a v2 cgroup without a controller of ours
        # would add only one more write per command and one more read at its end
        made = [m for m in made if m[0] != "v2" or m[2]]
    return tuple(made)


def _remove_parents(folders: list[Path]) -> None:
    """At exit: this harness's pooled cgroups, then its own folders, where empty (a folder in a
    hierarchy no later harness runs in would otherwise stay for good)."""
    Cgroup.release_idle()
    for folder in folders:
        with contextlib.suppress(OSError):  # not empty: a later run's clean_stale clears it
            folder.rmdir()


def _parents() -> tuple[tuple[str, Path], ...]:
    return tuple((kind, folder) for kind, folder, _ in _made())


def not_capped() -> list[str]:
    """What the attempt cgroups cannot do here, for the run's notes (nothing where they do it all)."""
    if not _made():
        return [
            "no writable cgroup here: an attempt's processes and total memory are not capped "
            "beyond the rlimits (docs/harness.md, 'Cgroups')"
        ]
    controls = frozenset().union(*(c for _, _, c in _made()))
    missing = {"pids": "process count", "memory": "total memory"}
    return [
        f"the cgroups here have no {c} controller: an attempt's {missing[c]} is not capped "
        "beyond the rlimits"
        for c in _CONTROLLERS
        if c not in controls
    ]


def available() -> bool:
    """Whether commands run in cgroups of their own here."""
    return bool(_parents())


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


_REUSE_BELOW = 4 << 20
"""Memory still charged to an emptied cgroup above which it is not reused (bytes)."""


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _controls_of(kind: str) -> frozenset[str]:
    for made_kind, _, controls in _made():
        if made_kind == kind:
            return controls
    return frozenset()


def _members(folder: Path) -> set[int]:
    chunks: list[bytes] = []
    try:  # the raw file interface: a third of the time of a text read, once per command and folder
        fd = os.open(folder / "cgroup.procs", os.O_RDONLY)
        try:
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(fd)
        return {int(x) for x in b"".join(chunks).split()}
    except (OSError, ValueError):
        return set()


class Cgroup:
    """The cgroups (one per hierarchy) of one command.

    Making and removing a cgroup costs a few milliseconds on some kernels (cgroup v1 above all),
    more than the rest of a trivial attempt; so an emptied cgroup goes back to a pool and the next
    command reuses it (:meth:`acquire`, :meth:`release`). Only a cgroup seen empty after the kill is
    reused, so nothing of one command is ever in the next one's cgroup."""

    _idle: ClassVar[list[Cgroup]] = []
    _lock: ClassVar[threading.Lock] = threading.Lock()
    _serial: ClassVar[Iterator[int]] = itertools.count()

    def __init__(self, folders: Sequence[tuple[str, Path]]) -> None:
        self.parts = tuple(folders)
        self.folders = tuple(folder for _, folder in self.parts)
        self._memory_mb: int | None = None
        self._seen_empty = False  # the last look found no process (and none can enter from outside)

    @classmethod
    def create(cls, name: str) -> Cgroup | None:
        """A fresh cgroup named ``name`` (unique in this harness); None where none can be made."""
        folders: list[tuple[str, Path]] = []
        for kind, parent in _parents():
            folder = parent / name.replace("/", "_")
            try:
                folder.mkdir()
            except OSError:
                continue
            _write(folder / "pids.max", str(PIDS_MAX))
            folders.append((kind, folder))
        return cls(folders) if folders else None

    @classmethod
    def acquire(cls, *, memory_mb: int) -> Cgroup | None:
        """An empty cgroup for one command, capped at ``memory_mb`` in all: an idle one from the
        pool, else a new one; None where none can be made."""
        with cls._lock:
            cgroup = cls._idle.pop() if cls._idle else None
        if cgroup is None:
            cgroup = cls.create(f"c{next(cls._serial)}")
        if cgroup is not None:
            cgroup._seen_empty = False
            cgroup.limit_memory(memory_mb)
        return cgroup

    def limit_memory(self, memory_mb: int) -> None:
        """Cap the total memory of the cgroup's processes (where a memory controller is here)."""
        if memory_mb == self._memory_mb:
            return
        for kind, folder in self.parts:
            name = "memory.limit_in_bytes" if kind == "memory" else "memory.max"
            _write(folder / name, str(memory_mb << 20))
        self._memory_mb = memory_mb

    def release(self) -> None:
        """Kill what is in the cgroup; back to the pool if it is then empty, else removed.

        A cgroup seen empty once its command ended needs no second look: only a process inside
        can add one, and every process outside it is gone or was killed by then."""
        if not self._seen_empty and not self.kill():
            self.remove()  # a process that would not die: never reuse its cgroup
            return
        if not self._memory_released():
            self.remove()  # pages it still holds (a file in a tmpfs): a fresh one next time
            return
        with self._lock:
            self._idle.append(self)

    def _memory_released(self) -> bool:
        """Reclaim the memory charged to the emptied cgroup (the page cache of the files its
        command read) and say whether it is back to (nearly) nothing. A file the command left in a
        tmpfs (/dev/shm) stays charged to the cgroup that first touched it: reused, the cgroup
        would start the next command with that charge against its cap."""
        for kind, folder in self.parts:
            if kind == "memory":
                _write(folder / "memory.force_empty", "0")
                usage = _read_int(folder / "memory.usage_in_bytes")
            elif "memory" in _controls_of(kind):
                _write(folder / "memory.reclaim", str(1 << 40))
                usage = _read_int(folder / "memory.current")
            else:
                continue
            if usage is None or usage > _REUSE_BELOW:
                return False
        return True

    @classmethod
    def release_idle(cls) -> None:
        """Remove the pooled cgroups (at the end of a run)."""
        with cls._lock:
            idle, cls._idle[:] = list(cls._idle), []
        for cgroup in idle:
            cgroup.remove()

    def join(self, argv: Sequence[str]) -> list[str]:
        """``argv`` behind a shell that puts itself into the cgroups, then becomes ``argv``: every
        process the command ever makes starts inside."""
        procs = [str(f / "cgroup.procs") for f in self.folders]
        if len(argv) == 3 and list(argv[:2]) == ["/bin/sh", "-c"]:
            # the process tier's own shell joins before anything else runs: no extra exec
            joins = "".join(f"echo $$ > {shlex.quote(p)}\n" for p in procs)
            return ["/bin/sh", "-c", joins + argv[2]]
        script = 'while [ "$1" != -- ]; do echo $$ > "$1"; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *procs, "--", *argv]

    def members(self) -> set[int]:
        """Pids of every live process in the cgroups."""
        out: set[int] = set()
        for folder in self.folders:
            out |= _members(folder)
        self._seen_empty = not out
        return out

    def kill(self) -> bool:
        """Kill every process in the cgroups; returns once they are empty (True) or after ~5 s
        (False: some process would not die)."""
        self._seen_empty = _kill_folders(self.parts)
        return self._seen_empty

    def remove(self) -> None:
        """Remove the (empty) cgroups."""
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _kill_folders(parts: Sequence[tuple[str, Path]]) -> bool:
    folders = [folder for _, folder in parts]
    for kind, folder in parts:
        if kind == "v2":
            _write(folder / "cgroup.kill", "1")
    for _ in range(500):
        pids: set[int] = set()
        for folder in folders:
            pids |= _members(folder)
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    return False


def clean_stale(harness_pid: int | None = None) -> int:
    """Kill what is left in the cgroups of harnesses that are gone (or of ``harness_pid``) and
    remove them; returns how many processes were there."""
    killed = 0
    for kind, where in _hierarchies():
        try:
            entries = list(where.glob(f"{_PREFIX}*"))
        except OSError:
            continue
        for parent in entries:
            name = parent.name[len(_PREFIX) :]
            if harness_pid is None and not is_dead(name):
                continue  # a live harness's, or one of another pid namespace
            if harness_pid is not None and pid_of(name) != harness_pid:
                continue
            try:
                children = [c for c in parent.iterdir() if c.is_dir()]
            except OSError:
                continue  # removed meanwhile by another sweep (cluster workers sweep at once)
            killed += sum(len(_members(c)) for c in children)
            _kill_folders([(kind, c) for c in children])
            for folder in (*children, parent):
                with contextlib.suppress(OSError):
                    folder.rmdir()
    return killed
