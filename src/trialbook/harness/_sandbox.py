"""Sandbox tiers: how one command (an agent or a grader) is wrapped before it is started.

``bwrap`` (bubblewrap): its own pid, ipc and uts namespaces and, unless the task opts in, its own network
namespace (loopback only); of the host only the system folders, the Python running trialbook and
what the command names, read-only; only the workspace and the attempt's io folder writable; the suite
folder, the ledger file and its journals, the transcripts and every other attempt's folder not there
(a shown folder that holds one is rebuilt without it); a fresh /proc (the harness and its environment are not visible), a fresh /tmp (of the
attempt's ``scratch_mb`` where bwrap has ``--size``); the
environment exactly the one the harness starts bwrap with (never in bwrap's argv); ``--die-with-parent`` so the whole sandbox dies with the harness. Every
capability is dropped (also when the harness runs as root) and, where bwrap allows it, the sandbox has
its own user namespace in which no further one can be made: mount, umount, remount and raw sockets
fail inside.

``process``: its own session and process group (so a timeout can signal the whole tree), the
environment cleared, and rlimits on CPU time, address space, file size and open files. It does not hide
files or the network: a process-tier agent can read anything the harness user can, including the
suite's oracle by its absolute path.

Both tiers apply the same rlimits, set by the shell with ``ulimit`` before the command runs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from trialbook.errors import ArgumentError
from trialbook.harness._container import ContainerTarget, find_engine
from trialbook.harness._limits import Limits, clamped, limit_notes

__all__ = [
    "STATUS_FD",
    "TIERS",
    "Limits",
    "SandboxSpec",
    "Tier",
    "bwrap_problem",
    "clamped",
    "limit_notes",
    "resolve_tier",
    "start_check",
    "wrap",
]

Tier = Literal["bwrap", "process", "container"]
TIERS: tuple[Tier, ...] = ("bwrap", "process", "container")


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandboxed command may see and touch."""

    workspace: Path
    """Working directory; writable."""
    writable: tuple[Path, ...] = ()
    """Other writable folders (the attempt's io folder)."""
    readonly: tuple[Path, ...] = ()
    """Folders made visible read-only even if inside a hidden folder (the grader's oracle copy)."""
    hidden: tuple[Path, ...] = ()
    """Files and folders the command must not see (bwrap tier): the suite, the ledger file and its
    journals, the transcripts, other attempts. Exactly these are missing; the folders around them
    stay visible where the command names them."""
    network: bool = False
    container: ContainerTarget | None = None
    """The container tier: the engine and the task's image (the command's token names it)."""
    binds: Mapping[Path, str] = field(default_factory=dict)
    """The container tier: host path -> where it is bound instead of at its own path."""
    gateway: tuple[str, int] | None = None
    """The container tier: the model gateway's unix socket and the port its forwarder listens on
    in the network namespace the container joins (``_forward.Door``); None: no model."""
    tmp_mb: int | None = None
    """Size of each of the sandbox's own ``/tmp``, ``/var/tmp``, ``/dev/shm`` and ``/run`` (bwrap
    tier, where bwrap has ``--size``: 0.8 and later), MiB; None: the kernel's default, half the
    memory. They live in memory, charged to the attempt's cgroup; their inodes are not bounded."""


@cache
def bwrap_problem() -> str | None:
    """Why the bwrap tier cannot be used here (None: it works). Tried once per process."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [
        exe,
        "--ro-bind", "/", "/",
        "--proc", "/proc",
        "--dev", "/dev",
        "--unshare-pid", "--unshare-net", "--unshare-ipc",
        "--die-with-parent",
        *_CAP_DROP,
        "--", "/bin/true",
    ]  # fmt: skip
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not start: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap cannot create namespaces here: {reason[-1] if reason else done.returncode}"
    return None


_CAP_DROP = ("--cap-drop", "ALL")
"""Run as root, bwrap would otherwise hand the agent every capability (it could unmount the tmpfs
over the suite, remount / read-write, open raw sockets). Required: a bwrap without it is not used."""
_USERNS = ("--unshare-user", "--disable-userns")
"""Its own user namespace, in which it may create no other: the capability bounding set is empty,
so nothing the agent runs (a setuid binary, a nested ``unshare -r``) gets a capability back."""


@cache
def _userns_flags() -> tuple[str, ...]:
    """``_USERNS`` where this bwrap and kernel allow it (bwrap >= 0.8), else nothing."""
    exe = shutil.which("bwrap") or "bwrap"
    probe = [exe, "--ro-bind", "/", "/", "--dev", "/dev", *_USERNS, *_CAP_DROP, "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return _USERNS if done.returncode == 0 else ()


@cache
def _has_size() -> bool:
    """Whether this bwrap bounds a tmpfs with ``--size`` (bubblewrap 0.8 and later)."""
    exe = shutil.which("bwrap") or "bwrap"
    probe = [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--size", "1048576", "--tmpfs", "/tmp",
             *_CAP_DROP, "--", "/bin/true"]  # fmt: skip
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def resolve_tier(requested: str) -> tuple[Tier, str | None]:
    """The tier to use for ``auto | bwrap | process`` and a note when ``auto`` falls back.

    Raises :class:`ArgumentError` (a ``ValueError``) for another word, or when bwrap is asked for
    explicitly and does not work here.
    """
    if requested == "process":
        return "process", None
    if requested == "container":
        find_engine(argument="sandbox")  # the image of each task is had later, per task
        return "container", None
    if requested not in ("auto", "bwrap"):
        words = "auto, bwrap, process or container"
        raise ArgumentError(f"sandbox must be {words}, got {requested!r}", argument="sandbox")
    problem = bwrap_problem()
    if requested == "bwrap":
        if problem:
            raise ArgumentError(f"sandbox 'bwrap' cannot be used: {problem}", argument="sandbox")
        return "bwrap", None
    if problem:
        return "process", f"sandbox: using the process tier ({problem})"
    return "bwrap", None


STATUS_FD = 9
"""Where the command's shell finds the start-status pipe (the harness hands it in as stdin): the
shell moves it here, says on it why the command's program cannot be started, if it cannot, and
closes it before the command runs, so nothing the command starts can write on it."""
_CHECKED_WORD = re.compile(r"[A-Za-z0-9_./+@%,${}-]+")
"""A program word the start check expands and tests: a name or path, variables allowed (the
harness's own, ``"tool-$TRIALBOOK_TASK_ID"``), nothing that runs a command (no backquote, no
``$(``)."""


def start_check(program: str) -> str:
    """Shell lines that, before the command runs, test that ``program`` (its first word, variables
    expanded) can be started: an executable file for a path, a program on the PATH for a name. When
    it cannot, they write why on ``STATUS_FD`` and exit 127; either way the descriptor is closed
    before anything of the command runs. Empty for a word that is no plain program name."""
    if not _CHECKED_WORD.fullmatch(program) or "$(" in program:
        return ""
    var = "__trialbook_program"
    return (
        f'{var}="{program}"\n'
        f'case ${var} in */*) [ -f "${var}" ] && [ -x "${var}" ] || {{ '
        f'printf "%s\\n" "${var}: not found (not an executable file)" >&{STATUS_FD}; exit 127; }} ;; '
        f'*) command -v -- "${var}" >/dev/null 2>&1 || {{ '
        f'printf "%s\\n" "${var}: not found (not a program on the PATH)" >&{STATUS_FD}; exit 127; }} ;; '
        f"esac\nunset {var}\n"
    )


def _script(command: str, limits: Limits, check: str | None = None) -> str:
    # POSIX sh (dash) takes one limit per ulimit call: -t CPU seconds, -v KiB, -f 512-byte blocks,
    # -n descriptors, -p processes of the user; without -S/-H each sets both the soft and the hard
    # limit, so none can be raised again.
    # The process count is -p in dash and busybox but -u in bash, where -p is the (read-only) pipe
    # size: try -u first (dash refuses it as an unknown option), then -p.
    parts = [
        f"{{ ulimit -u {value} 2>/dev/null || ulimit -p {value}; }}"
        if flag == "-p"
        else f"ulimit {flag} {value}"
        for flag, value in clamped(limits).items()
    ]
    limits_set = f"{' && '.join(parts)} || exit 126\n"
    if check is None:
        return limits_set + command
    return f"{limits_set}{check}exec {STATUS_FD}>&-\n{command}"


def wrap(
    tier: Tier,
    command: str,
    spec: SandboxSpec,
    env: Mapping[str, str],
    limits: Limits,
    info_fd: int | None = None,
    names: str | None = None,
    check: str | None = None,
) -> list[str]:
    """The argv that runs ``command`` (through ``/bin/sh -c``) in ``tier``, to be started with
    exactly ``env`` as its environment: no value of ``env`` is in the argv (a process's argv is
    world-readable in /proc/PID/cmdline, its environment only by its own user).

    ``names``: the command whose named paths are shown (default ``command``); the pre-flight probe
    runs its checks with exactly the view the command it checks will get.

    ``info_fd`` (bwrap): bubblewrap writes the sandboxed child's pid there once the sandbox is set up,
    which tells a sandbox that failed to start apart from a command that failed.

    ``check`` (``start_check``): the command is then started with the write end of a pipe as its
    stdin, which its shell moves to ``STATUS_FD`` (outside the sandbox in the bwrap tier, where
    bwrap's init would hold a stdin), writes on when the program cannot be started, and closes
    before the command runs; the command's stdin is /dev/null as always.
    """
    move = f"exec {STATUS_FD}<&0 </dev/null\n"
    if tier == "container":
        raise ValueError("the container tier's argv is _container_wrap.container_argv's")
    if tier == "process":
        script = _script(command, limits, check)
        return ["/bin/sh", "-c", script if check is None else move + script]
    inner = ["/bin/sh", "-c", _script(command, limits, check)]
    outer = [] if check is None else ["/bin/sh", "-c", move + 'exec "$@"', "sh"]
    args: list[str] = [
        *outer,
        shutil.which("bwrap") or "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        *_userns_flags(),
        *_CAP_DROP,
        *_system_root(),
        "--proc", "/proc",
        *_PROC_READ_ONLY,
        "--dev", "/dev",
    ]  # fmt: skip
    size = [] if spec.tmp_mb is None or not _has_size() else ["--size", str(spec.tmp_mb << 20)]
    for fresh in ("/tmp", "/dev/shm", "/run", "/var/tmp"):
        args += [*size, "--tmpfs", fresh]
    # Beyond the system folders, only what the command needs: the Python running trialbook (its
    # prefixes and import path, so that `python -m ...` works inside) and the programs and files the
    # command names by absolute path, with the folders they live in, all read-only.
    python = set(_python_paths())
    bound = _outermost([*python, *_named_paths(names or command, env.get("PATH", ""))])
    bound = [b for b in bound if not _under(b, _SYSTEM_FOLDERS)]
    bundled = [_BUNDLED_SUITE] if _BUNDLED_SUITE.is_dir() else []
    hidden = [h.resolve() for h in (*spec.hidden, *bundled)]
    covered = list(_SYSTEM_FOLDERS)  # shown whole: a hidden entry inside is covered below
    for path in bound:
        if path in python:
            if not _under(path, hidden):
                args += ["--ro-bind", str(path), str(path)]
                covered.append(path)
        else:  # what the command names: without its hidden entries, rebuilt where it holds one
            args += _show(path, hidden)
    if spec.network:
        for resolver in _RESOLVER_PATHS:  # name resolution, when /etc/resolv.conf points into /run
            if Path(resolver).exists():
                args += ["--ro-bind", resolver, resolver]
    else:
        args.append("--unshare-net")
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    # A hidden entry inside a folder shown whole (the suite under /opt, the bundled demo suite in the
    # package's folder) is covered: a folder by an empty tmpfs, a file by /dev/null. Elsewhere it is
    # simply not there, and not named in /proc/self/mountinfo either.
    for entry in _outermost(hidden):
        if _under(entry, covered):
            if entry.is_dir():
                args += ["--tmpfs", str(entry)]
            elif os.path.lexists(entry):
                args += ["--ro-bind", "/dev/null", str(entry)]
    for path in spec.readonly:
        args += ["--ro-bind", str(path), str(path)]
    for path in (spec.workspace, *spec.writable):
        args += ["--bind", str(path), str(path)]
    # the sandbox's own root (where the mount points were made) read-only, once they are all made
    # No --clearenv and no --setenv: bwrap hands its own environment, which the caller makes
    # exactly ``env``, to the command. A value in bwrap's argv (an API key given with --pass-env) is
    # readable by every user of the machine in /proc/PID/cmdline; an environment only by its own.
    args += ["--remount-ro", "/", "--chdir", str(spec.workspace)]
    return [*args, "--", *inner]


_RESOLVER_PATHS = ("/run/systemd/resolve", "/run/resolvconf")
_PROC_READ_ONLY = tuple(
    arg
    for path in ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
    for arg in ("--ro-bind-try", path, path)
)
"""The kernel-wide knobs of the fresh /proc, read-only: a sandbox whose root maps to the host's root
(a harness run as root) may write most of /proc/sys by file mode alone, without a capability
(kernel.core_pattern names a program the kernel then starts as root on the host)."""
_BUNDLED_SUITE = Path(__file__).resolve().parents[1] / "demo" / "suite"
"""The demo suite ships inside the package, which every sandbox shows (to run trialbook's Python):
hidden in every run, since a run of a copy of it (``trialbook demo``) would otherwise show its
oracles at their source."""
_OWN_MOUNTS = (Path("/proc"), Path("/dev"))
"""The sandbox's own /proc and /dev: a command naming a path there never gets the host's."""
_FRESH = (Path("/tmp"), Path("/var/tmp"), Path("/run"), Path("/dev/shm"), Path("/var"))
"""Folders the sandbox replaces or leaves out whose host copy holds what others use (other runs'
scratch folders, sockets): a file named there is shown alone, never the folder."""
_SYSTEM_FOLDERS = tuple(
    Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
                      "/nix", "/sys")
)  # fmt: skip
"""The host folders every sandbox sees, read-only: programs, libraries, configuration. The rest of
the host (home folders, /root, /var, /srv, /mnt, project folders) is not there at all, so neither its
files nor a unix socket in it can be reached (a read-only mount does not stop ``connect``)."""


@cache
def _system_root() -> tuple[str, ...]:
    """bwrap arguments that show the system folders of this host (a merged-/usr link stays a
    link)."""
    args: list[str] = []
    for folder in _SYSTEM_FOLDERS:
        if folder.is_symlink():
            args += ["--symlink", os.readlink(folder), str(folder)]
        elif folder.is_dir():
            args += ["--ro-bind", str(folder), str(folder)]
    return tuple(args)


def _under(path: Path, folders: Sequence[Path]) -> bool:
    return any(path.is_relative_to(f) for f in folders)


_MAX_ENTRIES = 2000
"""A shown folder with hidden entries is rebuilt entry by entry; past this many entries the folder
is not shown (the pre-flight says so and what to do)."""


def _show(path: Path, hidden: Sequence[Path]) -> list[str]:
    """bwrap arguments that show ``path`` read-only without any hidden entry.

    A folder that holds a hidden entry (the ledger beside the agent's script, the suite, the
    transcripts) becomes an empty tmpfs with each of its other entries bound back read-only, so
    exactly the hidden files and folders are missing, not the whole folder; a hidden entry made
    later (a journal) is not there either. A hidden path, or one inside one, is not shown at all.
    """
    if _under(path, hidden):
        return []
    inside = [h for h in hidden if h != path and h.is_relative_to(path)]
    if not inside:
        return ["--ro-bind", str(path), str(path)]
    if path.is_symlink() or not path.is_dir():
        return []
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return []
    if len(entries) > _MAX_ENTRIES:
        return []
    args = ["--tmpfs", str(path)]
    for entry in entries:
        child = path / entry.name
        if entry.is_symlink():
            args += ["--symlink", os.readlink(child), str(child)]
        else:
            args += _show(child, inside)
    args += ["--remount-ro", str(path)]
    return args


@cache
def _python_paths() -> tuple[Path, ...]:
    """Folders of the Python running trialbook as a sandboxed command starts it: its prefixes and
    the import path it gets with a clean environment (site-packages, an editable source tree). Not
    this process's own import path, which may hold the folder it was started from."""
    import sys

    found: list[Path] = []
    for entry in (sys.prefix, sys.base_prefix, *_clean_import_path()):
        if not entry:
            continue
        path = Path(entry).resolve()
        if path.is_dir():
            found.append(path)
    return tuple(_outermost(found, keep_root=True))


def _clean_import_path() -> list[str]:
    """``sys.path`` of this Python started with an empty environment from ``/``."""
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; print('\\0'.join(sys.path))"],
            capture_output=True,
            env={},
            cwd="/",
            timeout=60,
            check=True,
        )
        return done.stdout.decode().rstrip("\n").split("\0")
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return sys.path[1:]  # sys.path[0] is the folder this process was started from


def _named_paths(command: str, search_path: str) -> list[Path]:
    """Paths a command needs from the host, beyond the system folders: for its program (found on
    ``search_path`` when it is a bare name) and every absolute path among its words (``--x=/p`` too),
    the folder it lives in, and the folder of its real file when it is a symbolic link. Never a path
    under the sandbox's own /proc and /dev; a file whose folder is /tmp, /var/tmp, /run, /dev/shm,
    /var or a top-level folder (``/work``) alone, without its folder. A relative path names a file in
    the workspace, which is there anyway."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []  # the shell reports the quoting error when the command runs
    candidates: list[str] = []
    for index, word in enumerate(words):
        if index == 0 and "/" not in word and (found := shutil.which(word, path=search_path)):
            candidates.append(found)
        candidates += [part for part in word.split("=") if part.startswith("/")]
    folders: list[Path] = []
    for candidate in candidates:
        path = Path(os.path.normpath(candidate))
        try:
            if not path.exists():
                continue
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        for shown in {path, real}:
            if _under(shown, _OWN_MOUNTS):
                continue
            folder = shown if shown.is_dir() else shown.parent
            if folder in _FRESH or len(folder.parts) <= 2:
                # /tmp/agent.sh or /work/agent.sh: the file alone, not all of /tmp or /work
                if not shown.is_dir():
                    folders.append(shown)
                continue
            folders.append(folder)
    return folders


def _outermost(paths: Sequence[Path], keep_root: bool = False) -> list[Path]:
    """Drop folders inside other folders of the list (one tmpfs covers both); keep order stable."""
    resolved = sorted({p.resolve() for p in paths}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in resolved:
        if not any(p.is_relative_to(k) for k in kept) and (keep_root or p != Path("/")):
            kept.append(p)
    return kept
