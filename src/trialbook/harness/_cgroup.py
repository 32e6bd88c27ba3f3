"""One cgroup per sandboxed command, where the harness may make them: what an agent cannot shed.

A process can drop its environment, leave the workspace, start a new session and make itself
undumpable, but it cannot leave its cgroup without write access to another cgroup's ``cgroup.procs``
(root-owned, and read-only inside the bwrap tier). So where cgroups are writable (a harness run as
root, in CI or a container; or a delegated subtree), each command runs in a cgroup of its own:
every process in it at the end is a survivor, counted in the row and killed (``cgroup.kill`` on
cgroup v2, else by pid until none is left); ``pids.max`` caps its processes (a fork bomb fails to
fork) and the memory controller its total memory, each where the controller is available (cgroup v2
with the controller enabled, or the v1 ``pids`` / ``memory`` hierarchies).

Each harness keeps its cgroups under ``trialbook-PID-STARTTIME`` beside its own cgroup; a harness
that was killed leaves that folder behind, and the next run (or the run's watchdog) kills what is in
it and removes it (:func:`clean_stale`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path

__all__ = ["PIDS_MAX", "Cgroup", "available", "clean_stale"]

PIDS_MAX = 4096
"""Processes one command (with every descendant) may have at once."""
_PREFIX = "trialbook-"


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()[19].decode()


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


@cache
def _parents() -> tuple[tuple[str, Path], ...]:
    """This harness's own folder of attempt cgroups in each writable hierarchy (made once)."""
    me = os.getpid()
    name = f"{_PREFIX}{me}-{_start_time(me)}"
    made: list[tuple[str, Path]] = []
    for kind, where in _hierarchies():
        folder = where / name
        try:
            folder.mkdir(exist_ok=True)
        except OSError:
            continue
        made.append((kind, folder))
    return tuple(made)


def available() -> bool:
    """Whether commands run in cgroups of their own here."""
    return bool(_parents())


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def _members(folder: Path) -> set[int]:
    try:
        return {int(x) for x in (folder / "cgroup.procs").read_text().split()}
    except (OSError, ValueError):
        return set()


class Cgroup:
    """The cgroups (one per hierarchy) of one command."""

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = tuple(folders)

    @classmethod
    def create(cls, name: str, *, memory_mb: int) -> Cgroup | None:
        """A fresh cgroup named ``name`` (unique in this harness); None where none can be made."""
        folders: list[Path] = []
        for kind, parent in _parents():
            folder = parent / name.replace("/", "_")
            try:
                folder.mkdir()
            except OSError:
                continue
            _write(folder / "pids.max", str(PIDS_MAX))
            if kind == "memory":
                _write(folder / "memory.limit_in_bytes", str(memory_mb << 20))
            else:
                _write(folder / "memory.max", str(memory_mb << 20))
            folders.append(folder)
        return cls(folders) if folders else None

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
        return out

    def kill(self) -> None:
        """Kill every process in the cgroups; returns once they are empty (or after ~5 s)."""
        _kill_folders(self.folders)

    def remove(self) -> None:
        """Remove the (empty) cgroups."""
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _kill_folders(folders: Sequence[Path]) -> None:
    for folder in folders:
        _write(folder / "cgroup.kill", "1")
    for _ in range(500):
        pids: set[int] = set()
        for folder in folders:
            pids |= _members(folder)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def clean_stale(harness_pid: int | None = None) -> int:
    """Kill what is left in the cgroups of harnesses that are gone (or of ``harness_pid``) and
    remove them; returns how many processes were there."""
    killed = 0
    for _, where in _hierarchies():
        try:
            entries = list(where.glob(f"{_PREFIX}*"))
        except OSError:
            continue
        for parent in entries:
            pid_text, _, start = parent.name[len(_PREFIX) :].partition("-")
            if not pid_text.isdigit():
                continue
            pid = int(pid_text)
            if harness_pid is None and _start_time(pid) == start:
                continue  # that harness is still running
            if harness_pid is not None and pid != harness_pid:
                continue
            children = [c for c in parent.iterdir() if c.is_dir()]
            killed += sum(len(_members(c)) for c in children)
            _kill_folders(children)
            for folder in (*children, parent):
                with contextlib.suppress(OSError):
                    folder.rmdir()
    return killed
