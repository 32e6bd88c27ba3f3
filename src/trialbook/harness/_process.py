"""Starting a command, enforcing its wall-clock timeout, and leaving no process of it behind.

Every process of an attempt carries ``TRIALBOOK_SANDBOX_TOKEN`` in its environment (inherited through
forks and ``setsid``). When the command ends or its time is up, the harness finds the attempt's
processes by that token (and, for ones that dropped their environment, by a working directory inside
the workspace), stops them all with SIGSTOP so that none can fork again while the sweep runs, then
kills them. On timeout they first get SIGTERM and a short grace.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TOKEN_VAR", "Outcome", "find_processes", "run_command", "sweep"]

TOKEN_VAR = "TRIALBOOK_SANDBOX_TOKEN"
_CANCEL_CHECK_S = 0.2


@dataclass(frozen=True)
class Outcome:
    """How a command ended."""

    exit_code: int | None
    """The command's exit status (negative: killed by that signal); None when it was stopped."""
    elapsed_s: float
    """Wall-clock seconds from start until the command ended or was stopped."""
    timed_out: bool
    """The harness stopped it at its timeout."""
    cancelled: bool
    """The harness stopped it because the run was interrupted."""
    left_behind: int
    """Processes of the command still alive after it ended (killed by the sweep)."""


def find_processes(token: str, workspace: Path | None = None, *, prefix: bool = False) -> list[int]:
    """Pids of live processes whose environment carries ``token`` (or whose cwd is in ``workspace``).

    ``prefix``: match every token that starts with ``token`` (all attempts of a run: ``"RUN/"``).
    """
    needle = f"\0{TOKEN_VAR}={token}{'' if prefix else chr(0)}".encode()
    root = str(workspace.resolve()) if workspace is not None else None
    me = os.getpid()
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        try:
            fd = os.open(f"/proc/{pid}/environ", os.O_RDONLY)
            try:
                environ = b"\0" + os.read(fd, 1 << 20)
            finally:
                os.close(fd)
            if needle in environ:
                found.append(pid)
                continue
            if root is not None:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                if cwd == root or cwd.startswith(root + "/"):
                    found.append(pid)
        except OSError:
            continue  # gone, a zombie, or not ours to read
    return found


def sweep(
    token: str, workspace: Path | None = None, sig: int = signal.SIGKILL, *, prefix: bool = False
) -> int:
    """Stop every process of ``token``, then send ``sig`` to them; returns how many there were.

    SIGSTOP first, repeated until no new process appears, so a fork loop cannot outrun the sweep.
    """
    stopped: set[int] = set()
    for _ in range(100):
        fresh = [p for p in find_processes(token, workspace, prefix=prefix) if p not in stopped]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
            stopped.add(pid)
    for pid in stopped:
        _signal(pid, sig)
        if sig != signal.SIGKILL:
            _signal(pid, signal.SIGCONT)
    return len(stopped)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdout: Path,
    stderr: Path,
    token: str,
    workspace: Path | None = None,
    grace_s: float = 2.0,
    cancel: threading.Event | None = None,
    pass_fds: tuple[int, ...] = (),
) -> Outcome:
    """Run ``argv`` in its own session; stop it at ``timeout_s`` or when ``cancel`` is set.

    ``env`` must carry ``TRIALBOOK_SANDBOX_TOKEN=token``. Raises ``OSError`` if the command cannot be
    started at all (the caller records an infrastructure error). ``pass_fds`` are inherited by the
    command and closed here once it has started.
    """
    if env.get(TOKEN_VAR) != token:
        raise ValueError(f"env must carry {TOKEN_VAR}={token}")
    start = time.monotonic()
    try:
        with stdout.open("wb") as out, stderr.open("wb") as err:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                pass_fds=pass_fds,
            )
    finally:
        for fd in pass_fds:
            os.close(fd)
    deadline = start + timeout_s
    timed_out = cancelled = False
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except OSError:
        pidfd = None  # an old kernel: poll instead
    try:
        while True:
            code = proc.poll()
            if code is not None:
                break
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                cancelled = True
            elif now >= deadline:
                timed_out = True
            else:
                # Wake when the process ends (pidfd becomes readable), at the deadline, or to look
                # at the cancel flag a few times a second.
                wait = min(_CANCEL_CHECK_S, deadline - now)
                if pidfd is not None:
                    select.select([pidfd], [], [], wait)
                else:
                    time.sleep(min(wait, 0.01))
                continue
            break
    finally:
        if pidfd is not None:
            os.close(pidfd)
    elapsed = time.monotonic() - start
    left_behind = 0
    if timed_out or cancelled:
        _signal_group(proc.pid, signal.SIGTERM)
        sweep(token, workspace, signal.SIGTERM)
        grace_end = time.monotonic() + grace_s
        while time.monotonic() < grace_end and (
            proc.poll() is None or find_processes(token, workspace)
        ):
            time.sleep(0.02)
        _signal_group(proc.pid, signal.SIGKILL)
        sweep(token, workspace, signal.SIGKILL)
        proc.wait()
        code = None
    else:
        _signal_group(proc.pid, signal.SIGKILL)
        left_behind = sweep(token, workspace, signal.SIGKILL)
    if timed_out or cancelled or left_behind:
        # What was killed is gone before we return: no process of the token may be left.
        for _ in range(500):
            if not find_processes(token, workspace):
                break
            sweep(token, workspace, signal.SIGKILL)
            time.sleep(0.01)
    return Outcome(
        exit_code=code,
        elapsed_s=elapsed,
        timed_out=timed_out,
        cancelled=cancelled,
        left_behind=left_behind,
    )
