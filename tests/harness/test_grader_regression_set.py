"""grader-check as a grader regression set: several known-good samples, known-bad decoys, and an
``expect.json`` per sample naming the checks it must pass or fail; false accepts and false rejects
per grader and per check, exit 1 on any, exit 2 on a malformed expect.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook.cli import main

# A report grader with three named checks; the verdict is its exit code (all three must pass).
GRADE = """import json, os, sys
text = open("report.txt").read() if os.path.exists("report.txt") else ""
checks = {
    "sources exist": "sources:" in text,
    "sources support the claims": {"passed": "supported" in text, "reason": None if "supported" in text else "unsupported claim"},
    "coverage sufficient": len(text) >= 40,
}
print(json.dumps({"checks": checks}))
sys.exit(0 if all(v if isinstance(v, bool) else v["passed"] for v in checks.values()) else 1)
"""
# The same grader with a bug: it never looks at whether the sources support the claims.
LAX = GRADE.replace('"supported" in text', "True")
GOOD = "sources: a, b. every claim is supported by them, at length, with quotes and pages\n"
SHORT_GOOD = "sources: a. each claim supported, briefly.\n"  # 43 characters: enough coverage
UNSUPPORTED = "sources: a, b. none of these claims appear in them, at length\n"


def _suite(
    tmp_path: Path, grade: str, samples: dict[str, tuple[str, dict[str, Any] | None]]
) -> Path:
    """One task whose sample folders (``reference``, ``references/<n>``, ``decoys/<n>``) each
    hold a report.txt and, when given, an expect.json."""
    tasks = {"report": {"grader": 'python "$TRIALBOOK_ORACLE_DIR/g.py"', "oracle": {"g.py": grade}}}
    suite = make_suite(tmp_path / "suite", tasks, k=1)
    task = suite / "tasks" / "report"
    for folder, (text, expect) in samples.items():
        (task / folder).mkdir(parents=True)
        (task / folder / "report.txt").write_text(text)
        if expect is not None:
            (task / folder / "expect.json").write_text(json.dumps(expect))
    return suite


def _check(suite: Path, *extra: str) -> Any:
    return CliRunner().invoke(main, ["grader-check", str(suite), "--sandbox", "process", *extra])


SAMPLES = {
    "reference": (GOOD, None),
    "references/short": (SHORT_GOOD, {"checks": {"coverage sufficient": True}}),
    "decoys/unsupported": (
        UNSUPPORTED,
        {"checks": {"sources exist": True, "sources support the claims": False}},
    ),
}


def test_a_sound_grader_passes_its_regression_set(tmp_path: Path) -> None:
    result = _check(_suite(tmp_path, GRADE, SAMPLES), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["false_accepts"], doc["false_rejects"], doc["failed"]) == (0, 0, False)
    cases = {c["case"]: c for c in doc["cases"]}
    assert cases["reference:short"]["should_pass"] is True
    assert cases["reference:short"]["passed"] is True
    assert cases["decoy:unsupported"]["checks"]["sources support the claims"] == {
        "passed": False,
        "reason": "unsupported claim",
    }
    assert {(c["check"], c["samples"]) for c in doc["checks"]} == {
        ("coverage sufficient", 1),
        ("sources exist", 1),
        ("sources support the claims", 1),
    }
    (grader,) = doc["graders"]
    assert (grader["grader_version"], grader["tasks"]) == ("test-1", 1)


def test_a_grader_that_accepts_a_known_bad_sample_fails_the_check(tmp_path: Path) -> None:
    result = _check(_suite(tmp_path, LAX, SAMPLES), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert doc["false_accepts"] == 1  # the unsupported report passed
    assert doc["check_false_accepts"] == 1  # and so did the check that should have caught it
    (move,) = [c for c in doc["checks"] if c["false_accepts"]]
    assert move["check"] == "sources support the claims"
    (grader,) = doc["graders"]
    assert grader["false_accepts"] == 1
    text = _check(_suite(tmp_path / "again", LAX, SAMPLES))
    assert text.exit_code == 1
    assert "false accept: report decoy:unsupported should fail" in text.output
    assert (
        "false accept of check 'sources support the claims': report decoy:unsupported "
        "should fail, passed"
    ) in " ".join(text.output.split())  # wrapped at 80 columns
    assert "grader version test-1" in text.output


def test_a_grader_that_rejects_a_second_known_good_sample_fails_the_check(tmp_path: Path) -> None:
    strict = GRADE.replace("len(text) >= 40", "len(text) >= 60")  # too strict on coverage
    result = _check(_suite(tmp_path, strict, SAMPLES), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert (doc["false_accepts"], doc["false_rejects"]) == (0, 1)
    (case,) = [c for c in doc["cases"] if c["verdict"] == "false reject"]
    assert case["case"] == "reference:short"
    assert case["check_errors"] == [{"check": "coverage sufficient", "verdict": "false reject"}]


def test_a_violated_check_expectation_alone_fails_the_check(tmp_path: Path) -> None:
    """Both verdicts right, one check wrong: the decoy fails as it should, but for the wrong
    reason (its expect.json says the sources exist; a grader that finds none is off)."""
    blind = GRADE.replace('"sources:" in text', "False")
    samples = {"decoys/unsupported": SAMPLES["decoys/unsupported"]}
    result = _check(_suite(tmp_path, blind, samples), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert (doc["false_accepts"], doc["false_rejects"]) == (0, 0)
    assert (doc["check_false_accepts"], doc["check_false_rejects"]) == (0, 1)
    assert {(c["check"], c["false_rejects"]) for c in doc["checks"]} == {
        ("sources exist", 1),
        ("sources support the claims", 0),
    }


def test_a_check_the_grader_does_not_report_is_a_false_reject(tmp_path: Path) -> None:
    samples = {"reference": (GOOD, {"checks": {"links resolve": True}})}
    result = _check(_suite(tmp_path, GRADE, samples))
    assert result.exit_code == 1, result.output
    assert "false reject of check 'links resolve': report reference should pass, not reported" in (
        " ".join(result.output.split())  # wrapped at 80 columns
    )


def test_expect_json_is_not_laid_into_the_workspace(tmp_path: Path) -> None:
    # a grader that fails when it sees expect.json: the sample must pass all the same
    peeking = GRADE.replace(
        "sys.exit(0 if", "sys.exit(1 if os.path.exists('expect.json') else 0 if"
    )
    samples = {"reference": (GOOD, {"checks": {"sources exist": True}})}
    assert _check(_suite(tmp_path, peeking, samples)).exit_code == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["checks"]', "must be an object"),
        ('{"checks": {"a": true}, "passes": true}', "passes: unknown key"),
        ('{"checks": {"a": "yes"}}', "checks.a: must be true or false"),
        ('{"checks": []}', "checks: must be a non-empty object"),
    ],
)
def test_a_malformed_expect_json_is_one_line_and_exit_2(
    tmp_path: Path, content: str, message: str
) -> None:
    suite = _suite(tmp_path, GRADE, {"references/short": (SHORT_GOOD, None)})
    path = suite / "tasks" / "report" / "references" / "short" / "expect.json"
    path.write_text(content)
    result = _check(suite)
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert str(path) in line
    assert message in line


def test_a_task_without_a_known_good_sample_is_not_validated_and_fails_the_check(
    tmp_path: Path,
) -> None:
    # grader = "false" rejects everything: it passes the fixture and decoy cases (all must fail),
    # and only a known-good sample could show its false rejects. Without one the task is not
    # validated: said by name, exit 1 unless --allow-unvalidated
    tasks = {
        "always-fails": {"grader": "false", "decoys": {"bad": {"a.txt": "x"}}},
        "checked": {"grader": "test -f a.txt", "reference": {"a.txt": "good"}},
    }
    root = make_suite(tmp_path / "s", tasks)
    runner = CliRunner()
    args = ["grader-check", str(root), "--sandbox", "process"]
    out = runner.invoke(main, [*args, "--format", "json"])
    assert out.exit_code == 1, out.output
    data = json.loads(out.output)
    assert (data["false_accepts"], data["false_rejects"], data["failed"]) == (0, 0, False)
    assert data["unvalidated"] == ["always-fails"]
    text = runner.invoke(main, args)
    assert text.exit_code == 1
    flat = " ".join(text.output.split())  # the paragraph wraps at 80 columns
    last = flat[flat.index("NOT VALIDATED") :]
    assert last.startswith("NOT VALIDATED: 1 of 2 task(s) have no known-good sample")
    assert last.endswith(": always-fails")
    allowed = runner.invoke(main, [*args, "--allow-unvalidated"])
    assert allowed.exit_code == 0, allowed.output
    assert "NOT VALIDATED" in allowed.output  # allowed, still said
    # with a reference for it too, the grader's false rejects are measured: exit 1 for them
    (root / "tasks" / "always-fails" / "reference").mkdir()
    (root / "tasks" / "always-fails" / "reference" / "a.txt").write_text("good")
    measured = json.loads(runner.invoke(main, [*args, "--format", "json"]).output)
    assert (measured["false_rejects"], measured["unvalidated"]) == (1, [])
