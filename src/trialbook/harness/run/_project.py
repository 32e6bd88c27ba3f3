"""A project file: ``trialbook.toml`` (or ``[tool.trialbook]`` in ``pyproject.toml``) keeps the
options of ``trialbook run`` for a project, so that ``trialbook run`` alone does the right thing.

Paths in it are relative to the file's folder: ``suite`` and ``ledger``, and the words of ``agent``
that start with ``./`` or ``../`` (the agent runs in a fresh workspace, so they are made absolute).
Options given on the command line take precedence.
"""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.suite import ModelTable, read_model_table

__all__ = ["PROJECT_FILE", "PROJECT_KEYS", "Project", "load_project"]

PROJECT_FILE = "trialbook.toml"
PROJECT_KEYS = (
    "suite",
    "agent",
    "ledger",
    "system",
    "sandbox",
    "jobs",
    "pass_env",
    "executor",
    "ray_address",
    "model",
)


@dataclass(frozen=True)
class Project:
    """The run options a project file sets (None: not set)."""

    path: Path
    """The file read."""
    suite: Path | None = None
    agent: str | None = None
    ledger: Path | None = None
    system: str | None = None
    sandbox: str | None = None
    jobs: int | None = None
    pass_env: tuple[str, ...] = ()
    executor: str | None = None
    ray_address: str | None = None
    model: ModelTable | None = None
    """The ``[model]`` table: the run's model gateway (over the suite's own ``[model]``)."""


def _table(path: Path) -> dict[str, object] | None:
    """The options table of a project file, or None when a pyproject.toml has none."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ArgumentError(f"{path}: not a readable TOML file ({exc})") from None
    if path.name == PROJECT_FILE:
        return data
    tool = data.get("tool")
    table = tool.get("trialbook") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ArgumentError(f"{path}: [tool.trialbook] must be a table")
    return table


def _find(start: Path) -> tuple[Path, dict[str, object]] | None:
    for folder in (start, *start.parents):
        for name in (PROJECT_FILE, "pyproject.toml"):
            candidate = folder / name
            if candidate.is_file() and (table := _table(candidate)) is not None:
                return candidate, table
    return None


def _text(path: Path, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"{path}: {key} must be a non-empty string, got {value!r}")
    return value


def _agent(path: Path, value: str) -> str:
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise ArgumentError(f"{path}: agent is not a valid shell command ({exc})") from None
    base = path.parent
    return shlex.join(
        str((base / w).resolve()) if w.startswith(("./", "../")) else w for w in words
    )


def load_project(start: Path) -> Project | None:
    """The project file of ``start`` or the nearest folder above it, or None. Raises
    :class:`ArgumentError` naming the file and key for an unknown key or a value of the wrong
    type."""
    found = _find(start.resolve())
    if found is None:
        return None
    path, table = found
    unknown = sorted(set(table) - set(PROJECT_KEYS))
    if unknown:
        raise ArgumentError(
            f"{path}: unknown key {unknown[0]!r} (known: {', '.join(PROJECT_KEYS)})"
        )
    base = path.parent
    values: dict[str, object] = {}
    for key in ("suite", "ledger"):
        if key in table:
            values[key] = (base / _text(path, key, table[key])).resolve()
    if "agent" in table:
        values["agent"] = _agent(path, _text(path, "agent", table["agent"]))
    if "system" in table:
        values["system"] = _text(path, "system", table["system"])
    if "sandbox" in table:
        sandbox = _text(path, "sandbox", table["sandbox"])
        if sandbox not in ("auto", "bwrap", "process", "container"):
            raise ArgumentError(
                f"{path}: sandbox must be auto, bwrap, process or container, got {sandbox!r}"
            )
        values["sandbox"] = sandbox
    if "jobs" in table:
        jobs = table["jobs"]
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise ArgumentError(f"{path}: jobs must be a whole number >= 1, got {jobs!r}")
        values["jobs"] = jobs
    if "executor" in table:
        executor = _text(path, "executor", table["executor"])
        if executor not in ("local", "ray"):
            raise ArgumentError(f"{path}: executor must be local or ray, got {executor!r}")
        values["executor"] = executor
    if "ray_address" in table:
        values["ray_address"] = _text(path, "ray_address", table["ray_address"])
    if "pass_env" in table:
        names = table["pass_env"]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ArgumentError(f"{path}: pass_env must be a list of variable names")
        values["pass_env"] = tuple(names)
    if "model" in table:
        values["model"] = _model(path, table["model"])
    return Project(path=path, **values)  # type: ignore[arg-type]


def _model(path: Path, table: object) -> ModelTable:
    """The ``[model]`` table, read as suite.toml's is: the types checked here, the values by the
    gateway when it starts. The first problem is refused, as every key of the file is."""
    model, problems = read_model_table(path, table)
    if problems:
        raise ArgumentError(f"{path}: {problems[0]}")
    return model
