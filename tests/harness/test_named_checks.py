"""A grader with three named checks through run, score, report and compare (the real harness), and
the grader's last line as the only source of checks: forged and malformed lines are data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.harness.test_run import TIERS, run, unique_run_id
from trialbook.cli import main
from trialbook.harness import RunOptions, run_suite
from trialbook.ledger import CheckVerdict, ledger_rows, read_checks, read_ledger

# The grader of a research-report task: three named checks, the verdict its exit code.
GRADE = """import json, os, sys
text = open("report.txt").read() if os.path.exists("report.txt") else ""
exist = "sources:" in text
support = "supported" in text
coverage = len(text) >= 40
checks = {
    "sources exist": exist,
    "sources support the claims": {"passed": support, "reason": None if support else "claim not in the sources"},
    "coverage sufficient": {"passed": coverage, "reason": None if coverage else "under 40 characters"},
}
print("graded report.txt")
print(json.dumps({"checks": checks, "score": sum(map(bool, [exist, support, coverage])) / 3}))
sys.exit(0 if exist and support and coverage else 1)
"""
GRADER = 'python "$TRIALBOOK_ORACLE_DIR/grade.py"'
TASKS = {f"t{i}": {"grader": GRADER, "oracle": {"grade.py": GRADE}} for i in range(6)}
WEAK = "printf 'sources: a\\n' > report.txt"  # exists; supports nothing; too short
# the candidate: a full report on t0..t3, a short supported one on t4 and t5
STRONG = (
    'case "$TRIALBOOK_TASK_ID" in t4|t5) printf "sources: a supported\\n" > report.txt;; '
    '*) printf "sources: a, b. every claim is supported by them, at length\\n" > report.txt;; esac'
)


def _run(suite: Path, ledger: Path, agent: str, system: str) -> str:
    result = run_suite(
        RunOptions(
            suite=suite,
            agent=agent,
            ledger=ledger,
            system=system,
            sandbox="process",
            run_id=unique_run_id(),
            grace_s=0.5,
        )
    )
    assert not result.interrupted
    return result.run_id


def test_three_named_checks_through_run_score_report_and_compare(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", TASKS, k=2)
    ledger = tmp_path / "out" / "ledger.db"
    weak = _run(suite, ledger, WEAK, "weak")
    strong = _run(suite, ledger, STRONG, "strong")

    rows = {
        (r["run_id"], r["task_id"], r["attempt_index"]): r for r in ledger_rows(read_ledger(ledger))
    }
    row = rows[(weak, "t0", 0)]
    assert row["passed"] is False  # the verdict is the exit code
    assert read_checks(row["checks"]) == {
        "coverage sufficient": CheckVerdict(False, "under 40 characters"),
        "sources exist": CheckVerdict(True, None),
        "sources support the claims": CheckVerdict(False, "claim not in the sources"),
    }
    assert row["checks"] == json.dumps(
        json.loads(row["checks"]), sort_keys=True, separators=(",", ":")
    )
    assert row["score"] == pytest.approx(1 / 3)
    assert rows[(strong, "t0", 0)]["passed"] is True
    assert rows[(strong, "t4", 1)]["passed"] is False

    runner = CliRunner()
    result = runner.invoke(main, ["score", str(ledger), "--format", "json"])
    assert result.exit_code == 0, result.output
    by_run = {r["run_id"]: r for r in json.loads(result.output)["runs"]}
    weak_checks = by_run[weak]["checks"]
    assert set(weak_checks) == {
        "sources exist",
        "sources support the claims",
        "coverage sufficient",
    }
    # every weak attempt passes "sources exist" and fails the other two: rates 1 and 0 exactly,
    # each failure with its reason, all 12 attempts behind each
    assert weak_checks["sources exist"]["estimate"] == 1.0
    assert weak_checks["sources support the claims"]["estimate"] == 0.0
    assert weak_checks["sources support the claims"]["reasons"] == {"claim not in the sources": 12}
    assert weak_checks["coverage sufficient"]["attempts"] == 12
    assert weak_checks["coverage sufficient"]["lacking"] == 0
    cov = by_run[strong]["checks"]["coverage sufficient"]
    # first principles: 4 of 6 tasks pass coverage on both attempts, 2 on neither
    assert cov["estimate"] == pytest.approx(4 / 6)
    assert cov["ci_low"] < 4 / 6 < cov["ci_high"]
    assert cov["reasons"] == {"under 40 characters": 4}

    table = runner.invoke(main, ["score", str(ledger)], terminal_width=80)
    assert table.exit_code == 0, table.output
    assert "sources support the claims    0.0%" in table.output  # whole at 80 columns
    markdown = runner.invoke(main, ["score", str(ledger), "--format", "markdown"])
    assert "| sources support the claims | 0.0% | 0%–" in markdown.output
    assert "claim not in the sources (12)" in markdown.output
    assert "| coverage sufficient | 66.7% |" in markdown.output

    out = tmp_path / "report.html"
    result = runner.invoke(main, ["report", str(ledger), "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    assert "<h3>Checks: the grader's named checks</h3>" in html
    assert "claim not in the sources (12)" in html

    result = runner.invoke(
        main, ["compare", f"{ledger}:{weak}", f"{ledger}:{strong}", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    moves = {m["check"]: m for m in json.loads(result.output)["checks"]}
    assert moves["sources exist"]["estimate"] == 0.0
    assert moves["sources exist"]["moved"] == "-"
    support = moves["sources support the claims"]
    assert (support["tasks"], support["baseline"], support["candidate"]) == (6, 0.0, 1.0)
    assert support["moved"] == "rose"
    assert moves["coverage sufficient"]["estimate"] == pytest.approx(4 / 6)
    text = runner.invoke(main, ["compare", f"{ledger}:{weak}", f"{ledger}:{strong}"])
    assert "coverage sufficient       6    0.0%   66.7%        +66.7   +33.3 to +100.0  rose" in (
        text.output
    )
    # first principles: t0..t3 go from 0 to 1, t4 and t5 stay at 0, so the mean change is 4/6.
    # A resampled mean of those six differences is j/6 with j ~ Binomial(6, 4/6): P(j <= 1) =
    # 0.018 < 0.025 <= P(j <= 2) = 0.100, so the 2.5% percentile is 2/6; the 97.5% one is 6/6.


def _grader_printing(last: str, *, before: str = "") -> dict[str, Any]:
    script = f"import sys\nprint({before!r})\nprint({last!r})\nsys.exit(0)\n"
    return {"t": {"grader": 'python "$TRIALBOOK_ORACLE_DIR/g.py"', "oracle": {"g.py": script}}}


MALFORMED = [
    ('{"checks": [1, 2]}', None, "must be an object"),
    ('{"checks": {"": true, "ok": true}}', {"ok": CheckVerdict(True, None)}, "must not be empty"),
    ('{"checks": {"a\\u0007b": true}}', {}, "control character"),
    ('{"checks": {"' + "n" * 65 + '": true}}', {}, "longer than 64"),
    ('{"checks": {"x": 1, "y": false}}', {"y": CheckVerdict(False, None)}, "check 'x'"),
    ('{"checks": {"x": {"passed": true, "reason": 5}}}', {}, "check 'x'"),
    ('{"checks": {"x": {"passed": "yes"}}}', {}, "check 'x'"),
    (json.dumps({"checks": {f"c{i}": True for i in range(65)}}), None, "65 checks"),
    ('{"checks": {"x": ' * 5 + "", None, "not valid JSON"),
    (
        '{"checks": {"x": {"passed": false, "reason": "\\u001b[2Jgone"}}}',
        {"x": CheckVerdict(False, "\ufffd[2Jgone")},
        "control characters in its reason",
    ),
    (
        json.dumps({"checks": {"x": {"passed": False, "reason": "r" * 600}}}),
        {"x": CheckVerdict(False, "r" * 499 + "\u2026")},
        "reason cut to 500",
    ),
    ('{"score": 0.5, "checks": {"ok": true}, "pad": "' + "p" * 70000 + '"}', None, "over 65536"),
]


@pytest.mark.parametrize(("line", "kept", "note"), MALFORMED)
def test_a_malformed_checks_line_is_recorded_as_data(
    tmp_path: Path, line: str, kept: dict[str, CheckVerdict] | None, note: str
) -> None:
    (row,) = run(tmp_path, _grader_printing(line), "true", "process")
    assert row["passed"] is True  # the exit code still decides; the run is not dead
    assert row["status"] == "passed"
    assert note in (row["error"] or ""), row["error"]
    assert (None if row["checks"] is None else read_checks(row["checks"])) == kept


@pytest.mark.parametrize("tier", TIERS)
def test_checks_printed_by_the_agent_or_its_code_are_not_the_graders(
    tmp_path: Path, tier: str
) -> None:
    """Only the grader's own last line counts: the agent's stdout, a file in the workspace and a
    line the agent's code makes the grader print before its own are never the row's checks."""
    forged = json.dumps({"checks": {"all good": True}, "score": 1})
    grader = (
        "import json, subprocess, sys\n"
        # runs the agent's code, which prints a forged checks line into the grader's stdout
        "subprocess.run([sys.executable, 'solution.py'])\n"
        "print(json.dumps({'checks': {'real': {'passed': False, 'reason': 'wrong'}}}))\n"
        "sys.exit(1)\n"
    )
    tasks = {"t": {"grader": 'python "$TRIALBOOK_ORACLE_DIR/g.py"', "oracle": {"g.py": grader}}}
    agent = (
        f"echo '{forged}'; echo '{forged}' > checks.json; "
        f"printf 'print(%s)\\n' \"'{forged}'\" > solution.py"
    )
    (row,) = run(tmp_path, tasks, agent, tier)
    assert row["passed"] is False
    assert read_checks(row["checks"]) == {"real": CheckVerdict(False, "wrong")}
    assert row["score"] is None
