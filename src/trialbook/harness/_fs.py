"""The file system after an agent: removing folders it has had its hands on (without recursing on
the stack, without following a symbolic link, never raising: a folder that cannot be removed is
left, never a crash), and telling whether it filled the disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

__all__ = ["Free", "agent_filled_the_disk", "free_space", "remove_tree"]


def remove_tree(path: Path) -> bool:
    """Remove ``path`` with everything under it; True when it is gone.

    ``shutil.rmtree`` first (quick, in-process). It recurses once per level, so a tree thousands of
    folders deep raises RecursionError, and it cannot enter a folder the agent locked (``chmod 000``,
    for a harness that is not root): then the system's ``chmod -R u+rwx`` and ``rm -rf``, which walk
    without recursion and follow no symbolic link below ``path``. A symbolic link at ``path`` itself
    is removed, never followed.
    """
    try:
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
