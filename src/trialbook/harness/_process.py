"""Starting a command, enforcing its wall-clock timeout, and leaving no process of it behind.

When the command ends or its time is up, the harness sweeps the attempt's processes
(``trialbook.harness._sweep``: found by their token, stopped, killed; on timeout they first get
SIGTERM and a short grace), and returns once the kernel has released every process it killed.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from trialbook.harness._cancel import cancelled as _cancelled
from trialbook.harness._cgroup import Cgroup
from trialbook.harness._container import container_name, remove_containers
from trialbook.harness._container_wrap import CONTAINER_STARTED, container_argv, inside_env
from trialbook.harness._forward import Door
from trialbook.harness._preflight import start_program
from trialbook.harness._sandbox import (
    Limits,
    SandboxSpec,
    Tier,
    start_check,
    wrap,
)
from trialbook.harness._sweep import (
    RELEASE_S,
    TOKEN_VAR,
    Signalled,
    alive,
    await_release,
    find_processes,
    process_stat,
    signal_group,
    sweep,
)

__all__ = [
    "NOT_STARTED",
    "Captured",
    "InfoPipe",
    "Outcome",
    "read_status_lines",
    "run_command",
    "run_sandboxed",
]

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
    unreleased: int = 0
    """Processes the harness killed that the kernel still held after ``RELEASE_S`` (zombies their
    parent did not reap, or an init still emptying its pid namespace): they count against the
    user's process limit until they are reaped."""
    sandbox_info: bytes = b""
    """What the sandbox wrote on ``info_fd`` (bwrap's JSON naming its child's pid)."""
    not_started: str | None = None
    """Why the command's program could not be started, as the harness's own start check saw it
    before the command ran (``trialbook.harness._sandbox.start_check``); None when it started or
    was not checked. Nothing the command prints or exits with sets it."""


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


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdout: int,
    stderr: int,
    token: str,
    workspace: Path | None = None,
    grace_s: float = 2.0,
    pass_fds: tuple[int, ...] = (),
    memory_mb: int = 8192,
    info_fd: int | None = None,
    stdin: int | None = None,
) -> Outcome:
    """Run ``argv`` in its own session; stop it at ``timeout_s`` or when the executor running this
    worker cancels it (``trialbook.harness._cancel``).

    ``env`` must carry ``TRIALBOOK_SANDBOX_TOKEN=token``. Raises ``OSError`` if the command cannot be
    started at all (the caller records an infrastructure error). ``stdout`` and ``stderr`` are file
    descriptors the command writes to. ``pass_fds`` are inherited by the
    command and closed here once it has started. Where cgroups can be made the command runs in its
    own (``trialbook.harness._cgroup``): at most ``PIDS_MAX`` processes and ``memory_mb`` in all,
    and whatever is in it at the end is left behind, however it hid from the sweep.

    ``info_fd``: the (non-blocking) read end of bwrap's ``--info-fd``, read while the command runs
    (``Outcome.sandbox_info``); the caller closes it. bwrap names there its child, the sandbox's own
    init (pid 1 inside), which is known by its start time as soon as it is named, while it certainly
    lives: a pid looked up after the command ended may be another process's by then.

    It returns once every process it killed is released (reaped, ``trialbook.harness._sweep``) and
    the sandbox's init has exited (its pid namespace is empty then); ``Outcome.unreleased`` says what
    was still held after ``RELEASE_S``. A cancelled command does not wait: the run is ending.

    ``stdin``: a descriptor the command gets as its stdin (closed here once it has started), else
    /dev/null.
    """
    if env.get(TOKEN_VAR) != token:
        raise ValueError(f"env must carry {TOKEN_VAR}={token}")
    cgroup = Cgroup.acquire(memory_mb=memory_mb)
    try:
        return _run(
            cgroup.join(argv) if cgroup else argv,
            cgroup,
            cwd=cwd,
            env=env,
            timeout_s=timeout_s,
            stdout=stdout,
            stderr=stderr,
            token=token,
            workspace=workspace,
            grace_s=grace_s,
            pass_fds=pass_fds,
            info=_SandboxInfo(info_fd),
            stdin=stdin,
        )
    finally:
        if cgroup is not None:
            cgroup.release()


_SETTLE_S = 0.25
"""How long processes found at the end get to finish exiting on their own before they count as left
behind: bwrap's own init inside the sandbox can outlive the bwrap it reports to by a moment."""


def _survivors(token: str, workspace: Path | None, cgroup: Cgroup | None) -> set[int]:
    """Processes of the command still alive once it ended, given a moment to finish exiting."""
    end = time.monotonic() + _SETTLE_S
    pause = 0.0005  # bwrap's init is usually gone within a millisecond: look again soon, then less often
    while True:
        found = set(find_processes(token, workspace))
        if cgroup is not None:
            found |= {p for p in cgroup.members() if alive(p)}
        if not found or time.monotonic() >= end:
            return found
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def _run(
    argv: Sequence[str],
    cgroup: Cgroup | None,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdout: int,
    stderr: int,
    token: str,
    workspace: Path | None,
    grace_s: float,
    pass_fds: tuple[int, ...],
    info: _SandboxInfo,
    stdin: int | None,
) -> Outcome:
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    finally:
        for fd in (*pass_fds, *(() if stdin is None else (stdin,))):
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
            if _cancelled():
                cancelled = True
            elif now >= deadline:
                timed_out = True
            else:
                # Wake when the process ends (pidfd becomes readable), at the deadline, or to look
                # at the cancel scope a few times a second.
                wait = min(_CANCEL_CHECK_S, deadline - now)
                if pidfd is not None:
                    ready = select.select([pidfd, *info.waiting()], [], [], wait)[0]
                    if info.fd in ready:
                        info.read()
                else:
                    time.sleep(min(wait, 0.01))
                    info.read()
                continue
            break
    finally:
        if pidfd is not None:
            os.close(pidfd)
    elapsed = time.monotonic() - start
    signalled = Signalled()
    if timed_out or cancelled:
        signal_group(proc.pid, signal.SIGTERM)
        sweep(token, workspace, signal.SIGTERM, signalled=signalled)
        grace_end = time.monotonic() + grace_s
        while time.monotonic() < grace_end and (
            proc.poll() is None or find_processes(token, workspace)
        ):
            time.sleep(0.02)
        signal_group(proc.pid, signal.SIGKILL)
        sweep(token, workspace, signal.SIGKILL, signalled=signalled)
        if cgroup is not None:
            signalled.add(cgroup.members())
            cgroup.kill()
        proc.wait()
        code = None
    else:
        # Count every process still there (its group's, escaped ones, the cgroup's), kill them.
        survivors = _survivors(token, workspace, cgroup)
        if survivors:
            signalled.add(survivors)
            sweep(token, workspace, signal.SIGKILL, signalled=signalled)
        signal_group(proc.pid, signal.SIGKILL)
        if cgroup is not None and survivors:
            cgroup.kill()
    if timed_out or cancelled or signalled.live:
        # What was killed is gone before we return: no process of the token may be left.
        for _ in range(500):
            if not find_processes(token, workspace):
                break
            sweep(token, workspace, signal.SIGKILL, signalled=signalled)
            time.sleep(0.01)
    info.read()
    held = signalled.live or signalled.zombies or info.init
    return Outcome(
        exit_code=code,
        elapsed_s=elapsed,
        timed_out=timed_out,
        cancelled=cancelled,
        # every process found after the command ended, however many sweeps it took to find them
        left_behind=0 if timed_out or cancelled else len(signalled.live),
        unreleased=await_release(signalled, info.init, RELEASE_S) if held and not cancelled else 0,
        sandbox_info=info.data,
    )


class _SandboxInfo:
    """What bwrap writes on its ``--info-fd`` (``{"child-pid": N, ...}``), read as it comes."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.data = b""
        self.init: dict[int, bytes] = {}
        """The sandbox's init, by pid and start time, once named."""
        self._done = fd is None

    def waiting(self) -> list[int]:
        """The descriptor to wait on while there is more to read."""
        return [] if self._done or self.fd is None else [self.fd]

    def read(self) -> None:
        """Take what is there (never blocks); once the JSON is whole, look its child up."""
        while not self._done and self.fd is not None:
            try:
                chunk = os.read(self.fd, 4096)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._done = True  # bwrap closed it
            self.data += chunk
            try:
                named = json.loads(self.data)
            except ValueError:
                continue  # not whole yet
            self._done = True
            pid = named.get("child-pid") if isinstance(named, dict) else None
            stat = process_stat(pid) if isinstance(pid, int) and pid > 1 else None
            if pid is not None and stat is not None and not stat.dead:
                self.init[pid] = stat.start


def run_sandboxed(
    who: str,
    command: str,
    *,
    tier: Tier,
    sandbox: SandboxSpec,
    env: dict[str, str],
    limits: Limits,
    timeout_s: float,
    captured: Captured,
    token: str,
    grace_s: float,
) -> Outcome:
    """Run the agent's or the grader's command in the tier; OSError if the sandbox did not start.

    Before the command runs, its shell checks that the program it names can be started and says so
    on a pipe that it closes before the command runs (``start_check``): what the harness saw there
    is ``Outcome.not_started``; whatever the command itself prints or exits with is its own."""
    program = start_program(command, in_workspace_is_agents=who == "grader")
    check = start_check(program) if program is not None else ""
    # podman passes the status pipe into the container, where the shell also says it started;
    # docker cannot pass a descriptor in: no start check there, and no word that it started
    told = sandbox.container is not None and sandbox.container.engine.name == "podman"
    if sandbox.container is not None and not told:
        check = ""
    door = None
    if tier == "container" and sandbox.gateway is not None:
        # the model gateway's forwarder, in the network namespace the container joins
        try:
            door = Door(*sandbox.gateway)
        except OSError as exc:
            raise OSError(f"the {who}'s door to the model gateway did not open: {exc}") from None
    status_read, status_write = os.pipe() if check or told else (None, None)
    if status_read is not None:
        os.set_blocking(status_read, False)
    info = InfoPipe(bwrap=tier == "bwrap")
    if sandbox.binds:
        env = inside_env(env, sandbox)
    try:
        outcome = run_command(
            container_argv(
                command,
                sandbox,
                env,
                limits,
                check if told else None,
                network_ns=door.netns if door is not None else None,
            )
            if tier == "container"
            else wrap(
                tier, command, sandbox, env, limits, info_fd=info.write_fd, check=check or None
            ),
            stdin=status_write,
            pass_fds=info.pass_fds,
            cwd=sandbox.workspace,
            env=env,
            timeout_s=timeout_s,
            stdout=captured.fds[f"{who}.stdout"],
            stderr=captured.fds[f"{who}.stderr"],
            token=token,
            workspace=sandbox.workspace,
            grace_s=grace_s,
            memory_mb=limits.memory_mb,
            info_fd=info.read_fd,
        )
    except BaseException:
        if sandbox.container is not None:  # whatever stopped the harness, no container is left
            remove_containers(sandbox.container.engine, [container_name(token)])
        raise
    finally:
        info.close()
        if door is not None:
            door.close()
        why = None
        started = False
        said: list[str] = []
        if status_read is not None:
            said = read_status_lines(status_read)
            os.close(status_read)
            started = CONTAINER_STARTED in said
            why = next((line[:500] for line in said if line != CONTAINER_STARTED), None)

    if sandbox.container is not None and (outcome.timed_out or outcome.cancelled):
        # its client killed at a timeout, the engine keeps the container: remove it (a command
        # that ended on its own is gone already: run --rm waits for the removal)
        remove_containers(sandbox.container.engine, [container_name(token)])
    if not info.started(outcome) and not outcome.cancelled:
        raise OSError(f"the {who}'s sandbox did not start: {_last_line(captured, f'{who}.stderr')}")
    if told and not started and why is None and not outcome.cancelled:
        # the command never ran: whatever the engine exited with is its own failure
        raise OSError(
            f"the {who}'s container did not start: {_last_line(captured, f'{who}.stderr')}"
        )
    return dataclasses.replace(outcome, not_started=why) if why else outcome


def _last_line(captured: Captured, name: str) -> str:
    lines = captured.text(name).strip().splitlines()
    return lines[-1] if lines else "no output"


class InfoPipe:
    """bwrap's --info-fd: it writes the child's pid once the sandbox is set up (bwrap tier only);
    ``run_command`` reads it."""

    def __init__(self, *, bwrap: bool) -> None:
        self.read_fd: int | None = None
        self.write_fd: int | None = None
        if bwrap:
            self.read_fd, self.write_fd = os.pipe()
            os.set_blocking(self.read_fd, False)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return () if self.write_fd is None else (self.write_fd,)

    def started(self, outcome: Outcome) -> bool:
        """Whether the sandbox came up (always true for the process tier)."""
        return self.write_fd is None or b"child-pid" in outcome.sandbox_info

    def close(self) -> None:
        if self.read_fd is not None:
            os.close(self.read_fd)
            self.read_fd = None


NOT_STARTED = "harness error:"
"""How the error of an attempt whose agent or grader could not be started begins."""


def read_status_lines(fd: int) -> list[str]:
    """The lines written on the status pipe's read end ``fd`` (at most 4 KiB)."""
    data = b""
    while len(data) < 4096:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return [line for line in data.decode(errors="replace").splitlines() if line.strip()]
