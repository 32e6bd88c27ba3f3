"""The images a suite's container environments rest on, by their content digest.

A task's image name (``image = "NAME"``) and the base images of its Dockerfile (``FROM``) are
references: the same name can be retagged to other contents. ``suite freeze`` records, for each
task, the image ID the local engine has under each reference (``podman image inspect``, or
docker's), and they enter the task's hash: ``dataset_id`` then changes when an environment does,
and a run of a suite whose image was retagged since the freeze is refused as a changed suite
(docs/suites.md, "Container environments").
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from trialbook.errors import SuiteError

__all__ = ["base_images", "image_ids"]

_ENGINES = ("podman", "docker")
_FROM = re.compile(r"^\s*FROM\s+(?P<rest>.+)$", re.IGNORECASE)
_INSPECT_TIMEOUT_S = 60.0


def base_images(dockerfile: Path) -> list[str]:
    """The images a Dockerfile builds ``FROM``, in order, without its own stages and ``scratch``.
    SuiteError for a ``FROM`` that names its image through a build argument (``$VAR``), which a
    freeze cannot resolve."""
    stages: set[str] = set()
    out: list[str] = []
    try:
        lines = dockerfile.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{dockerfile}: cannot be read ({exc})") from None
    for lineno, line in enumerate(lines, 1):
        match = _FROM.match(line)
        if match is None:
            continue
        words = [w for w in match["rest"].split() if not w.startswith("--")]
        if not words:
            continue
        ref = words[0]
        if len(words) >= 3 and words[1].lower() == "as":
            stages.add(words[2].lower())
        if "$" in ref:
            raise SuiteError(
                f"{dockerfile} line {lineno}: FROM {ref} names its image by a build argument, "
                "which a freeze cannot resolve to a digest: name the image"
            )
        if ref.lower() == "scratch" or ref.lower() in stages:
            continue
        out.append(ref)
    return list(dict.fromkeys(out))


def _engine() -> str | None:
    for name in _ENGINES:
        if (exe := shutil.which(name)) is not None:
            return exe
    return None


def image_ids(task_of: Mapping[str, str]) -> dict[str, str]:
    """Reference -> the image ID (``sha256:...``) the local engine has under it, for each
    reference of ``task_of`` (reference -> a task that needs it). SuiteError in one line, naming
    that task, when there is no engine or no such image."""
    wanted = sorted(task_of)
    if not wanted:
        return {}
    exe = _engine()
    if exe is None:
        first = wanted[0]
        raise SuiteError(
            f"task {task_of[first]}: its image {first} is recorded by its digest, and neither "
            "podman nor docker is installed here to read it"
        )
    try:
        done = subprocess.run(
            [exe, "image", "inspect", "--format", "{{.Id}}", *wanted],
            capture_output=True,
            text=True,
            timeout=_INSPECT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SuiteError(f"{Path(exe).name} image inspect failed: {exc}") from None
    ids = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode == 0 and len(ids) == len(wanted):
        return {ref: _digest(i) for ref, i in zip(wanted, ids, strict=True)}
    for ref in wanted:  # which one is missing: one at a time
        one = subprocess.run(
            [exe, "image", "inspect", "--format", "{{.Id}}", ref],
            capture_output=True,
            text=True,
            timeout=_INSPECT_TIMEOUT_S,
            check=False,
        )
        if one.returncode != 0 or not one.stdout.strip():
            raise SuiteError(
                f"task {task_of[ref]}: {Path(exe).name} has no image {ref} to record by its "
                "digest: build or pull it, then freeze"
            )
    raise SuiteError(f"{Path(exe).name} image inspect gave {len(ids)} ids for {len(wanted)} images")


def _digest(image_id: str) -> str:
    return image_id if image_id.startswith("sha256:") else f"sha256:{image_id}"
