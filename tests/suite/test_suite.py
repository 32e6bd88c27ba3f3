"""Suites: the dataset_id (stability, sensitivity), oracle-leak quarantine, lock checks, bad suites."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main
from trialbook.suite import (
    check_lock,
    find_leaks,
    fixture_hash,
    freeze,
    load_suite,
    oracle_hash,
    tree_hash,
)

TASKS: dict[str, dict[str, Any]] = {
    "add": {
        "prompt": "Fix add() in calc.py.",
        "grader": "python $TRIALBOOK_ORACLE_DIR/check.py",
        "fixture": {"calc.py": "def add(a, b):\n    return a - b\n", "lib/util.py": "X = 1\n"},
        "oracle": {"check.py": "from calc import add\nassert add(2, 3) == 5\n"},
        "toml": ['stratum = "repair"'],
    },
    "greet": {
        "prompt": "Write greet(name) in greet.py.",
        "grader": "python $TRIALBOOK_ORACLE_DIR/check.py",
        "fixture": {"greet.py": "def greet(name):\n    raise NotImplementedError\n"},
        "oracle": {"check.py": "from greet import greet\nassert greet('Ada') == 'Hello, Ada!'\n"},
        "toml": ['stratum = "greenfield"'],
    },
}


def dataset_id(root: Path) -> str:
    return freeze(load_suite(root)).dataset_id


def test_dataset_id_follows_the_documented_framing(tmp_path: Path) -> None:
    """The hash from first principles (the framing in suite/_freeze.py's docstring), so it cannot
    drift between versions or machines unnoticed: tag NUL length NUL bytes, sha256 throughout."""
    root = make_suite(
        tmp_path / "s",
        {"t": {"prompt": "P", "grader": "true", "fixture": {"a.txt": "A"}}},
        k=1,
        timeout_s=5,
        freeze=False,
    )

    def frame(tag: str, data: bytes) -> bytes:
        return f"{tag}\0{len(data)}\0".encode() + data

    settings = {
        "grader": "true",
        "grader_timeout_s": 120.0,
        "network": False,
        "stratum": None,
        "timeout_s": 5.0,
        "weight": None,
    }
    task = hashlib.sha256(
        frame("settings", json.dumps(settings, sort_keys=True, separators=(",", ":")).encode())
        + frame("prompt", b"P")
        + frame("fixture-file", b"a.txt")
        + frame("mode", b"-")
        + frame("content", b"A")
    ).hexdigest()
    budget = {"k": 1, "seeds": [0], "temperature": None, "timeout_s": 5.0}
    whole = hashlib.sha256(
        frame("schema", b"trialbook.suite/1")
        + frame("budget", json.dumps(budget, sort_keys=True, separators=(",", ":")).encode())
        + frame("task", b"t")
        + frame("task-hash", task.encode())
    ).hexdigest()
    assert dataset_id(root) == "sha256:" + whole


def test_dataset_id_is_stable_across_locations_and_file_order(tmp_path: Path) -> None:
    first = make_suite(tmp_path / "one", TASKS, freeze=False)
    # the same content written in the opposite order, in another folder
    reversed_tasks = {
        k: {**v, "fixture": dict(reversed(v["fixture"].items()))}
        for k, v in reversed(TASKS.items())
    }
    second = make_suite(tmp_path / "elsewhere" / "two", reversed_tasks, freeze=False)
    (second / "suite.toml").write_text((first / "suite.toml").read_text())
    assert dataset_id(first) == dataset_id(second)
    # file times do not matter
    os.utime(first / "tasks" / "add" / "fixture" / "calc.py", (0, 0))
    assert dataset_id(first) == dataset_id(second)


CHANGES: dict[str, Callable[[Path], None]] = {
    "prompt": lambda r: (r / "tasks/add/task.toml").write_text(
        (r / "tasks/add/task.toml").read_text().replace("Fix add()", "Fix  add()")
    ),
    "fixture byte": lambda r: (r / "tasks/add/fixture/calc.py").write_text(
        "def add(a, b):\n    return a - b \n"
    ),
    "fixture file added": lambda r: (r / "tasks/add/fixture/new.txt").write_text(""),
    "fixture file renamed": lambda r: (r / "tasks/add/fixture/lib/util.py").rename(
        r / "tasks/add/fixture/lib/utils.py"
    ),
    "fixture exec bit": lambda r: os.chmod(r / "tasks/add/fixture/calc.py", 0o755),
    "oracle": lambda r: (r / "tasks/add/oracle/check.py").write_text(
        "from calc import add\nassert add(2, 3) == 5 \n"
    ),
    "oracle file added": lambda r: (r / "tasks/add/oracle/data.json").write_text("{}"),
    "grader": lambda r: (r / "tasks/add/task.toml").write_text(
        (r / "tasks/add/task.toml").read_text().replace("check.py", "check.py -v")
    ),
    "task timeout": lambda r: (r / "tasks/add/task.toml").write_text(
        (r / "tasks/add/task.toml").read_text() + "timeout_s = 3\n"
    ),
    "weight": lambda r: (r / "tasks/add/task.toml").write_text(
        (r / "tasks/add/task.toml").read_text() + "weight = 2\n"
    ),
    "stratum": lambda r: (r / "tasks/add/task.toml").write_text(
        (r / "tasks/add/task.toml").read_text().replace('"repair"', '"regression"')
    ),
    "network": lambda r: (r / "tasks/add/task.toml").write_text(
        (r / "tasks/add/task.toml").read_text() + "network = true\n"
    ),
    "k": lambda r: (r / "suite.toml").write_text(
        (r / "suite.toml").read_text().replace("k = 2", "k = 3")
    ),
    "timeout": lambda r: (r / "suite.toml").write_text(
        (r / "suite.toml").read_text().replace("timeout_s = 10", "timeout_s = 11")
    ),
    "temperature": lambda r: (r / "suite.toml").write_text(
        (r / "suite.toml").read_text() + "temperature = 0.5\n"
    ),
    "seeds": lambda r: (r / "suite.toml").write_text(
        (r / "suite.toml").read_text() + "seeds = [7, 8]\n"
    ),
    "task removed": lambda r: shutil.rmtree(r / "tasks/greet"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_kind_of_change_changes_the_dataset_id(tmp_path: Path, change: str) -> None:
    root = make_suite(tmp_path / "s", TASKS)
    before = dataset_id(root)
    CHANGES[change](root)
    assert dataset_id(root) != before
    result = check_lock(root)
    assert not result.matches
    if change not in {"k", "timeout", "temperature", "seeds"}:
        assert any("'add'" in c or "'greet'" in c for c in result.changed), result.changed
    out = CliRunner().invoke(main, ["suite", "check", str(root)])
    assert out.exit_code == 1
    assert "does not match" in out.output


def test_suite_check_and_freeze_cli(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "s", TASKS, freeze=False)
    runner = CliRunner()
    out = runner.invoke(main, ["suite", "check", str(root)])
    assert out.exit_code == 1
    assert "no lock" in out.output
    out = runner.invoke(main, ["suite", "freeze", str(root), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["schema"] == "trialbook.suite/1"
    assert data["dataset_id"] == dataset_id(root)
    assert data["tasks"] == 2
    assert data["quarantined"] == []
    assert json.loads((root / "suite.lock.json").read_text())["dataset_id"] == data["dataset_id"]
    out = runner.invoke(main, ["suite", "check", str(root)])
    assert out.exit_code == 0
    assert "matches" in out.output


def test_a_leaked_oracle_line_in_the_fixture_is_quarantined(tmp_path: Path) -> None:
    leaky = {
        **TASKS,
        "leaky": {
            "prompt": "Make the tests pass.",
            "fixture": {"notes.txt": "hint: assert parse_date('2024-02-30') is None\n"},
            "oracle": {
                "test_dates.py": "from dates import parse_date\n\nassert parse_date('2024-02-30') is None\n"
            },
        },
    }
    root = make_suite(tmp_path / "s", leaky, freeze=False)
    out = CliRunner().invoke(main, ["suite", "freeze", str(root), "--format", "json"])
    data = json.loads(out.output)
    assert data["quarantined"] == ["leaky"]
    assert "oracle/test_dates.py line 3 appears in fixture/notes.txt" in data["leaks"]["leaky"][0]


def test_an_asserted_expected_value_in_the_prompt_is_quarantined(tmp_path: Path) -> None:
    tasks = {
        "greet": {
            **TASKS["greet"],
            "prompt": "Write greet(name); greet('Ada') must give Hello, Ada!",
        }
    }
    suite = load_suite(make_suite(tmp_path / "s", tasks, freeze=False))
    (reason,) = find_leaks(suite.task("greet"))
    assert reason == "oracle/check.py asserts 'Hello, Ada!', which appears in the prompt"


def test_no_leak_in_ordinary_tasks(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path / "s", TASKS, freeze=False))
    assert freeze(suite).quarantined == {}


def _bad(tmp_path: Path, edit: Callable[[Path], None]) -> str:
    root = make_suite(tmp_path / "s", TASKS, freeze=False)
    edit(root)
    out = CliRunner().invoke(main, ["suite", "freeze", str(root)])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    assert not (root / "suite.lock.json").exists()
    return out.output


def _append(path: str, text: str) -> Callable[[Path], None]:
    return lambda r: (r / path).write_text((r / path).read_text() + text)


MALFORMED: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing suite.toml": (lambda r: (r / "suite.toml").unlink(), "suite.toml: missing file"),
    "bad TOML": (_append("suite.toml", "k = = 3\n"), "suite.toml: not valid TOML"),
    "unknown suite key": (
        _append("suite.toml", "timout_s = 3\n"),
        "suite.toml: timout_s: unknown key (did you mean 'timeout_s'?)",
    ),
    "unknown task key": (
        _append("tasks/add/task.toml", "grade = 'x'\n"),
        "tasks/add/task.toml: grade: unknown key (did you mean 'grader'?)",
    ),
    "task without grader": (
        lambda r: (r / "tasks/add/task.toml").write_text('prompt = "p"\n'),
        "tasks/add/task.toml: grader: required",
    ),
    "k < 1": (
        lambda r: (r / "suite.toml").write_text(
            (r / "suite.toml").read_text().replace("k = 2", "k = 0")
        ),
        "suite.toml: k: must be >= 1, got 0",
    ),
    "k not whole": (
        lambda r: (r / "suite.toml").write_text(
            (r / "suite.toml").read_text().replace("k = 2", "k = 2.5")
        ),
        "suite.toml: k: expected a whole number >= 1, got 2.5",
    ),
    "missing timeout": (
        lambda r: (r / "suite.toml").write_text(
            (r / "suite.toml").read_text().replace("timeout_s = 10", "")
        ),
        "suite.toml: timeout_s: required",
    ),
    "subset naming an unknown task": (
        _append("suite.toml", '[subsets]\nsmoke = ["add", "gret"]\n'),
        "suite.toml: subsets.smoke: names unknown task 'gret' (did you mean 'greet'?)",
    ),
    "the old name of the subsets table": (
        _append("suite.toml", '[tiers]\nsmoke = ["add"]\n'),
        "suite.toml: tiers: the table of task subsets is now called [subsets]: rename it",
    ),
    "missing task.toml": (
        lambda r: (r / "tasks/add/task.toml").unlink(),
        "tasks/add/task.toml: missing file",
    ),
    "missing fixture": (
        lambda r: shutil.rmtree(r / "tasks/add/fixture"),
        "tasks/add/fixture: missing folder",
    ),
    "prompt and prompt_file": (
        _append("tasks/add/task.toml", 'prompt_file = "p.md"\n'),
        "tasks/add/task.toml: prompt: give prompt or prompt_file, not both",
    ),
    "seeds of the wrong length": (
        _append("suite.toml", "seeds = [1]\n"),
        "suite.toml: seeds: expected one seed per attempt index (2), got 1",
    ),
    "weight for an unknown task": (
        _append("suite.toml", "[weights]\nnope = 2\n"),
        "suite.toml: weights.nope: names no task",
    ),
    "negative weight": (
        _append("tasks/add/task.toml", "weight = -1\n"),
        "tasks/add/task.toml: weight: must be > 0, got -1",
    ),
    "stratum not declared": (
        _append("suite.toml", 'strata = ["greenfield"]\n'),
        "tasks/add/task.toml: stratum: 'repair' is not among the suite's strata",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_suites_name_file_and_key(tmp_path: Path, case: str) -> None:
    edit, message = MALFORMED[case]
    output = _bad(tmp_path, edit)
    assert message in output, output


def test_prompt_file_is_read(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "s", TASKS, freeze=False)
    toml = root / "tasks/add/task.toml"
    toml.write_text(
        toml.read_text().replace('prompt = "Fix add() in calc.py."', 'prompt_file = "prompt.md"')
    )
    (root / "tasks/add/prompt.md").write_text("From a file.")
    assert load_suite(root).task("add").prompt == "From a file."


def test_symlinks_in_a_fixture_are_refused(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "s", TASKS, freeze=False)
    (root / "tasks/add/fixture/link.py").symlink_to(root / "tasks/add/fixture/calc.py")
    out = CliRunner().invoke(main, ["suite", "freeze", str(root)])
    assert out.exit_code == 2
    assert "symbolic links are not allowed" in out.output


def test_subsets_are_loaded_and_tiers_is_not_a_known_key(tmp_path: Path) -> None:
    root = make_suite(tmp_path / "s", TASKS, extra='[subsets]\nsmoke = ["add"]\n', freeze=False)
    assert load_suite(root).subsets == {"smoke": ("add",)}
    out = _bad(tmp_path / "old", _append("suite.toml", '[tiers]\nsmoke = ["add"]\n'))
    assert "unknown key" not in out  # one line that says what to do, not a generic refusal


def test_fixture_and_oracle_digests_follow_their_copies(tmp_path: Path) -> None:
    """A copy hashes like its source (how an attempt checks what it was given); a changed byte or
    executable bit does not; a missing oracle hashes like an empty one."""
    suite = load_suite(make_suite(tmp_path / "s", TASKS, freeze=False))
    task = suite.task("add")
    copy = tmp_path / "copy"
    shutil.copytree(task.fixture, copy, copy_function=shutil.copy)
    assert tree_hash(copy, "fixture") == fixture_hash(task)
    assert tree_hash(task.oracle, "oracle") == oracle_hash(task) != tree_hash(copy, "oracle")
    (copy / "calc.py").chmod(0o755)
    assert tree_hash(copy, "fixture") != fixture_hash(task)
    (tmp_path / "empty").mkdir()
    assert tree_hash(tmp_path / "absent", "oracle") == tree_hash(tmp_path / "empty", "oracle")
