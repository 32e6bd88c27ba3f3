"""The file system of an attempt: its own bounded scratch (a tmpfs of a given size and inode count,
where the harness can mount one), removing folders an agent has had its hands on (without recursing
on the stack, without following a symbolic link, never raising: a folder that cannot be removed is
left, never a crash), and telling whether it filled the disk."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "Free",
    "agent_filled_the_disk",
    "bound_problem",
    "free_space",
    "mount_bound",
    "remove_tree",
    "unbound_notes",
    "unmount_under",
]

_MS_NOSUID, _MS_NODEV = 2, 4
_MNT_DETACH, _UMOUNT_NOFOLLOW = 2, 8


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def mount_bound(folder: Path, mb: int, inodes: int) -> None:
    """Mount a fresh tmpfs on ``folder`` that holds at most ``mb`` MiB and ``inodes`` files and
    folders (mode 0700, no setuid, no device files): an agent that fills it fills its own scratch,
    never the file system the harness's files, the oracle copy and the ledger live on. Raises
    OSError when it cannot (see ``bound_problem``)."""
    options = f"size={mb}m,nr_inodes={inodes},mode=0700".encode()
    flags = _MS_NOSUID | _MS_NODEV
    if _libc().mount(b"trialbook-scratch", os.fsencode(folder), b"tmpfs", flags, options) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot mount the attempt's scratch: {os.strerror(err)}", str(folder))


@functools.cache
def bound_problem() -> str | None:
    """Why attempts get no bounded scratch here (None: they do): mounting a tmpfs needs root (or
    CAP_SYS_ADMIN) in the harness's own mount namespace. Tried once per process."""
    if not sys.platform.startswith("linux"):
        return "a tmpfs of a given size and inode count is Linux's"
    probe = Path(tempfile.mkdtemp(prefix="trialbook-bound-probe-"))
    try:
        mount_bound(probe, 1, 64)
    except OSError as exc:
        return f"mounting a tmpfs needs root ({exc.strerror})"
    finally:
        unmount_under(probe)
        with contextlib.suppress(OSError):
            probe.rmdir()
    return None


def unbound_notes() -> list[str]:
    """What the run's notes say when attempts get no bounded scratch here (nothing when they do)."""
    problem = bound_problem()
    if problem is None:
        return []
    return [
        f"attempt scratch not bounded here ({problem}): scratch_mb and scratch_inodes do not "
        "apply; an agent that fills the disk fails, graded as a full disk"
    ]


def _mount_points() -> list[str]:
    """Mount points of this process's mount namespace (``/proc/self/mountinfo``, field 5, with its
    octal escapes of space, tab, newline and backslash undone)."""
    try:
        lines = Path("/proc/self/mountinfo").read_bytes().splitlines()
    except OSError:
        return []
    points = []
    for line in lines:
        fields = line.split(b" ")
        if len(fields) > 4:
            raw = fields[4].decode("ascii", errors="replace")
            for code in ("\\040", "\\011", "\\012", "\\134"):
                raw = raw.replace(code, chr(int(code[1:], 8)))
            points.append(raw)
    return points


def unmount_under(path: Path) -> None:
    """Detach every mount at or below ``path`` (deepest first, never through a symbolic link): the
    attempts' scratch file systems, before their folders are removed. Nothing happens where
    nothing is mounted or the process may not unmount."""
    if not sys.platform.startswith("linux"):
        return
    top = os.path.abspath(path)
    inside = [p for p in _mount_points() if p == top or p.startswith(top.rstrip("/") + "/")]
    for point in sorted(set(inside), key=len, reverse=True):
        _libc().umount2(os.fsencode(point), _MNT_DETACH | _UMOUNT_NOFOLLOW)


def remove_tree(path: Path) -> bool:
    """Remove ``path`` with everything under it; True when it is gone.

    ``shutil.rmtree`` first (quick, in-process). It recurses once per level, so a tree thousands of
    folders deep raises RecursionError, and it cannot enter a folder the agent locked (``chmod 000``,
    for a harness that is not root): then the system's ``chmod -R u+rwx`` and ``rm -rf``, which walk
    without recursion and follow no symbolic link below ``path``. A symbolic link at ``path`` itself
    is removed, never followed. A file system mounted at or below ``path`` (an attempt's scratch)
    is detached first, so that its mount point can go and nothing is removed through a mount.
    """
    try:
        if not path.is_symlink() and path.is_dir():
            unmount_under(path)
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink(missing_ok=True)
            return True
        shutil.rmtree(path, ignore_errors=True)
    except (OSError, RecursionError):
        pass
    if not os.path.lexists(path):
        return True
    for argv in (["chmod", "-R", "u+rwx", "--", str(path)], ["rm", "-rf", "--", str(path)]):
        with contextlib.suppress(OSError, subprocess.SubprocessError):  # the result says
            subprocess.run(argv, capture_output=True, timeout=600, check=False)
    return not os.path.lexists(path)


class Free(NamedTuple):
    """What an unprivileged writer may still use on a file system (0: unknown)."""

    bytes: int
    inodes: int


def free_space(folder: Path) -> Free:
    """Bytes and inodes free for an unprivileged writer on the file system holding ``folder``
    (0: unknown; a file system that does not count inodes reports 0 of them)."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return Free(0, 0)
    return Free(info.f_bavail * info.f_frsize, info.f_favail)


def agent_filled_the_disk(attempt_dir: Path, at_start: Free, most: int = 1_000_000) -> bool:
    """Whether the disk is full now, of bytes or of inodes, and the attempt's own folder holds at
    least half of what was free of it when the attempt started: then a harness step that failed
    after the agent ran failed for the agent's doing (an agent can run the disk out of either: a
    1 GiB file, or empty files until no inode is left), not the harness's. Counted without
    recursion and without following a link, over at most ``most`` entries (the walk stops as soon
    as the answer is known)."""
    now = free_space(attempt_dir)
    full_bytes = at_start.bytes > 0 and now.bytes <= min(at_start.bytes // 100, 64 << 20)
    full_inodes = at_start.inodes > 0 and now.inodes <= min(at_start.inodes // 100, 1 << 16)
    if not (full_bytes or full_inodes):
        return False
    used = entries = 0
    stack, seen = [str(attempt_dir)], 0
    while stack and seen < most:
        try:
            listing = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in listing:
            seen += 1
            entries += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            used += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
        if (full_bytes and used * 2 >= at_start.bytes) or (
            full_inodes and entries * 2 >= at_start.inodes
        ):
            return True
    return False
