"""The container tier's task keys: each bad value refused in one line naming the file and the key;
the set ones in the task's hash (so in the dataset_id)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_suite
from tests.harness._containers import BASE, container_engine
from trialbook.errors import SuiteError
from trialbook.suite import freeze, load_suite

IMAGE = 'image = "localhost/x:1"'


@pytest.mark.parametrize(
    ("lines", "fixture", "message"),
    [
        (['workdir = "/app"'], {}, "workdir: only for a task with an image"),
        ([IMAGE, 'workdir = "app"'], {}, "workdir: expected an absolute path in the image"),
        ([IMAGE, 'workdir = "/app/../etc"'], {}, "expected an absolute path"),
        ([IMAGE, 'workdir = "/app"'], {"a.txt": "x"}, "leave fixture/ empty"),
        ([IMAGE, 'oracle_dir = "/"'], {}, "oracle_dir: expected an absolute path"),
        ([IMAGE, "memory_mb = 0"], {}, "memory_mb: expected a whole number of MiB >= 6"),
        ([IMAGE, "memory_mb = 1.5"], {}, "memory_mb: expected a whole number"),
        ([IMAGE, "cpus = -1"], {}, "cpus"),
        ([IMAGE, 'verdict = "reward"'], {}, "verdict: expected one of grader, harbor-reward"),
        ([IMAGE, 'dockerfile = "env/Dockerfile"'], {}, "give image or dockerfile, not both"),
        (['image = "-v /:/host"'], {}, "image: not an image reference"),
    ],
)
def test_a_bad_container_key_is_refused_by_name(
    tmp_path: Path, lines: list[str], fixture: dict[str, str], message: str
) -> None:
    root = make_suite(tmp_path / "s", {"t": {"toml": lines, "fixture": fixture}}, k=1, freeze=False)
    if any("env/Dockerfile" in line for line in lines):
        (root / "tasks" / "t" / "env").mkdir()
        (root / "tasks" / "t" / "env" / "Dockerfile").write_text("FROM scratch\n")
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    assert message in str(info.value)
    assert "task.toml" in str(info.value)


def test_the_container_keys_are_in_the_dataset_id(tmp_path: Path) -> None:
    container_engine()  # a freeze records the image by its digest, read from the engine
    ids = set()
    for extra in ([], ['workdir = "/app"'], ['workdir = "/srv"'], ["memory_mb = 512"],
                  ['verdict = "harbor-reward"']):  # fmt: skip
        root = make_suite(tmp_path / f"s{len(ids)}", {"t": {"toml": [f'image = "{BASE}"', *extra]}},
                          k=1, freeze=False)  # fmt: skip
        ids.add(freeze(load_suite(root)).dataset_id)
    assert len(ids) == 5
