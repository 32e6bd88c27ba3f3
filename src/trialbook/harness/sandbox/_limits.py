"""The resource limits of every process of an attempt, and how they are set below the caller's."""

from __future__ import annotations

import resource
from dataclasses import dataclass

__all__ = ["Limits", "clamped", "limit_notes"]


@dataclass(frozen=True)
class Limits:
    """Resource limits of every process of an attempt (rlimits, per process)."""

    cpu_s: int
    """CPU seconds (the wall-clock timeout is enforced separately, by the harness)."""
    memory_mb: int = 8192
    """Address space (virtual memory)."""
    file_mb: int = 1024
    """Largest file a process may write."""
    open_files: int = 1024
    processes: int = 4096
    """RLIMIT_NPROC: processes of the user, machine-wide (the kernel does not apply it to root;
    the attempt's cgroup, where the harness can make one, caps an attempt's own processes)."""


def clamped(limits: Limits) -> dict[str, int]:
    """The limits as ``ulimit`` flags and values, each lowered to the caller's hard limit.

    A process cannot raise a hard limit, so a harness started with ``ulimit -Hn 512`` that asked
    for 1024 would make every attempt fail at its first line ("exited with 126"); the caller's
    lower limit is kept instead (the run says so when it is the CPU time, see ``limit_notes``).
    """
    wanted = {
        "-t": (limits.cpu_s, resource.RLIMIT_CPU, 1),
        "-v": (limits.memory_mb * 1024, resource.RLIMIT_AS, 1024),
        "-f": (limits.file_mb * 2048, resource.RLIMIT_FSIZE, 512),
        "-n": (limits.open_files, resource.RLIMIT_NOFILE, 1),
        "-p": (limits.processes, resource.RLIMIT_NPROC, 1),
    }
    out: dict[str, int] = {}
    for flag, (value, which, unit) in wanted.items():
        hard = resource.getrlimit(which)[1]
        out[flag] = value if hard == resource.RLIM_INFINITY else min(value, hard // unit)
    return out


def limit_notes(cpu_s: int) -> list[str]:
    """What the caller's hard limits take away from an attempt that may use ``cpu_s`` CPU seconds."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY and hard < cpu_s:
        return [
            f"the caller's hard CPU-time limit ({hard} s) is below what an attempt may use "
            f"({cpu_s} s): an attempt may be stopped by it (SIGXCPU) before its timeout"
        ]
    return []
