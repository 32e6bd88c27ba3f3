"""A Harbor dataset (the task format of Terminal-Bench 2.0) as a trialbook suite.

A Harbor task is a folder: ``instruction.md`` (the prompt), ``task.toml`` (timeouts, resources,
``[environment]``), ``environment/`` (a ``Dockerfile``, or ``docker_image`` in task.toml),
``tests/test.sh`` (the verifier, which Harbor copies to /tests and runs after the agent, and which
writes /logs/verifier/reward.txt or reward.json) and ``solution/solve.sh`` (the oracle agent's
script). :func:`import_harbor` writes each as a trialbook task of the container tier: the prompt
from instruction.md, the image built from environment/ (or named), the workspace bound at the
image's working directory and starting as the image's files there, tests/ as the oracle bound at
/tests, ``bash /tests/test.sh`` as the grader and the reward file as the verdict
(``verdict = "harbor-reward"``, read as Harbor reads it), graded after a timeout as Harbor
grades it (``grade_after_timeout`` in suite.toml). The solutions go beside the suite, never
in it (the suite is hidden from agents): ``SUITE.solutions/run.sh`` runs a task's ``solve.sh``
and is the oracle agent (docs/suites.md, "Harbor datasets").

What trialbook cannot honour is refused with a line naming the task and the key (nothing is
written): multi-step tasks, GPUs and TPUs, MCP servers, skills, health checks, a separate verifier
environment, artifacts, network allow-lists, per-phase users and environment variables, a disk
quota (``storage_mb``), and an environment that is a docker-compose file.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError

__all__ = ["HarborImport", "import_harbor"]

DEFAULT_TIMEOUT_S = 600.0
"""Harbor's verifier default; the agent's too where a task sets none."""
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_IGNORED = {"schema_version", "task", "metadata", "source"}
"""Informational keys of a Harbor task.toml: they change nothing a run does."""
_TOP = {"agent", "verifier", "environment", "solution", "steps", "artifacts",
        "multi_step_reward_strategy"} | _IGNORED  # fmt: skip
_AGENT = {"timeout_sec"}
_VERIFIER = {"timeout_sec"}
_ENVIRONMENT = {"build_timeout_sec", "docker_image", "os", "cpus", "memory_mb", "workdir",
                "allow_internet", "network_mode", "gpus", "env"}  # fmt: skip
"""What is mapped (``gpus`` and ``env`` only when empty or 0)."""


@dataclass(frozen=True)
class HarborImport:
    """What :func:`import_harbor` wrote."""

    suite: Path
    solutions: Path
    """``SUITE.solutions``: per task its ``solve.sh`` folder, and ``run.sh``, the oracle agent."""
    tasks: tuple[str, ...]
    notes: tuple[str, ...]
    """How defaults were filled (a task without an agent timeout, say)."""


def _refuse(task: str, key: str, why: str) -> ArgumentError:
    return ArgumentError(f"harbor task {task}: {key}: {why}", argument="dataset")


def _table(task: str, data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _refuse(task, key, "expected a table")
    return value


def _unknown(task: str, where: str, table: Mapping[str, Any], allowed: set[str]) -> None:
    for key, value in table.items():
        if key not in allowed and value not in (None, [], {}, "", 0, False):
            raise _refuse(task, f"{where}{key}", "trialbook cannot honour it; remove it to import")


def _seconds(task: str, key: str, value: object, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _refuse(task, key, f"expected a positive number of seconds, got {value!r}")
    return float(value)


def _dockerfile_workdir(dockerfile: Path) -> str | None:
    """The last WORKDIR of a Dockerfile (the image's working directory), None when it sets none."""
    workdir = None
    for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0].upper() == "WORKDIR":
            workdir = parts[1].strip().strip('"')
    return workdir


def _task_toml(src: Path, task: str, data: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The trialbook task.toml lines of a Harbor task, and the notes on defaults it took."""
    _unknown(task, "", data, _TOP)
    for key in ("steps", "artifacts", "multi_step_reward_strategy"):
        if data.get(key):
            raise _refuse(task, key, "trialbook cannot honour it; remove it to import")
    agent = _table(task, data, "agent")
    verifier = _table(task, data, "verifier")
    env = _table(task, data, "environment")
    solution = _table(task, data, "solution")
    _unknown(task, "agent.", agent, _AGENT)
    _unknown(task, "verifier.", verifier, _VERIFIER)
    _unknown(task, "environment.", env, _ENVIRONMENT)
    _unknown(task, "solution.", solution, set())
    if env.get("gpus") or env.get("env"):
        key = "gpus" if env.get("gpus") else "env"
        raise _refuse(task, f"environment.{key}", "trialbook cannot honour it; remove it to import")
    if env.get("os", "linux") != "linux":
        raise _refuse(task, "environment.os", f"only linux tasks run here, got {env['os']!r}")
    notes: list[str] = []
    lines = ['prompt_file = "instruction.md"', 'oracle_dir = "/tests"',
             'verdict = "harbor-reward"', 'grader = "bash /tests/test.sh"']  # fmt: skip
    dockerfile = src / "environment" / "Dockerfile"
    workdir = env.get("workdir")
    if dockerfile.is_file():
        lines.append('dockerfile = "environment/Dockerfile"')
        workdir = workdir or _dockerfile_workdir(dockerfile)
    elif isinstance(env.get("docker_image"), str):
        lines.append(f"image = {json.dumps(env['docker_image'])}")
    elif (src / "environment" / "docker-compose.yaml").is_file():
        raise _refuse(task, "environment/docker-compose.yaml", "multi-container environments "
                      "are not supported: give a Dockerfile")  # fmt: skip
    else:
        raise _refuse(task, "environment", "no environment/Dockerfile and no docker_image")
    if not isinstance(workdir, str) or not workdir.startswith("/"):
        raise _refuse(task, "environment.workdir", "no working directory (WORKDIR in the "
                      "Dockerfile, or workdir in task.toml): the workspace's place is unknown")  # fmt: skip
    lines.append(f"workdir = {json.dumps(workdir)}")
    if agent.get("timeout_sec") is None:
        notes.append(f"{task}: no agent timeout: {DEFAULT_TIMEOUT_S:g} s")
    timeout = _seconds(task, "agent.timeout_sec", agent.get("timeout_sec"), DEFAULT_TIMEOUT_S)
    grader = _seconds(task, "verifier.timeout_sec", verifier.get("timeout_sec"), DEFAULT_TIMEOUT_S)
    lines += [f"timeout_s = {timeout!r}", f"grader_timeout_s = {grader!r}"]
    if env.get("cpus") is not None:
        lines.append(f"cpus = {float(env['cpus'])!r}")
    if env.get("memory_mb") is not None:
        lines.append(f"memory_mb = {int(env['memory_mb'])}")
    # Harbor's network mode is public unless the task says otherwise; an allow-list cannot be had
    mode = env.get("network_mode", "public")
    if mode not in ("public", "no-network"):
        raise _refuse(task, "environment.network_mode", f"{mode!r}: trialbook gives a task the "
                      "whole network or none")  # fmt: skip
    closed = env.get("allow_internet") is False or mode == "no-network"
    lines.append(f"network = {'false' if closed else 'true'}")
    return lines, notes


def _task_dirs(dataset: Path) -> list[Path]:
    if (dataset / "task.toml").is_file():
        return [dataset]
    found = sorted(p for p in dataset.iterdir() if (p / "task.toml").is_file())
    if not found:
        raise ArgumentError(
            f"{dataset}: no Harbor task (a folder with task.toml and instruction.md)",
            argument="dataset",
        )
    return found


def import_harbor(dataset: Path, out: Path, *, k: int = 1) -> HarborImport:
    """Write the Harbor dataset (or task) folder ``dataset`` as a suite at ``out`` (which must not
    exist) and its solutions at ``out.solutions``. Every task is checked before anything is
    written; :class:`ArgumentError` names the task and the key of the first that cannot be."""
    if k < 1:
        raise ArgumentError(f"k must be >= 1, got {k}", argument="k")
    if not dataset.is_dir():
        raise ArgumentError(f"{dataset}: not a folder", argument="dataset")
    solutions = out.with_name(out.name + ".solutions")
    for path in (out, solutions):
        if path.exists():
            raise ArgumentError(f"{path} exists: choose a new --out", argument="out")
    planned: list[tuple[Path, str, list[str]]] = []
    notes: list[str] = []
    for src in _task_dirs(dataset):
        task = src.name
        if not _ID.fullmatch(task):
            raise _refuse(task, "name", "a task id is letters, digits, '.', '_' or '-'")
        try:
            data = tomllib.loads((src / "task.toml").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise _refuse(task, "task.toml", f"not readable TOML ({exc})") from None
        if not (src / "instruction.md").is_file():
            raise _refuse(task, "instruction.md", "missing (the prompt)")
        if not (src / "tests" / "test.sh").is_file():
            raise _refuse(task, "tests/test.sh", "missing (the verifier)")
        lines, more = _task_toml(src, task, data)
        planned.append((src, task, lines))
        notes += more
    longest = max(float(line.split("=")[1]) for *_, ls in planned for line in ls
                  if line.startswith("timeout_s"))  # fmt: skip
    tasks_dir = out / "tasks"
    tasks_dir.mkdir(parents=True)
    (out / "suite.toml").write_text(
        f"name = {json.dumps(dataset.resolve().name)}\nk = {k}\ntimeout_s = {longest!r}\n"
        # Harbor runs the verifier after an agent timeout and keeps its reward (the trial's
        # exception is AgentTimeoutError, its reward counts in Harbor's mean): so does trialbook
        "grade_after_timeout = true\n"
        f"description = {json.dumps(f'imported from the Harbor dataset {dataset.resolve()}')}\n",
        encoding="utf-8",
    )
    solutions.mkdir()
    for src, task, lines in planned:
        dest = tasks_dir / task
        (dest / "fixture").mkdir(parents=True)  # the workspace starts as the image's files
        shutil.copy(src / "instruction.md", dest / "instruction.md")
        shutil.copytree(src / "tests", dest / "oracle", symlinks=False)
        if (src / "environment").is_dir():
            shutil.copytree(src / "environment", dest / "environment", symlinks=False)
        (dest / "task.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if (src / "solution").is_dir():
            shutil.copytree(src / "solution", solutions / task, symlinks=False)
    run = solutions / "run.sh"
    run.write_text(
        "#!/bin/sh\n# the oracle agent: runs this task's solution/solve.sh in the workspace\n"
        'here=$(dirname "$0")\n'
        'if [ ! -f "$here/$TRIALBOOK_TASK_ID/solve.sh" ]; then\n'
        '  echo "no solution for $TRIALBOOK_TASK_ID" >&2; exit 1; fi\n'
        'exec bash "$here/$TRIALBOOK_TASK_ID/solve.sh"\n',
        encoding="utf-8",
    )
    run.chmod(0o755)
    return HarborImport(out, solutions, tuple(t for _, t, _ in planned), tuple(notes))
