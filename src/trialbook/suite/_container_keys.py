"""The container tier's keys of suite.toml and task.toml: a task's environment (``image``,
``dockerfile``) and its container's layout and limits (``workdir``, ``oracle_dir``, ``cpus``,
``memory_mb``, ``verdict``); docs/suites.md."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trialbook.suite._checker import Checker

VERDICTS = ("grader", "harbor-reward")
"""How a task's verdict is read: from its grader (exit status, verdict line: the default), or
from the reward file its verifier writes in /logs/verifier, as Harbor reads it."""


@dataclass(frozen=True)
class ContainerSettings:
    """A container-tier task's layout and limits (``workdir``, ``oracle_dir``, ``cpus``,
    ``memory_mb``, ``verdict`` in task.toml)."""

    workdir: str | None = None
    """Where the workspace is bound in the image; it starts as the image's own files there."""
    oracle_dir: str | None = None
    """Where the grader finds the oracle copy (``TRIALBOOK_ORACLE_DIR`` says so too)."""
    cpus: float | None = None
    memory_mb: int | None = None
    verdict: str = "grader"
    """One of ``VERDICTS``."""

    def settings(self) -> dict[str, object]:
        """The set ones, for the task's hash."""
        return {k: v for k, v in vars(self).items() if v is not None and v != "grader"}


_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]*")
"""An image reference: registry/name:tag or @digest (no spaces, no option-looking dash)."""


def image_key(path: Path, data: Mapping[str, Any], check: Checker) -> str | None:
    """The ``image`` key of a suite.toml or task.toml."""
    image = check.text(path, data, "image")
    if image is not None and not _IMAGE.fullmatch(image):
        check.add(path, "image", f"not an image reference: {image!r}")
        return None
    return image


def dockerfile_key(path: Path, data: Mapping[str, Any], check: Checker, tdir: Path) -> Path | None:
    """The ``dockerfile`` key of a task.toml: a file inside the task folder (its build context is
    the Dockerfile's folder)."""
    name = check.text(path, data, "dockerfile")
    if name is None:
        return None
    file = (tdir / name).resolve()
    if not file.is_relative_to(tdir.resolve()) or not file.is_file():
        check.add(path, "dockerfile", f"no file {name!r} in {tdir}")
        return None
    context, root = file.parent, tdir.resolve()
    if context == root or context.is_relative_to(root / "oracle"):
        check.add(
            path,
            "dockerfile",
            "its folder is the image's build context, which must not hold the oracle: put it "
            "in a folder of its own (environment/Dockerfile)",
        )
        return None
    return tdir / name


CONTAINER_KEYS = {"workdir", "oracle_dir", "cpus", "memory_mb", "verdict"}
_CONTAINER_PATH = re.compile(r"/[A-Za-z0-9._/-]*")


def container_settings(
    path: Path, data: Mapping[str, Any], check: Checker, tdir: Path
) -> ContainerSettings | None:
    """The container-tier keys of a task.toml (None when it sets none)."""
    if not CONTAINER_KEYS & set(data):
        return None
    paths: dict[str, str | None] = {}
    for key in ("workdir", "oracle_dir"):
        value = check.text(path, data, key)
        if value is not None and (
            not _CONTAINER_PATH.fullmatch(value) or ".." in value.split("/") or value == "/"
        ):
            check.add(path, key, f"expected an absolute path in the image, got {value!r}")
            value = None
        paths[key] = value
    fixture = tdir / "fixture"
    if paths["workdir"] is not None and fixture.is_dir() and any(fixture.iterdir()):
        check.add(
            path, "workdir", "the workspace starts as the image's files there: leave fixture/ empty"
        )
    cpus = check.number(path, data, "cpus", low=0, open_low=True)
    memory = data.get("memory_mb")
    if memory is not None and (
        isinstance(memory, bool) or not isinstance(memory, int) or memory < 6
    ):
        check.add(path, "memory_mb", f"expected a whole number of MiB >= 6, got {memory!r}")
        memory = None
    verdict = data.get("verdict", "grader")
    if verdict not in VERDICTS:
        check.add(path, "verdict", f"expected one of {', '.join(VERDICTS)}, got {verdict!r}")
        verdict = "grader"
    return ContainerSettings(
        workdir=paths["workdir"],
        oracle_dir=paths["oracle_dir"],
        cpus=cpus,
        memory_mb=memory,
        verdict=str(verdict),
    )
