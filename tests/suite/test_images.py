"""The images a suite's container environments rest on, recorded by digest at the freeze
(suite/_images.py): in the lock, in the task's hash, so a retagged image is a changed suite."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness._containers import BASE, PYTHON, container_engine, untag
from trialbook.errors import SuiteError
from trialbook.suite import check_lock, freeze, load_suite, write_lock
from trialbook.suite._images import base_images


def test_a_dockerfiles_base_images_are_its_from_lines(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "# syntax=docker/dockerfile:1\n"
        "FROM --platform=linux/amd64 localhost/a:1 AS build\n"
        "RUN true\n"
        "from build AS again\n"  # an earlier stage, not an image
        "FROM scratch\n"
        "FROM localhost/b:2\n"
        "COPY --from=build /x /x\n"
        "FROM localhost/a:1\n"
    )
    assert base_images(dockerfile) == ["localhost/a:1", "localhost/b:2"]


def test_a_from_through_a_build_argument_is_refused_by_its_line(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("ARG BASE=x\nFROM $BASE\n")
    with pytest.raises(
        SuiteError, match=r"Dockerfile line 2: FROM \$BASE names its image by a build"
    ):
        base_images(dockerfile)


@pytest.fixture
def retag() -> Iterator[str]:
    """A name of this test's own, tagged to the base image, untagged after."""
    engine = container_engine()
    container_engine(PYTHON)
    name = "localhost/trialbook-test-retag:1"
    subprocess.run(engine.command("tag", BASE, name), check=True, capture_output=True)
    yield name
    untag(engine, name)


def _image_id(ref: str) -> str:
    engine = container_engine()
    done = subprocess.run(
        engine.command("image", "inspect", "--format", "{{.Id}}", ref),
        capture_output=True,
        text=True,
        check=True,
    )
    return "sha256:" + done.stdout.strip().removeprefix("sha256:")


def test_the_lock_records_each_image_by_digest_and_a_retag_changes_the_suite(
    tmp_path: Path, retag: str
) -> None:
    env = {"environment/Dockerfile": f"FROM {retag}\nWORKDIR /app\n"}
    root = make_suite(
        tmp_path / "s",
        {
            "named": {"toml": [f'image = "{retag}"']},
            "built": {"toml": ['dockerfile = "environment/Dockerfile"']},
        },
        k=1,
        freeze=False,
    )
    for rel, text in env.items():
        (root / "tasks" / "built" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "tasks" / "built" / rel).write_text(text)
    suite = load_suite(root)
    lock = freeze(suite)
    write_lock(suite, lock)
    base_id = _image_id(BASE)
    assert lock.to_dict()["images"] == {"built": {retag: base_id}, "named": {retag: base_id}}
    assert check_lock(suite).matches
    # the same name, other contents: both tasks changed, the dataset_id with them
    engine = container_engine()
    subprocess.run(engine.command("tag", PYTHON, retag), check=True, capture_output=True)
    check = check_lock(suite)
    assert not check.matches
    assert check.current.dataset_id != lock.dataset_id
    now = _image_id(PYTHON)
    assert check.changed == (
        f"task 'built' changed: its image {retag} is now {now[:19]}, the lock has {base_id[:19]}",
        f"task 'named' changed: its image {retag} is now {now[:19]}, the lock has {base_id[:19]}",
    )


def test_a_suite_without_containers_reads_no_engine_and_keeps_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    root = make_suite(tmp_path / "s", {"t": {}}, k=1, freeze=False)
    data = freeze(load_suite(root)).to_dict()
    assert "images" not in data


def test_without_an_engine_or_the_image_the_freeze_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    container_engine()
    root = make_suite(
        tmp_path / "s",
        {"t": {"toml": ['image = "localhost/trialbook-no-such:0"']}},
        k=1,
        freeze=False,
    )
    with pytest.raises(SuiteError) as info:
        freeze(load_suite(root))
    assert str(info.value) == (
        "task t: podman has no image localhost/trialbook-no-such:0 to record by its digest: "
        "build or pull it, then freeze"
    )
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(SuiteError, match="neither podman nor docker is installed here"):
        freeze(load_suite(root))
