"""What a path given as a ledger is, said in words before anything opens it: a folder, a fifo or
a device is refused with a message (a fifo opened for reading would block the command forever)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["ledger_file_problem"]


def ledger_file_problem(path: Path, *, may_be_absent: bool = False) -> str | None:
    """Why ``path`` cannot be a ledger file, or None (an absent path is fine when told so)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None if may_be_absent else "no such file"
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a ledger file"
    kind = "a fifo" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"is {kind}, not a regular file: a ledger must be a file"
