"""The file system after an agent: removing folders it has had its hands on (without recursing on
the stack, without following a symbolic link, never raising: a folder that cannot be removed is
left, never a crash), and telling whether it filled the disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["agent_filled_the_disk", "free_bytes", "remove_tree"]


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


def free_bytes(folder: Path) -> int:
    """Bytes free for an unprivileged writer on the file system holding ``folder`` (0: unknown)."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return 0
    return info.f_bavail * info.f_frsize


def agent_filled_the_disk(attempt_dir: Path, free_at_start: int, most: int = 1_000_000) -> bool:
    """Whether the disk is full now and the attempt's own folder holds at least half of what was
    free when it started: then a harness step that failed after the agent ran failed for the
    agent's doing (nothing caps an attempt's disk use but the disk), not the harness's. Counted
    without recursion and without following a link, over at most ``most`` entries."""
    if free_at_start <= 0 or free_bytes(attempt_dir) > min(free_at_start // 100, 64 << 20):
        return False
    used, stack, seen = 0, [str(attempt_dir)], 0
    while stack and seen < most:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            used += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return used * 2 >= free_at_start
