"""The scratch bound's keys, ``scratch_mb`` and ``scratch_inodes`` (docs/suites.md): whole numbers
> 0 in suite.toml or task.toml, the task's over the suite's; part of the task's hash only when not
the default, so that every suite written before them keeps its dataset_id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main
from trialbook.errors import SuiteError
from trialbook.suite import freeze, load_suite

TASK: dict[str, Any] = {"t": {"grader": "true", "fixture": {"a.txt": "a\n"}}}


def test_the_defaults_and_the_tasks_own_over_the_suites(tmp_path: Path) -> None:
    plain = load_suite(make_suite(tmp_path / "plain", TASK, freeze=False)).task("t")
    # the documented defaults: 4096 MiB and a million files and folders
    assert (plain.scratch_mb, plain.scratch_inodes) == (4096, 1_000_000)
    tasks = {**TASK, "u": {"toml": ["scratch_mb = 16"]}}
    suite = load_suite(
        make_suite(tmp_path / "s", tasks, extra="scratch_inodes = 500\n", freeze=False)
    )
    t, u = suite.task("t"), suite.task("u")
    assert (t.scratch_mb, t.scratch_inodes) == (4096, 500)  # the suite's
    assert (u.scratch_mb, u.scratch_inodes) == (16, 500)  # its own bytes, the suite's inodes


@pytest.mark.parametrize("key", ["scratch_mb", "scratch_inodes"])
def test_the_default_keeps_the_dataset_id_and_another_value_changes_it(
    tmp_path: Path, key: str
) -> None:
    plain = make_suite(tmp_path / "plain", TASK, freeze=False)
    default = 4096 if key == "scratch_mb" else 1_000_000
    said = make_suite(tmp_path / "said", TASK, extra=f"{key} = {default}\n", freeze=False)
    other = make_suite(tmp_path / "other", TASK, extra=f"{key} = {default // 2}\n", freeze=False)
    ids = {p.name: freeze(load_suite(p)).dataset_id for p in (plain, said, other)}
    assert ids["plain"] == ids["said"]
    assert ids["other"] != ids["plain"]


BAD = [0, -1, 1.5, True, '"8"']


@pytest.mark.parametrize("where", ["suite.toml", "task.toml"])
@pytest.mark.parametrize("key", ["scratch_mb", "scratch_inodes"])
@pytest.mark.parametrize("value", BAD, ids=[repr(v) for v in BAD])
def test_a_bad_value_is_one_line_naming_the_key(
    tmp_path: Path, where: str, key: str, value: object
) -> None:
    line = f"{key} = {str(value).lower() if isinstance(value, bool) else value}\n"
    if where == "suite.toml":
        root = make_suite(tmp_path / "s", TASK, extra=line, freeze=False)
    else:
        root = make_suite(tmp_path / "s", {"t": {**TASK["t"], "toml": [line]}}, freeze=False)
    with pytest.raises(SuiteError) as raised:
        load_suite(root)
    (problem,) = raised.value.problems
    assert f"{where}: {key}: expected a whole number > 0" in problem, problem
    out = CliRunner().invoke(main, ["suite", "freeze", str(root)])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    assert [ln for ln in out.output.splitlines() if key in ln] == [
        ln for ln in out.output.splitlines() if ln.strip()
    ][-1:], out.output
