"""The bundled demo: its suite is what the definitions build, its graders are sound, its agents act."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from trialbook.cli import main
from trialbook.demo import DEMO_TASKS, SUITE_DIR, build_suite
from trialbook.ledger import read_ledger
from trialbook.suite import check_lock, load_suite


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "suite.lock.json" and "__pycache__" not in p.parts
    }


def test_the_committed_suite_is_what_the_definitions_build(tmp_path: Path) -> None:
    built = build_suite(tmp_path / "suite")
    assert _tree(built) == _tree(SUITE_DIR)
    assert check_lock(SUITE_DIR).matches, "freeze src/trialbook/demo/suite after changing it"


def test_the_demo_suite_shape() -> None:
    suite = load_suite(SUITE_DIR)
    strata = [t.stratum for t in suite.tasks]
    assert len(suite.tasks) == len(DEMO_TASKS) >= 21
    assert {s: strata.count(s) for s in set(strata)} == {
        "repair": 8,
        "greenfield": 7,
        "regression": 7,
    }
    assert suite.k == 5
    lock = json.loads((SUITE_DIR / "suite.lock.json").read_text())
    assert lock["quarantined"] == ["repair-title-case"]


def test_grader_check_on_the_bundled_suite_finds_no_false_verdict() -> None:
    out = CliRunner().invoke(
        main,
        ["grader-check", str(SUITE_DIR), "--sandbox", "process", "--jobs", "2", "--format", "json"],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["grader_version"] == "unittest-oracles-1"
    assert (data["false_accepts"], data["false_rejects"]) == (0, 0)
    assert len(data["cases"]) == 3 * len(DEMO_TASKS)  # fixture, reference, one decoy each


def test_grader_check_counts_false_accepts_and_rejects(tmp_path: Path) -> None:
    from tests.conftest import make_suite

    tasks = {
        "lenient": {
            "grader": "true",
            "reference": {"a.txt": "good"},
        },  # accepts the untouched fixture
        "strict": {
            "grader": "grep -q good a.txt",
            "reference": {"a.txt": "gut"},  # a reference the grader rejects
            "decoys": {"wrong": {"a.txt": "good enough"}},  # a decoy the grader accepts
        },
    }
    root = make_suite(tmp_path / "s", tasks)
    out = CliRunner().invoke(
        main, ["grader-check", str(root), "--sandbox", "process", "--format", "json"]
    )
    assert out.exit_code == 1
    data = json.loads(out.output)
    assert data["tasks"]["lenient"] == {"cases": 2, "false_accepts": 1, "false_rejects": 0}
    assert data["tasks"]["strict"] == {"cases": 3, "false_accepts": 1, "false_rejects": 1}
    assert (data["false_accepts"], data["false_rejects"]) == (2, 1)


@pytest.mark.parametrize("profile", ["baseline", "candidate"])
def test_the_simulated_agents_edit_the_workspace_and_report_usage(
    tmp_path: Path, profile: str
) -> None:
    task = next(t for t in DEMO_TASKS if t.id == "repair-median")
    for name, text in task.files.items():
        (tmp_path / name).write_text(text)
    usage = tmp_path / "usage.jsonl"
    env = {
        **os.environ,
        "TRIALBOOK_TASK_ID": task.id,
        # a seed at which neither profile hangs or leaves a process behind (asserted below)
        "TRIALBOOK_SEED": "12",
        "TRIALBOOK_USAGE_FILE": str(usage),
    }
    done = subprocess.run(
        [sys.executable, "-m", "trialbook.demo.agent", profile],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "hanging" not in done.stdout
    assert "left a background process" not in done.stdout
    assert "SIMULATED agent" in done.stdout
    assert (tmp_path / "stats.py").read_text() != task.files["stats.py"]
    lines = [json.loads(x) for x in usage.read_text().splitlines()]
    assert lines
    assert all(line["cost"] > 0 for line in lines)


@pytest.mark.slow
def test_demo_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--out", str(out), "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "SIMULATED AGENTS" in result.output
    ledger = read_ledger(out / "ledger.db")
    assert len(ledger) == 2 * 21 * 5
    assert len(ledger.run_ids) == 2
    compare = json.loads((out / "compare.json").read_text())
    assert compare["schema"] == "trialbook.compare/1"
    assert compare["tasks"] == 21
    for name in ("baseline", "candidate"):
        score = json.loads((out / f"{name}-score.json").read_text())
        assert score["runs"][0]["tasks"] == 21
        assert score["runs"][0]["metrics"]["pass@1"]["ci_low"] is not None
