"""``network = "model"`` in task.toml: read, hashed only where declared, bad values named."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import make_suite
from trialbook.suite import SuiteError, freeze, load_suite


def test_network_model_is_read_and_changes_only_that_tasks_id(tmp_path: Path) -> None:
    plain = load_suite(make_suite(tmp_path / "a", {"t": {}}, k=1, freeze=False))
    model = load_suite(
        make_suite(tmp_path / "b", {"t": {"toml": ['network = "model"']}}, k=1, freeze=False)
    )
    off = load_suite(
        make_suite(tmp_path / "c", {"t": {"toml": ["network = false"]}}, k=1, freeze=False)
    )
    (task,) = model.tasks
    assert (task.model, task.network) == (True, False)
    assert not plain.tasks[0].model
    # a task without the word keeps the id it had (network false is the default, hashed as before)
    assert freeze(plain).dataset_id == freeze(off).dataset_id
    assert freeze(model).dataset_id != freeze(plain).dataset_id


def test_another_word_is_refused_naming_the_key(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "s", {"t": {"toml": ['network = "internet"']}}, k=1, freeze=False)
    with pytest.raises(SuiteError, match=r"network.*expected true, false or \"model\""):
        load_suite(root)


def test_a_suite_wide_network_is_each_tasks_default_and_a_task_may_say_otherwise(
    tmp_path: Path,
) -> None:
    root = make_suite(
        tmp_path / "s",
        {"a": {}, "b": {"toml": ["network = false"]}, "c": {"toml": ["network = true"]}},
        k=1,
        extra='network = "model"\n',
        freeze=False,
    )
    tasks = {t.id: (t.network, t.model) for t in load_suite(root).tasks}
    assert tasks == {"a": (False, True), "b": (False, False), "c": (True, False)}
    bad = make_suite(tmp_path / "bad", {"a": {}}, k=1, extra="network = 1\n", freeze=False)
    with pytest.raises(SuiteError, match="network"):
        load_suite(bad)
