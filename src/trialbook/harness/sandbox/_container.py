"""The container tier's engine: podman or docker through their command line.

Each attempt's commands run in a fresh container of the task's image: no network unless the task
opts in (``--network=none``), every capability dropped, ``no-new-privileges``, the image read-only
except the workspace (bound in at the task's working directory) and a fresh /tmp, limits on
processes, memory and CPU, every value of the environment passed by name only (``--env NAME``: the
engine reads the value from its own environment, so no value is in any argv), and every container
labelled with the harness that started it (its stamp) and the run, so that what a killed harness
left is found and removed by label.

What this machine's engine needs is found by trying, not assumed: :func:`engine_for` runs a
trivial container and, where it fails, tries again with what is known to fix it (runc cannot set
rlimits above the harness's own: ``--ulimit`` at the harness's limits; a default runtime that
cannot run here: ``--runtime runc``), and says in one line what fails and what to install or set
when nothing works. An image a task names by a Dockerfile is built once and tagged with the digest
of its build context, so the same context is never built twice and a changed one is a new image.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.harness.sandbox._seccomp import seccomp_args

__all__ = [
    "ENGINES",
    "ENGINE_FAILED",
    "ContainerError",
    "ContainerSpec",
    "ContainerTarget",
    "Engine",
    "build_image",
    "clean_stale_containers",
    "container_name",
    "context_digest",
    "engine_for",
    "find_engine",
    "missing_folder",
    "network_problem",
    "remove_containers",
    "run_argv",
    "stale_containers",
]

ENGINES = ("podman", "docker")
LABEL_HARNESS = "trialbook.harness"
"""Label: the stamp of the harness that started the container (``_stamp.stamp``)."""
LABEL_RUN = "trialbook.run"
"""Label: the run id."""
_PROBE_TIMEOUT_S = 120
ENGINE_FAILED = 125
"""The exit status of ``podman run`` / ``docker run`` when the engine itself failed (the image,
the runtime, a mount), before the command ran: a harness error, never the command's."""


class ContainerError(RuntimeError):
    """The engine could not do what the harness asked (build, pull, start): a harness error, never
    the agent's failure. The message is the engine's own last line."""


@dataclass(frozen=True)
class Engine:
    """A container engine and the flags this machine needs for it to run a container."""

    name: str
    """``podman`` or ``docker``."""
    exe: str
    global_args: tuple[str, ...] = ()
    """Before the subcommand (``--runtime runc`` for podman)."""
    run_args: tuple[str, ...] = ()
    """After ``run`` (``--ulimit`` flags)."""

    def command(self, *args: str) -> list[str]:
        return [self.exe, *self.global_args, *args]


@dataclass(frozen=True)
class ContainerTarget:
    """Where an attempt's commands run in the container tier: the engine and the task's image."""

    engine: Engine
    image: str
    labels: Mapping[str, str] = field(default_factory=dict)
    """The harness's stamp and the run id (``LABEL_HARNESS``, ``LABEL_RUN``)."""
    workdir: str | None = None
    """Where the workspace is bound (None: at its host path); it starts as the image's files
    there (``seed_workspace``)."""
    oracle_dir: str | None = None
    """Where the grader's oracle copy is bound (None: at its host path)."""
    cpus: float | None = None
    memory_mb: int | None = None
    reward: bool = False
    """The verdict is the reward file the verifier writes in /logs/verifier (attempt/_reward.py)."""
    built: bool = False
    """The image was built from the task's Dockerfile: its ``WORKDIR`` is made when a container of
    it first starts (podman's build leaves it unmade unless a later step writes there), so the
    copy out of the image starts its container first."""


def seed_workspace(target: ContainerTarget, workspace: Path, cache: Path | None = None) -> None:
    """Copy the image's files at ``target.workdir`` into the (empty) host ``workspace``: an
    attempt's workspace starts as the task's environment made it. OSError with the engine's last
    line when the image has no such folder or the copy fails (a harness error).

    ``cache``: a folder of the run's own (the attempts' scratch), where the image's files are
    copied out once per image and folder (a container created for it, ``cp`` out of it, removed:
    a fraction of a second) and each attempt's workspace copied from there, owners, modes and
    links as they were."""
    assert target.workdir is not None
    if cache is None:
        _copy_out(target, workspace)
        return
    key = hashlib.sha256(f"{target.image}\0{target.workdir}".encode()).hexdigest()[:24]
    kept = cache / f"seed-{key}"
    with _SEEDING_LOCK:
        lock = _SEEDING.setdefault(key, threading.Lock())
    with lock:  # one copy out per image, however many attempts start at once
        if not kept.is_dir():
            cache.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(prefix=f"seed-{key}.", dir=cache))
            try:
                _copy_out(target, partial)
                os.rename(partial, kept)
            except OSError:
                shutil.rmtree(partial, ignore_errors=True)
                if not kept.is_dir():  # not another process's copy that came first
                    raise
    copied = subprocess.run(
        ["cp", "-a", "--", f"{kept}/.", str(workspace)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if copied.returncode != 0:
        raise OSError(f"the image's files could not be copied into the workspace: "
                      f"{_tail(copied.stderr)}")  # fmt: skip


_SEEDING: dict[str, threading.Lock] = {}
_SEEDING_LOCK = threading.Lock()


def _copy_out(target: ContainerTarget, folder: Path) -> None:
    """The image's files at ``target.workdir``, copied into ``folder`` by the engine."""
    assert target.workdir is not None
    engine = target.engine
    created = subprocess.run(
        engine.command("create", "--label", f"{LABEL_HARNESS}={target.labels.get(LABEL_HARNESS, '')}",
                       "--network=none", *engine.run_args, target.image, "true"),
        capture_output=True, text=True, check=False, timeout=_PROBE_TIMEOUT_S,
    )  # fmt: skip
    if created.returncode != 0:
        raise OSError(f"{engine.name} could not create a container of {target.image}: "
                      f"{_tail(created.stderr)}")  # fmt: skip
    cid = created.stdout.strip()
    try:
        if target.built:  # its WORKDIR is made when the container first starts
            started = subprocess.run(
                engine.command("start", "--attach", cid),
                capture_output=True, text=True, check=False, timeout=_PROBE_TIMEOUT_S,
            )  # fmt: skip
            if started.returncode != 0:
                raise OSError(f"{engine.name} could not start a container of {target.image}: "
                              f"{_tail(started.stderr)}")  # fmt: skip
        copied = subprocess.run(
            engine.command("cp", f"{cid}:{target.workdir.rstrip('/')}/.", str(folder)),
            capture_output=True, text=True, check=False, timeout=_PROBE_TIMEOUT_S,
        )  # fmt: skip
        if copied.returncode != 0:
            raise OSError(f"{engine.name} could not copy {target.workdir} of {target.image}: "
                          f"{_tail(copied.stderr)}")  # fmt: skip
    finally:
        remove_containers(engine, [cid])


def _tail(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def container_name(token: str) -> str:
    """The container of the command whose sandbox token is ``token``: a name of the token's digest
    (a token holds characters a name may not; the agent never sees the name)."""
    return "trialbook-" + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class ContainerSpec:
    """One command in one container."""

    name: str
    """The container's name (unique per attempt and step)."""
    image: str
    workspace: Path
    """The host folder bound read-write at ``workdir``."""
    workdir: str = "/workspace"
    readonly: Mapping[str, Path] = field(default_factory=dict)
    """Container path -> host folder bound read-only (the grader's oracle copy, the agent's own
    folder)."""
    writable: Mapping[str, Path] = field(default_factory=dict)
    """Container path -> host folder bound read-write (the attempt's io folder)."""
    env_names: tuple[str, ...] = ()
    """Variables passed by name: their values come from the engine's environment."""
    network: bool = False
    network_ns: str | None = None
    """A network namespace to join (``ns:PATH``, podman) instead of ``--network=none``: the model
    gateway's forwarder listening in it (``_forward.Door``) is all the container can reach."""
    memory_mb: int | None = None
    cpus: float | None = None
    pids: int | None = 4096
    tmp_mb: int = 1024
    labels: Mapping[str, str] = field(default_factory=dict)
    preserve_fds: int = 0
    """Descriptors 3.. of the engine's process passed into the container (podman only)."""


def find_engine(
    requested: str | None = None, *, argument: str = "container_engine"
) -> tuple[str, str]:
    """(name, executable) of the engine to use: ``requested`` (podman or docker), else the first
    installed. Raises :class:`ArgumentError` naming ``argument``."""
    if requested is not None and requested not in ENGINES:
        raise ArgumentError(
            f"container engine must be podman or docker, got {requested!r}", argument=argument
        )
    for name in (requested,) if requested else ENGINES:
        exe = shutil.which(name)
        if exe is not None:
            return name, exe
    wanted = requested or "podman or docker"
    raise ArgumentError(
        f"the container tier needs {wanted} installed (e.g. apt-get install podman runc)",
        argument=argument,
    )


def _ulimit_args(open_files: int = 1024, processes: int = 4096) -> tuple[str, ...]:
    """``--ulimit`` flags at the attempt's own limits (the defaults of ``Limits``), never above the
    harness's hard limits: runc, unprivileged in this user namespace, may not set a container's
    rlimits above those of the engine's monitor, and the engine's defaults are higher."""
    out: list[str] = []
    for name, which, want in (
        ("nofile", resource.RLIMIT_NOFILE, open_files),
        ("nproc", resource.RLIMIT_NPROC, processes),
    ):
        _, hard = resource.getrlimit(which)
        value = want if hard == resource.RLIM_INFINITY else min(want, hard)
        out += ["--ulimit", f"{name}={value}:{value}"]
    return tuple(out)


def _try(engine: Engine, image: str, network: str = "none") -> str | None:
    """The engine's last line of error running a trivial container (None: it ran)."""
    argv = engine.command("run", "--rm", f"--network={network}", *engine.run_args, image, "true")
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if done.returncode == 0 else _tail(done.stderr or f"exit status {done.returncode}")


@cache
def engine_for(requested: str | None, image: str) -> Engine:
    """The engine, with the flags this machine needs, that runs a trivial container of ``image``.

    Raises :class:`ArgumentError` (``container_engine``) in one line when none works: what failed
    and what to install or set. Tried once per process and image.
    """
    name, exe = find_engine(requested)
    seccomp = seccomp_args(name, exe, _PROBE_TIMEOUT_S)
    tries = [
        Engine(name, exe, run_args=seccomp),
        Engine(name, exe, run_args=(*seccomp, *_ulimit_args())),
    ]
    if name == "podman" and shutil.which("runc") is not None:
        tries.append(Engine(name, exe, ("--runtime", "runc"), (*seccomp, *_ulimit_args())))
    first: str | None = None
    for engine in tries:
        problem = _try(engine, image)
        if problem is None:
            return engine
        first = first or problem
        if "no such image" in problem.lower() or "image not known" in problem.lower():
            raise ArgumentError(
                f"{name} has no image {image!r} and cannot get it: {problem}",
                argument="image",
            )
    advice = "install runc (apt-get install runc)" if name == "podman" else "start the daemon"
    raise ArgumentError(
        f"{name} cannot run a container of {image!r} here: {first} ({advice})",
        argument="container_engine",
    )


@cache
def missing_folder(engine: Engine, image: str, folder: str) -> str | None:
    """Why ``folder`` is not a folder of ``image`` (None: it is one). A trivial container."""
    argv = engine.command(
        "run", "--rm", "--network=none", *engine.run_args, image, "test", "-d", folder
    )
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0:
        return None
    return _tail(done.stderr) if done.stderr.strip() else "not a folder there"


@cache
def network_problem(engine: Engine, image: str) -> str | None:
    """Why a container of ``image`` cannot have a network here (None: it can)."""
    return _try(engine, image, network="bridge")


def context_digest(context: Path, dockerfile: Path) -> str:
    """SHA-256 over the build context's files (relative path, mode bit for execute, content) and
    the Dockerfile: the same context always gives the same tag."""
    h = hashlib.sha256(b"trialbook.container-context/1\0")
    files = sorted(p for p in context.rglob("*") if p.is_file() or p.is_symlink())
    for path in [*files, dockerfile]:
        rel = os.path.relpath(path, context).encode("utf-8", "surrogateescape")
        if path.is_symlink():
            body = b"link:" + os.readlink(path).encode("utf-8", "surrogateescape")
        else:
            body = path.read_bytes()
        executable = b"x" if os.access(path, os.X_OK) else b"-"
        h.update(len(rel).to_bytes(8, "big") + rel + executable)
        h.update(len(body).to_bytes(8, "big") + body)
    return h.hexdigest()


def build_image(engine: Engine, dockerfile: Path, context: Path) -> str:
    """The tag of ``dockerfile`` built in ``context``, built only if no image of that context's
    digest exists. Raises :class:`ContainerError` with the engine's message when the build fails."""
    tag = f"localhost/trialbook-env:{context_digest(context, dockerfile)[:32]}"
    exists = subprocess.run(
        engine.command("image", "exists" if engine.name == "podman" else "inspect", tag),
        capture_output=True,
        check=False,
    )
    if exists.returncode == 0:
        return tag
    done = subprocess.run(
        engine.command("build", "--network=none", "-t", tag, "-f", str(dockerfile), str(context)),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line]
        raise ContainerError(
            f"{engine.name} could not build {dockerfile}: {lines[-1] if lines else done.returncode}"
        )
    return tag


def _network_flag(spec: ContainerSpec) -> str:
    if spec.network:
        return "--network=bridge"
    return f"--network=ns:{spec.network_ns}" if spec.network_ns else "--network=none"


def run_argv(engine: Engine, spec: ContainerSpec, argv: Sequence[str]) -> list[str]:
    """The engine's command line that runs ``argv`` in a fresh container of ``spec``. No value of
    the environment is in it: ``--env NAME`` takes the value from the engine's own environment,
    which the caller makes exactly the command's."""
    args = engine.command(
        "run",
        "--rm",
        "--name", spec.name,
        _network_flag(spec),
        "--cap-drop=all",
        "--security-opt=no-new-privileges",
        "--read-only",
        "--tmpfs", f"/tmp:rw,exec,size={spec.tmp_mb}m",
        "--tmpfs", "/var/tmp:rw,size=64m",
        "--tmpfs", "/run:rw,size=16m",
        *engine.run_args,
    )  # fmt: skip
    if spec.pids is not None:
        args += ["--pids-limit", str(spec.pids)]
    if spec.memory_mb is not None:
        args += ["--memory", f"{spec.memory_mb}m", "--memory-swap", f"{spec.memory_mb}m"]
    if spec.cpus is not None:
        args += ["--cpus", f"{spec.cpus:g}"]
    for key, value in sorted(spec.labels.items()):
        args += ["--label", f"{key}={value}"]
    args += ["--volume", f"{spec.workspace}:{spec.workdir}:rw", "--workdir", spec.workdir]
    for inside, host in sorted(spec.writable.items()):
        args += ["--volume", f"{host}:{inside}:rw"]
    for inside, host in sorted(spec.readonly.items()):
        args += ["--volume", f"{host}:{inside}:ro"]
    for name in spec.env_names:
        args += ["--env", name]
    if spec.preserve_fds:
        args += ["--preserve-fds", str(spec.preserve_fds)]
    return [*args, spec.image, *argv]


def _listed(engine: Engine, *filters: str) -> list[dict[str, object]]:
    argv = engine.command("ps", "--all", "--format", "json")
    for f in filters:
        argv += ["--filter", f]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        return []
    text = done.stdout.strip()
    if not text:
        return []
    try:  # podman: one JSON array; docker: one object per line
        parsed = json.loads(text)
        rows = parsed if isinstance(parsed, list) else [parsed]
    except json.JSONDecodeError:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [r for r in rows if isinstance(r, dict)]


def _labels(row: Mapping[str, object]) -> dict[str, str]:
    labels = row.get("Labels")
    if isinstance(labels, dict):
        return {str(k): str(v) for k, v in labels.items()}
    if isinstance(labels, str):  # docker: "a=b,c=d"
        return dict(part.split("=", 1) for part in labels.split(",") if "=" in part)
    return {}


def _name(row: Mapping[str, object]) -> str:
    names = row.get("Names")
    if isinstance(names, list) and names:
        return str(names[0])
    return str(names or row.get("Id") or row.get("ID") or "")


def stale_containers(engine: Engine, is_dead: Callable[[str], bool]) -> list[str]:
    """Names of the containers labelled by a harness that is gone (``is_dead(stamp)``)."""
    out = []
    for row in _listed(engine, f"label={LABEL_HARNESS}"):
        stamp = _labels(row).get(LABEL_HARNESS, "")
        if is_dead(stamp):
            out.append(_name(row))
    return out


def remove_containers(engine: Engine, names: Iterable[str]) -> None:
    """Kill and remove these containers (those already gone are no error)."""
    names = [n for n in names if n]
    if names:
        # podman: a name already gone would stop it before the others (--ignore), and it would
        # wait 10 s for SIGTERM first (--time 0); docker kills at once and goes on past errors
        flags = ["--force", "--ignore", "--time", "0"] if engine.name == "podman" else ["--force"]
        subprocess.run(
            engine.command("rm", *flags, *names),
            capture_output=True,
            check=False,
            timeout=120,
        )


def clean_stale_containers(is_dead: Callable[[str], bool]) -> int:
    """Kill and remove, with every engine installed here, the containers whose harness is gone;
    returns how many there were."""
    removed = 0
    for name in ENGINES:
        exe = shutil.which(name)
        if exe is None:
            continue
        engine = Engine(name, exe)
        stale = stale_containers(engine, is_dead)
        remove_containers(engine, stale)
        removed += len(stale)
    return removed
