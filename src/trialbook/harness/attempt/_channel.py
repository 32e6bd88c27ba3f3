"""The verdict channel: where a grader that runs the agent's code says its verdict (docs/harness.md,
"The verdict channel").

A grader's stdout is held by every process between the harness and the grader: the harness's
``/bin/sh -c`` wrapper and, in the bwrap tier, bwrap's init, which are dumpable, so code the grader
runs (the agent's) opens their ``/proc/PID/fd/1`` and appends a verdict line of its own after the
grader's. The channel is a unix socket the harness listens on, named in ``TRIALBOOK_VERDICT_SOCKET``;
the grader connects before it runs any of the agent's code and writes its verdict line on that
connection. A connection is held only by the process that made it (a socket cannot be opened
through ``/proc/PID/fd``, and an undumpable grader's descriptors cannot be taken), and the harness
reads the first connection made, once the grader's processes are gone: one made later (the agent's
code connecting too) is ignored and said in the row's ``error``.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

from trialbook.harness.sandbox import remove_tree

__all__ = ["VERDICT_VAR", "VerdictChannel"]

VERDICT_VAR = "TRIALBOOK_VERDICT_SOCKET"
"""The variable naming the channel's socket in the grader's environment."""
_READ_MAX = 1 << 18
"""Bytes read of the verdict connection at most (its line is read only up to ``MAX_LINE``)."""
_SUN_PATH_MAX = 107
"""Bytes of a unix socket's path (``sun_path``, less its terminating NUL)."""


class VerdictChannel:
    """One grader's verdict channel: a listening socket in a folder of its own."""

    def __init__(self, near: Path) -> None:
        """Listen in a fresh folder under ``near`` (the attempt folder), or under the temporary
        folder when that path would be longer than a socket's path may be."""
        self.folder = Path(tempfile.mkdtemp(prefix="verdict.", dir=near))
        if len(os.fsencode(self.folder / "v")) > _SUN_PATH_MAX:
            remove_tree(self.folder)
            self.folder = Path(tempfile.mkdtemp(prefix="trialbook-verdict."))
        self.path = self.folder / "v"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(os.fsdecode(self.path))
            self._listener.listen(64)
            self._listener.setblocking(False)
        except OSError:
            self.close()
            raise

    def take(self) -> tuple[str | None, int]:
        """What the first connection wrote (None: no connection was made) and how many other
        connections were made. Called once the grader's processes are gone; never blocks."""
        first: str | None = None
        others = 0
        while True:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            with conn:
                if first is None:
                    first = _read_what_is_there(conn)
                else:
                    others += 1
        return first, others

    def close(self) -> None:
        """Stop listening and remove the folder."""
        self._listener.close()
        remove_tree(self.folder)


def _read_what_is_there(conn: socket.socket) -> str:
    """What the connection holds, up to ``_READ_MAX`` bytes, without waiting for more."""
    conn.setblocking(False)
    chunks: list[bytes] = []
    size = 0
    while size < _READ_MAX:
        try:
            chunk = conn.recv(min(1 << 16, _READ_MAX - size))
        except (BlockingIOError, InterruptedError):
            break  # a process still holds the connection open: what it wrote so far
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode(errors="replace")
