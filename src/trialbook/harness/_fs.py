"""Removing folders an agent has had its hands on: without recursing on the stack, without following
a symbolic link, and never raising (a folder that cannot be removed is left, never a crash)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["remove_tree"]


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
