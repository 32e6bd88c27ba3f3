"""Names that say which harness made a folder (its scratch folder, its cgroups), so that a later
harness can tell what a killed one left behind from what a live one is using.

A stamp is ``nsPIDNS-PID-STARTTIME``: the inode of the harness's pid namespace, its pid and its
start time (a pid the kernel gave to another process since has another start time). Two containers
may share ``/tmp`` or a cgroup tree while their pids mean different processes: a stamp from another
pid namespace is never judged, so one container's harness never removes another's live folders.
The namespace comes first so that trialbook 0.1, which named folders ``PID-STARTTIME`` and skips a
name that does not start with a number, leaves these alone too.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

__all__ = ["is_dead", "pid_of", "stamp"]


@cache
def _pid_namespace() -> str:
    try:
        link = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return "0"
    return link[link.find("[") + 1 : link.rfind("]")] or "0"


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()[19].decode()


def stamp(pid: int) -> str | None:
    """The stamp of live process ``pid`` of this pid namespace (None: no such process)."""
    start = _start_time(pid)
    return None if start is None else f"ns{_pid_namespace()}-{pid}-{start}"


def _parts(text: str) -> tuple[str, str, str] | None:
    parts = text.split("-")
    if len(parts) == 2:  # PID-STARTTIME, as trialbook 0.1 named them: judged as this namespace's
        parts.insert(0, f"ns{_pid_namespace()}")
    if len(parts) != 3 or not parts[0].startswith("ns") or not parts[1].isdigit():
        return None
    return parts[0], parts[1], parts[2]


def is_dead(text: str) -> bool:
    """Whether the harness that wrote stamp ``text`` is gone (False when that cannot be told here:
    another pid namespace's stamp, or not a stamp at all)."""
    parts = _parts(text)
    if parts is None or parts[0] != f"ns{_pid_namespace()}":
        return False
    return stamp(int(parts[1])) != "-".join(parts)


def pid_of(text: str) -> int | None:
    """The pid in stamp ``text`` (None when it is not a stamp)."""
    parts = _parts(text)
    return None if parts is None else int(parts[1])
