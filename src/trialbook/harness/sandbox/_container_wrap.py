"""The container tier's command line for one sandboxed command (the agent's or the grader's).

Every host path the command is told of (the workspace, the io folder, the prompt, the oracle copy,
the verdict channel) is bound at the same path, so the contract's variables hold inside as outside;
of the rest of the host only what the command names by absolute path (``agent_files``). The start
check and the word that the command is about to run travel on the status pipe, which podman passes
into the container (docs/harness.md, "The container tier").
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from trialbook.harness.sandbox._container import ContainerSpec, container_name, run_argv
from trialbook.harness.sandbox._sandbox import (
    _SYSTEM_FOLDERS,
    STATUS_FD,
    Limits,
    SandboxSpec,
    _named_paths,
    _outermost,
    _script,
    _under,
)

__all__ = ["CONTAINER_STARTED", "agent_files", "container_argv", "inside_env"]


def agent_files(command: str, env: Mapping[str, str], hidden: Sequence[Path]) -> list[Path]:
    """What of the host a container shows the command, read-only at the same path: the folders
    of the programs and files it names by absolute path (the agent's own folder), outside the
    host's system folders (the image has its own); a folder that holds a hidden entry (the suite,
    the ledger) only by the files the command names in it."""
    hidden = [h.resolve() for h in hidden]
    out: list[Path] = []
    for path in _outermost(_named_paths(command, env.get("PATH", ""))):
        if _under(path, _SYSTEM_FOLDERS) or _under(path, hidden):
            continue
        if any(h.is_relative_to(path) for h in hidden):
            out += [
                Path(word)
                for word in _absolute_words(command)
                if Path(word).parent == path and Path(word).is_file()
            ]
            continue
        out.append(path)
    return sorted(set(out))


def _absolute_words(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    return [os.path.normpath(part) for word in words for part in word.split("=") if part[:1] == "/"]


CONTAINER_STARTED = "trialbook:started"
"""What the container's shell writes on the status pipe once the command is about to run (podman,
which passes the pipe in): a container that never wrote it never ran the command, so its exit is
the engine's, not the command's."""


def container_argv(
    command: str,
    spec: SandboxSpec,
    env: Mapping[str, str],
    limits: Limits,
    check: str | None,
    network_ns: str | None = None,
) -> list[str]:
    """The engine's command line for ``command`` in a fresh container of the task's image. Every
    host path the command is told of (the workspace, the io folder, the prompt, the oracle copy,
    the verdict channel) is bound at the same path, so the contract's variables hold inside too;
    the values of ``env`` go in by name only (``--env NAME``).

    ``check`` not None (podman): the caller hands the status pipe in as stdin; the outer shell
    moves it to fd 3, which ``--preserve-fds 1`` passes into the container, where the shell moves
    it to ``STATUS_FD``, runs the start check, writes ``CONTAINER_STARTED`` and closes it before
    the command runs. ``network_ns``: the network namespace of the model gateway's forwarder,
    which the container joins instead of having none."""
    target = spec.container
    if target is None:
        raise ValueError("the container tier needs the task's image (SandboxSpec.container)")
    token = env.get("TRIALBOOK_SANDBOX_TOKEN", "")
    at = spec.binds
    shown = (*agent_files(command, env, spec.hidden), *spec.readonly)
    readonly = {at.get(p, str(p)): p for p in shown}
    writable = {at.get(p, str(p)): p for p in spec.writable}
    outer: list[str] = []
    script = _script(command, limits)
    if check is not None:
        started = f"printf '%s\\n' {CONTAINER_STARTED} >&{STATUS_FD}\n"
        script = f"exec {STATUS_FD}>&3 3>&-\n" + _script(command, limits, check + started)
        outer = ["/bin/sh", "-c", 'exec 3<&0 </dev/null; exec "$@"', "sh"]
    argv = run_argv(
        target.engine,
        ContainerSpec(
            name=container_name(token),
            image=target.image,
            workspace=spec.workspace,
            workdir=at.get(spec.workspace, str(spec.workspace)),
            readonly=readonly,
            writable=writable,
            env_names=tuple(sorted(env)),
            network=spec.network,
            network_ns=network_ns,
            memory_mb=target.memory_mb or limits.memory_mb,
            cpus=target.cpus,
            pids=limits.processes,
            labels=target.labels,
            preserve_fds=0 if check is None else 1,
        ),
        ["/bin/sh", "-c", script],
    )
    return [*outer, *argv]


def inside_env(env: Mapping[str, str], spec: SandboxSpec) -> dict[str, str]:
    """``env`` as the command sees it in its container: a value that is a host path bound
    elsewhere (the oracle copy at the task's ``oracle_dir``) names where it is bound."""
    return {k: spec.binds.get(Path(v), v) if v.startswith("/") else v for k, v in env.items()}
