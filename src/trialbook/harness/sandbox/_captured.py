"""The raw output of an attempt's commands: held in memory files while the attempt runs, capped
while written and cut to its head and tail when handed to the driver."""

from __future__ import annotations

import os

__all__ = ["Captured"]


class Captured:
    """The raw stdout and stderr of an attempt's commands, held in memory files (memfd) until the
    attempt ends, when the worker hands what is not empty to the driver. Each stream is capped by the
    sandbox's file-size rlimit while it is written, and what is kept of it by :attr:`KEEP_HEAD` and
    :attr:`KEEP_TAIL`: a stream is a file the agent can make 1 GiB long for free (one write after a
    seek), so neither the harness's memory nor the ledger's disk may follow its length."""

    NAMES = ("agent.stdout", "agent.stderr", "grader.stdout", "grader.stderr")
    KEEP_HEAD = 3 << 20
    """Bytes kept from the start of a longer stream."""
    KEEP_TAIL = 1 << 20
    """Bytes kept from its end (where errors and a grader's verdict are)."""

    def __init__(self) -> None:
        self.fds: dict[str, int] = {}
        for name in self.NAMES:
            self.fds[name] = os.memfd_create(name, os.MFD_CLOEXEC)

    def text(self, name: str) -> str:
        """What was written to ``name`` so far; of a longer stream, its last :attr:`KEEP_TAIL`
        bytes (enough for the last lines, which is what is read of it)."""
        fd = self.fds[name]
        size = os.fstat(fd).st_size
        start = max(0, size - self.KEEP_TAIL)
        return os.pread(fd, size - start, start).decode(errors="replace") if size else ""

    def contents(self) -> tuple[dict[str, bytes], list[str]]:
        """Every stream that is not empty, by name (what the driver keeps beside the ledger), and a
        note for each that was cut to its head and tail."""
        out: dict[str, bytes] = {}
        notes: list[str] = []
        for name, fd in self.fds.items():
            size = os.fstat(fd).st_size
            if not size:
                continue
            if size <= self.KEEP_HEAD + self.KEEP_TAIL:
                out[name] = os.pread(fd, size, 0)
                continue
            dropped = size - self.KEEP_HEAD - self.KEEP_TAIL
            out[name] = (
                os.pread(fd, self.KEEP_HEAD, 0)
                + f"\n[trialbook: {dropped} bytes dropped here]\n".encode()
                + os.pread(fd, self.KEEP_TAIL, size - self.KEEP_TAIL)
            )
            notes.append(
                f"{name}: {size / 2**20:.1f} MiB written; its first "
                f"{self.KEEP_HEAD >> 20} MiB and last {self.KEEP_TAIL >> 20} MiB kept"
            )
        return out, notes

    def close(self) -> None:
        """Release the memory files."""
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}
