"""Every command's terminal output fits 80 columns: no line longer, none ending in a space, and
no interval, figure or phrase split over two lines.

The ledgers and suites here are made to be wide: run ids of forty characters (as Terminal-Bench
names its runs), a long system name, named checks with long failure reasons, a task id past the
grader-check table's column, a suite with a leaked oracle. Each command runs with ``COLUMNS=80``
(what a terminal of 80 columns, or a pipe, gives; rich and :func:`shutil.get_terminal_size`
read it), and its output is checked line by line against the same output rendered unwrapped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite, matrix_rows, write_jsonl
from trialbook.cli import main
from trialbook.ledger import CheckVerdict, checks_text

WIDTH = 80
LONG_RUN = "20250902_orchestrator_qwen-3-coder-480B"
# an interval as the views print it: "35.8%–64.2%", "35.8% – 64.2%", "-13.8 pp to +25.0 pp"
INTERVAL = re.compile(r"[+-]?\d+(?:\.\d+)?(?:%| pp) ?(?:–| to ) ?[+-]?\d+(?:\.\d+)?(?:%| pp)")
# a figure and its unit or label, and the outcome phrases of the failure and progress lines
PHRASES = re.compile(
    r"\d+(?:\.\d+)? pp|\d+ timed out|timed out \d+|infrastructure error \d+|\d+ infra errors"
)


def run(*args: str, width: int = WIDTH) -> str:
    result = CliRunner(env={"COLUMNS": str(width)}).invoke(main, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.output


def check_fits(narrow: str, wide: str) -> None:
    """``narrow`` fits 80 columns, no line ends in a space, and every interval and phrase of the
    unwrapped ``wide`` output stands whole on one line of ``narrow``."""
    lines = narrow.splitlines()
    assert lines, "no output"
    for line in lines:
        assert len(line) <= WIDTH, f"{len(line)} columns: {line!r}\n{narrow}"
        assert line == line.rstrip(), f"a trailing space: {line!r}"
    for pattern in (INTERVAL, PHRASES):
        for found in pattern.findall(wide):
            assert any(found in line for line in lines), f"{found!r} split:\n{narrow}"


def both(*args: str) -> tuple[str, str]:
    return run(*args), run(*args, width=1000)


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """Twelve tasks x 4 attempts in two strata, named checks with long reasons, errors, a long
    run id and system, a selector."""
    outcomes = {f"repair-{i:02d}": [int((i + a) % 3 == 0) for a in range(4)] for i in range(6)}
    outcomes |= {f"greenfield-{i:02d}": [int((i * a) % 4 < 2) for a in range(4)] for i in range(6)}
    rows = matrix_rows(
        outcomes,
        run_id=LONG_RUN,
        system="orchestrator with claude-4-sonnet, temperature 0.7, retries off",
        dataset_id="sha256:" + "ab" * 32,
    )
    for r in rows:
        r["stratum"] = r["task_id"].split("-")[0]
        r.update(cost=0.015, tokens_in=12000, tokens_out=2500)
        ok = bool(r["passed"])
        r["checks"] = checks_text(
            {
                "compiles": CheckVerdict(True, None),
                "handles the empty input without raising": CheckVerdict(
                    ok, None if ok else "IndexError: list index out of range in parse_header"
                ),
                "keeps the public API": CheckVerdict(
                    ok or r["attempt_index"] % 2 == 0,
                    None if ok else "AttributeError: module 'app' has no attribute 'load_all'",
                ),
            }
        )
        if not ok:
            r["error"] = (
                "tests failed: test_edge_cases" if r["attempt_index"] % 2 else "SyntaxError"
            )
    failing = [r for r in rows if not r["passed"]]
    failing[0].update(timed_out=True, status="timed_out", elapsed_s=60.0)
    failing[3].update(status="infra_error", error="sandbox did not start")
    return write_jsonl(tmp_path / "nightly.jsonl", rows)


def test_score_fits_80_columns(ledger: Path) -> None:
    narrow, wide = both("score", str(ledger), "--tasks")
    check_fits(narrow, wide)
    # the named checks' reasons stand under the table, each whole on a line
    assert "    IndexError: list index out of range in parse_header (24)" in narrow.splitlines()


def test_compare_and_budget_fit_80_columns(ledger: Path, tmp_path: Path) -> None:
    other = [
        json.loads(line) | {"run_id": LONG_RUN + "-b"} for line in ledger.read_text().splitlines()
    ]
    for r in other:  # the candidate passes every attempt of four more tasks
        if r["task_id"][-1] in "1234":
            r.update(passed=True, timed_out=False, status="passed", error=None)
    cand = write_jsonl(tmp_path / "cand.jsonl", other)
    check_fits(*both("compare", str(ledger), str(cand)))
    check_fits(*both("budget", str(ledger)))
    # the views' own comparison, whose headline interval falls at the 80th column
    from tests.report.test_golden_views import _compare_ledgers

    check_fits(*both("compare", *_compare_ledgers(tmp_path)))


def test_runs_fits_80_columns(ledger: Path, tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    run("import", "jsonl", str(ledger), "--ledger", str(db))
    narrow, wide = both("runs", str(db))
    assert max(len(line) for line in wide.splitlines()) > WIDTH  # the table alone would not fit
    check_fits(narrow, wide)
    # the id whole, on a line of its own with the system
    assert any(line.startswith(f"{LONG_RUN} (orchestrator") for line in narrow.splitlines())


def test_plan_and_passk_fit_80_columns(
    ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the pilot's path is printed: a word as long as pytest's folder would fit no width
    monkeypatch.chdir(tmp_path)
    ledger = ledger.relative_to(tmp_path)
    check_fits(
        *both("plan", "--tasks", "50", "--runs", "3", "--effect", "0.1", "--pilot", str(ledger))
    )
    check_fits(
        *both(
            "plan",
            "--tasks",
            "400",
            "--effect",
            "0.03",
            "--baseline",
            "0.4",
            "--agreement",
            "0.8",
            "--runs",
            "4",
            "--within-var",
            "0.1",
        )
    )
    check_fits(*both("passk", "--n", "10", "--c", "2", "--k", "3"))
    check_fits(*both("passk", "--n", "10", "--c", "0", "--k", "3"))


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    long = "a-task-with-a-rather-long-identifier-for-its-table"
    tasks: dict[str, dict[str, Any]] = {
        long: {
            "grader": "test -f done.txt",
            "reference": {"done.txt": ""},
            "decoys": {"nothing-done-at-all": {"other.txt": "x"}},
        },
        "leaky": {
            "prompt": "the answer is 424242424242 exactly as the oracle says it",
            "grader": "true",
            "oracle": {"answer.txt": "424242424242 exactly as the oracle says it"},
        },
        "short": {"grader": "test -f done.txt", "reference": {"done.txt": ""}},
    }
    return make_suite(
        tmp_path / "a-suite-whose-folder-name-is-long-enough-to-matter", tasks, freeze=False
    )


def test_suite_freeze_check_and_grader_check_fit_80_columns(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the lock's path is printed: pytest's folder is a long word
    suite = suite.relative_to(tmp_path)
    check_fits(*both("suite", "freeze", str(suite)))
    check_fits(*both("suite", "check", str(suite)))
    narrow, wide = both("grader-check", str(suite), "--sandbox", "process")
    check_fits(narrow, wide)


def test_run_progress_and_summary_fit_80_columns(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    suite = suite.relative_to(tmp_path)
    run("suite", "freeze", str(suite))
    args = ["run", str(suite), "--agent", "touch done.txt", "--sandbox", "process"]
    narrow = run(*args, "--ledger", "narrow/l.db", "--run-id", LONG_RUN)
    wide = run(*args, "--ledger", "wide/l.db", "--run-id", LONG_RUN, width=1000)
    assert "[1/" in narrow  # the progress lines are there (piped: one per attempt)
    check_fits(narrow, wide)


def test_wrap_breaks_between_phrases() -> None:
    from trialbook.report import wrap

    lead = "DECISION: no detectable difference · pass@1 +18.8 pp (95% interval -10.3 pp to +30.6 pp), p = 0.2188"
    assert wrap(lead, 80) == (
        "DECISION: no detectable difference · pass@1 +18.8 pp (95% interval\n"
        "  -10.3 pp to +30.6 pp), p = 0.2188"
    )

    line = (
        "failures: 69 of 120 attempts did not pass: failed 50, timed out 16, infrastructure error 3"
    )
    assert wrap(line, 80) == (
        "failures: 69 of 120 attempts did not pass: failed 50, timed out 16,\n"
        "  infrastructure error 3"
    )
    assert wrap("x" * 90 + " y", 80) == "x" * 90 + "\n  y"  # a word is never cut
    assert wrap("short   ", 80) == "short"
