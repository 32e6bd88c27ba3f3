"""``trialbook race`` and ``compare --sequential`` as a user meets them: bad input, the sequential
interval of any two runs, and the documented race on the demo suite."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests.conftest import make_suite, matrix_rows, write_jsonl
from trialbook.cli import main
from trialbook.demo import SUITE_DIR
from trialbook.stats import PairedSequence, task_order

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("race-cli") / "suite"
    return make_suite(root, {f"t{i}": {"grader": "true"} for i in range(3)}, k=2)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--alpha", "1.5"], "--alpha must be in (0, 1), got 1.5"),
        (["--min-effect", "2"], "--min-effect must be in (0, 1)"),
        (["--jobs", "0"], "--jobs must be >= 1, got 0"),
        (["--max-tasks", "0"], "--max-tasks must be >= 1, got 0"),
        (["--method", "discordant"], "--method: the discordant test takes single-attempt suites"),
        (["--candidate", "/nonexistent/agent"], "--candidate: program '/nonexistent/agent'"),
        (["--resume", "nope"], "--resume: a resumed race keeps its suite and commands"),
        (
            ["--pass-env", "TRIALBOOK_TEST_SURELY_UNSET"],
            "--pass-env: not set in this environment: TRIALBOOK_TEST_SURELY_UNSET",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    suite: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    ledger = tmp_path / "race.db"
    args = [
        "race",
        str(suite),
        "--baseline",
        "true",
        "--candidate",
        "true",
        "--ledger",
        str(ledger),
    ]
    result = CliRunner().invoke(main, [*args, *extra])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert message in lines[0]
    assert "Traceback" not in result.output
    assert not ledger.exists()


def test_a_race_needs_a_db_ledger_and_its_two_commands(suite: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["race", str(suite), "--baseline", "true", "--ledger", str(tmp_path / "r.db")]
    )
    assert result.exit_code == 2
    assert "--candidate: give the candidate to start a race" in result.stderr
    result = CliRunner().invoke(
        main,
        ["race", str(suite), "--baseline", "true", "--candidate", "true", "--ledger", "r.jsonl"],
    )
    assert result.exit_code == 2
    assert "--ledger must be a SQLite ledger (.db)" in result.stderr


def _two_runs(
    tmp_path: Path, rng: np.random.Generator, dataset: str = "d1"
) -> tuple[Path, dict[str, float]]:
    tasks = [f"t{i:03d}" for i in range(120)]
    base = {t: rng.binomial(1, 0.4, size=3) for t in tasks}
    cand = {t: rng.binomial(1, 0.7, size=3) for t in tasks}
    rows = matrix_rows(base, run_id="b", dataset_id="d1") + matrix_rows(
        cand, run_id="c", dataset_id=dataset
    )
    diffs = {t: cand[t].mean() - base[t].mean() for t in tasks}
    return write_jsonl(tmp_path / "two.jsonl", rows), diffs


def test_compare_sequential_gives_the_anytime_valid_interval_of_any_two_runs(
    tmp_path: Path,
) -> None:
    ledger, diffs = _two_runs(tmp_path, np.random.default_rng(1))
    result = CliRunner().invoke(
        main,
        [
            "compare",
            f"{ledger}:b",
            f"{ledger}:c",
            "--sequential",
            "--seed",
            "4",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # the same sequence fed by hand: the paired tasks in the seeded order, every one of them
    seq = PairedSequence(alpha=0.05)
    for task in task_order(list(diffs), 4):
        look = seq.update(float(diffs[task]))
    assert doc["schema"] == "trialbook.sequential/1"
    assert doc["difference"] == {
        "estimate": look.estimate,
        "ci_low": look.ci_low,
        "ci_high": look.ci_high,
    }
    assert (doc["decision"], doc["tasks_used"], doc["race_id"]) == (look.decision, 120, None)
    text = CliRunner().invoke(main, ["compare", f"{ledger}:b", f"{ledger}:c", "--sequential"])
    assert "anytime-valid 95% interval" in text.output
    assert "looking again" in text.output


def test_compare_sequential_takes_the_prefix_both_runs_have(tmp_path: Path) -> None:
    # the candidate has run only some tasks: the sequence stops at the first task of the order it
    # lacks, so running the rest later continues this very sequence
    rng = np.random.default_rng(3)
    tasks = [f"t{i:02d}" for i in range(30)]
    base = {t: rng.binomial(1, 0.5, size=2) for t in tasks}
    order = task_order(tasks, 0)
    # the candidate misses the 13th task of the order, and nine after it: the prefix is 12 pairs
    cand = {t: rng.binomial(1, 0.5, size=2) for t in order[:12] + order[13:21]}
    ledger = write_jsonl(
        tmp_path / "l.jsonl",
        matrix_rows(base, run_id="b", dataset_id="d")
        + matrix_rows(cand, run_id="c", dataset_id="d"),
    )
    prefix = next(i for i, t in enumerate(order) if t not in cand)
    assert prefix == 12
    result = CliRunner().invoke(
        main, ["compare", f"{ledger}:b", f"{ledger}:c", "--sequential", "--format", "json"]
    )
    doc = json.loads(result.stdout)
    assert (doc["tasks_used"], doc["tasks_paired"], doc["tasks_total"]) == (prefix, 20, 30)
    seq = PairedSequence()
    for t in order[:prefix]:
        look = seq.update(float(cand[t].mean() - base[t].mean()))
    assert doc["difference"]["ci_low"] == look.ci_low


def test_compare_sequential_refuses_runs_of_different_suites(tmp_path: Path) -> None:
    ledger, _ = _two_runs(tmp_path, np.random.default_rng(2), dataset="d2")
    result = CliRunner().invoke(main, ["compare", f"{ledger}:b", f"{ledger}:c", "--sequential"])
    assert result.exit_code == 2
    assert "ran different suites (d1, d2)" in result.stderr


@pytest.mark.slow  # the demo's attempts run its real graders (pytest in the sandbox)
def test_the_documented_race_on_the_demo_suite_runs(tmp_path: Path) -> None:
    # docs/cli.md, "trialbook race": the demo suite and the two demo agents, here one task pair
    suite = tmp_path / "suite"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    material = tmp_path / "material"
    for task in (suite / "tasks").iterdir():
        for part in ("reference", "decoys"):
            if (task / part).is_dir():
                shutil.copytree(task / part, material / task.name / part)
    agent = f"{shlex.quote(sys.executable)} -m trialbook.demo.agent"
    result = subprocess.run(
        [sys.executable, "-m", "trialbook", "race", str(suite),
         "--baseline", f"{agent} baseline {material}", "--candidate", f"{agent} candidate {material}",
         "--ledger", str(tmp_path / "race.db"), "--max-tasks", "1", "--jobs", "5", "--format", "json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["tasks_used"], doc["stopped_because"]) == (1, "max-tasks")
    assert doc["attempts_used"] == 10  # one task pair, k = 5 each
    assert "pair 1/21" in result.stderr
