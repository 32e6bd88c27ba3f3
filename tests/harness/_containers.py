"""The container tier's tests need podman (or docker) and the local base image, which ``.ci/run``
installs and builds (``make base-image``): under CI a missing one fails the test; elsewhere it skips
and says why."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from trialbook.harness.sandbox import _container as ct

BASE = "localhost/trialbook-base:bookworm"
PYTHON = "localhost/trialbook-python:bookworm"
"""The base system with Debian's Python 3 (``make base-image`` builds both)."""

__all__ = ["BASE", "PYTHON", "container_engine", "untag"]


def container_engine(image: str = BASE) -> ct.Engine:
    """The engine that runs containers of ``image`` here (fails under CI, else skips, without)."""
    why = None
    if shutil.which("podman") is None and shutil.which("docker") is None:
        why = "no container engine (podman or docker) is installed"
    else:
        name, exe = ct.find_engine()
        exists = subprocess.run([exe, "image", "inspect", image], capture_output=True, check=False)
        if exists.returncode != 0:
            why = f"{name} has no image {image} (make base-image builds it with debootstrap)"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the container tier's tests must run under CI: {why}")
        pytest.skip(why)
    return ct.engine_for(None, image)


def untag(engine: ct.Engine, name: str) -> None:
    """Take the name ``name`` off its image, and only that name (``podman untag IMAGE`` alone
    would take every name off the image, the base image's own with it)."""
    argv = ("untag", name, name) if engine.name == "podman" else ("rmi", name)
    subprocess.run(engine.command(*argv), capture_output=True, check=True)
