"""`trialbook score` end to end, and every bad-input case of issue 2: exit 2, the message, no rate."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import base_row, matrix_rows, write_jsonl
from trialbook.cli import main

RATE = re.compile(r"\d+\.\d+%|\"estimate\"")


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def claim_7f(tmp_path: Path) -> Path:
    # the teaching data of docs/methodology.md, "pass@k and pass^k": 4 tasks x 5 runs, successes 5, 4, 2, 0
    outcomes = {"A": [1] * 5, "B": [1, 1, 1, 1, 0], "C": [1, 1, 0, 0, 0], "D": [0] * 5}
    return write_jsonl(tmp_path / "l.jsonl", matrix_rows(outcomes))


def test_json_contract(tmp_path: Path, vectors: dict[str, Any]) -> None:
    result = run("score", str(claim_7f(tmp_path)), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == "trialbook.score/1"
    (r,) = doc["runs"]
    assert {
        "run_id",
        "system",
        "dataset_id",
        "tasks",
        "attempts",
        "metrics",
        "ci",
        "variance",
    } <= set(r)
    assert {"effort", "cost", "strata", "per_task"} <= set(r)
    assert r["run_id"] == "l"  # a file without run_id is one run, named after the file
    assert (r["tasks"], r["attempts"]) == (4, 20)
    expected = vectors["pass_k"]["datasets"][0]["expected"]
    for k in range(1, 6):
        for name in (f"pass@{k}", f"pass^{k}"):
            m = r["metrics"][name]
            assert set(m) >= {"estimate", "ci_low", "ci_high", "se"}
            assert m["estimate"] == pytest.approx(expected[name], abs=1e-12)
            assert m["ci_low"] <= m["estimate"] <= m["ci_high"]
    se_7f = vectors["clustered_and_components"]["claim_7f_components"]["expected"]
    assert r["metrics"]["pass@1"]["se"] == pytest.approx(
        se_7f["se_mean (task-clustered, = sd(task means, ddof=1)/sqrt(T))"], abs=1e-9
    )
    assert r["ci"] == {
        "method": "wilson",
        "confidence": 0.95,
        "resamples": 10_000,
        "seed": 0,
        "unit": "task",
        "se_method": "task-clustered (CR1)",
        "distinct_task_profiles": 4,
    }
    assert r["cost"]["cost_per_success"] is None  # cost never recorded: undefined, not 0
    assert r["cost"]["total_cost"]["value"] is None


def test_k_option_and_markdown(tmp_path: Path) -> None:
    path = claim_7f(tmp_path)
    doc = json.loads(run("score", str(path), "--k", "2,1", "--format", "json").output)
    assert list(doc["runs"][0]["metrics"]) == ["pass@1", "pass@2", "pass^1", "pass^2"]
    md = run("score", str(path), "--format", "markdown")
    assert md.exit_code == 0
    assert "| pass@2 | 67.5% |" in md.output
    assert "| pass^2 | 42.5% |" in md.output
    table = run("score", str(path))
    assert table.exit_code == 0
    assert "pass^5" in table.output


def test_cost_per_success_is_total_over_solved_tasks(tmp_path: Path) -> None:
    rows = matrix_rows({"A": [1, 0], "B": [0, 0], "C": [0, 1]})
    for r in rows:
        r["cost"] = 0.5
    out = json.loads(
        run("score", str(write_jsonl(tmp_path / "c.jsonl", rows)), "--format", "json").output
    )
    cost = out["runs"][0]["cost"]
    # first principles: 6 attempts x 0.5 = 3.0 spent, 2 tasks solved -> 1.5 per success
    assert cost["total_cost"]["value"] == 3.0
    assert cost["cost_per_success"] == 1.5


def test_partially_priced_cost_is_not_a_total(tmp_path: Path) -> None:
    rows = matrix_rows({"A": [1, 0]})
    rows[0]["cost"] = 0.25
    out = json.loads(
        run("score", str(write_jsonl(tmp_path / "c.jsonl", rows)), "--format", "json").output
    )
    cost = out["runs"][0]["cost"]
    assert cost["total_cost"] == {"value": None, "known_attempts": 1, "partial": 0.25}
    assert cost["cost_per_success"] is None
    assert "cost recorded for 1 attempts only" in cost["cost_per_success_note"]


def test_quarantine_and_infra_errors(tmp_path: Path) -> None:
    rows = matrix_rows({"A": [1, 1, 0], "B": [0, 1, 1], "C": [0, 1, 0]})
    rows[0]["oracle_leak"] = True  # A is quarantined whole, its other attempts too
    rows[3]["status"] = "infra_error"  # B's first attempt (a failure) was the harness's
    path = write_jsonl(tmp_path / "q.jsonl", rows)
    r = json.loads(run("score", str(path), "--k", "1", "--format", "json").output)["runs"][0]
    assert r["quarantined"] == [{"task_id": "A", "attempt_index": 0}]
    assert r["attempts"] == 6
    assert r["infra_errors"] == {"attempts": 1, "dropped": False}
    # B: the infra error counted as a failure -> 2/3; C: 1/3
    assert r["metrics"]["pass@1"]["estimate"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert any("quarantined whole" in n and "'A'" in n for n in r["notes"])
    dropped = json.loads(
        run("score", str(path), "--k", "1", "--drop-infra-errors", "--format", "json").output
    )["runs"][0]
    # B: 2/2 once its infra error is dropped; C: 1/3. The rate before dropping is still said
    assert dropped["metrics"]["pass@1"]["estimate"] == pytest.approx((1 + 1 / 3) / 2)
    assert any("1 of 6 attempts (16.7%)" in n and "dropped" in n for n in dropped["notes"])


def test_declared_weights(tmp_path: Path) -> None:
    rows = matrix_rows({"A": [1, 1], "B": [0, 0]})
    for r in rows:
        r["weight"] = 3.0 if r["task_id"] == "A" else 1.0
    path = write_jsonl(tmp_path / "w.jsonl", rows)
    r = json.loads(run("score", str(path), "--weights", "declared", "--format", "json").output)[
        "runs"
    ][0]
    assert r["metrics"]["pass@1"]["estimate"] == pytest.approx(0.75)
    assert r["weights"] == "declared"


def test_several_runs_and_run_selection(tmp_path: Path) -> None:
    rows = [dict(r, run_id="r1", system="s") for r in matrix_rows({"A": [1, 0], "B": [1, 1]})]
    rows += [dict(r, run_id="r2", system="s") for r in matrix_rows({"A": [0, 0], "B": [1, 1]})]
    path = write_jsonl(tmp_path / "m.jsonl", rows)
    doc = json.loads(run("score", str(path), "--format", "json").output)
    assert [r["run_id"] for r in doc["runs"]] == ["r1", "r2"]
    assert doc["across_runs"][0]["runs"] == 2
    assert doc["across_runs"][0]["median"] == pytest.approx((0.75 + 0.5) / 2)
    one = json.loads(run("score", str(path), "--run", "r2", "--format", "json").output)
    assert [r["run_id"] for r in one["runs"]] == ["r2"]
    missing = run("score", str(path), "--run", "nope")
    assert missing.exit_code == 2
    assert "--run 'nope' is not in" in missing.output


def _bad(tmp_path: Path, rows: list[Any] | str | bytes, suffix: str = ".jsonl", *extra: str) -> Any:
    path = tmp_path / f"bad{suffix}"
    if isinstance(rows, bytes):
        path.write_bytes(rows)
    elif isinstance(rows, str):
        path.write_text(rows)
    else:
        write_jsonl(path, rows)
    result = CliRunner().invoke(main, ["score", str(path), *extra], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert not RATE.search(result.output), "a rate was printed from a ledger that failed validation"
    assert "Traceback" not in result.output
    return result


BAD_CASES: dict[str, tuple[Any, str]] = {
    "missing required field": (
        [{k: v for k, v in base_row("t1", 0, passed=True).items() if k != "timeout_s"}],
        "bad.jsonl:1: task 't1': missing required field 'timeout_s'",
    ),
    "wrong type": (
        [base_row("t1", 0, passed="yes")],
        "bad.jsonl:1: task 't1': field 'passed': expected true or false, got \"yes\"",
    ),
    "NaN": (
        '{"task_id":"t1","attempt_index":0,"k_budget":1,"timeout_s":NaN,"elapsed_s":1,'
        '"passed":true,"timed_out":false,"helper_calls":0,"oracle_leak":false}\n',
        "bad.jsonl:1: task 't1': field 'timeout_s': NaN is not a number JSON allows",
    ),
    "number too large for a double": (
        json.dumps(base_row("t1", 0, passed=True)).replace("1.5", "1e400") + "\n",
        "bad.jsonl:1: task 't1': field 'elapsed_s': must be a finite number, got inf",
    ),
    "Infinity literal": (
        # what Python's json.dumps writes for float('inf')
        [base_row("t1", 0, passed=True, elapsed_s=float("inf"))],
        "bad.jsonl:1: task 't1': field 'elapsed_s': Infinity is not a number JSON allows",
    ),
    "-Infinity nested in a check": (
        # the field is named by its path, as the row's own refusals name theirs
        '{"task_id":"t1","attempt_index":0,"k_budget":1,"timeout_s":1,"elapsed_s":1,'
        '"passed":true,"timed_out":false,"helper_calls":0,"oracle_leak":false,'
        '"checks":{"a":[1,-Infinity]}}\n',
        "bad.jsonl:1: task 't1': field 'checks.a[1]': -Infinity is not a number JSON allows",
    ),
    "NaN in a line that is not an object": (
        "[NaN]\n",
        "bad.jsonl:1: not valid JSON: NaN is not a number JSON allows",
    ),
    "whole number beyond 64 bits": (
        [base_row("t1", 0, passed=True, k=10**20)],
        "bad.jsonl:1: task 't1': field 'k_budget': 100000000000000000000 does not fit in 64 bits",
    ),
    "invalid UTF-8": (
        (json.dumps(base_row("t1", 0, passed=True)) + "\n").encode() + b'{"task_id": "\xff"}\n',
        "bad.jsonl:2: not valid JSON: 'utf-8' codec can't decode byte 0xff",
    ),
    "negative number": (
        [base_row("t1", 0, passed=True, elapsed_s=-3.0)],
        "bad.jsonl:1: task 't1': field 'elapsed_s': must be >= 0, got -3",
    ),
    "attempt index at the budget": (
        [base_row("t1", 5, passed=True, k=5)],
        "bad.jsonl:1: task 't1': field 'attempt_index': 5 is not below k_budget 5",
    ),
    "k varying within a run": (
        [base_row("t1", 0, passed=True, k=5), base_row("t2", 0, passed=True, k=3)],
        "bad.jsonl:2: run 'bad', task 't2': field 'k_budget': 3 differs from 5 on line 1",
    ),
    "duplicate attempt": (
        [base_row("t1", 0, passed=True), base_row("t1", 0, passed=False)],
        "bad.jsonl:2: run 'bad', task 't1': attempt_index 0 duplicates line 1",
    ),
    "re-run without its infra error": (
        [
            base_row("t1", 0, passed=False, status="failed"),
            base_row("t1", 0, passed=True, status="passed", retry=1),
        ],
        "bad.jsonl:2: run 'bad', task 't1': attempt_index 0: field 'retry': 1 follows no "
        "infra_error row of retry 0 of the same attempt",
    ),
    "re-run twice as the same retry": (
        [
            base_row("t1", 0, passed=False, status="infra_error", lost=True),
            base_row("t1", 0, passed=False, status="infra_error", retry=1, lost=True),
            base_row("t1", 0, passed=True, status="passed", retry=1),
        ],
        "bad.jsonl:3: run 'bad', task 't1': attempt_index 0 retry 1 duplicates line 2 "
        "((run_id, task_id, attempt_index, retry) must be unique)",
    ),
    "lost on a row that is no infra error": (
        [base_row("t1", 0, passed=True, status="passed", lost=True)],
        "bad.jsonl:1: run 'bad', task 't1': attempt_index 0: field 'lost': true only on an "
        "infra_error row",
    ),
    "timed_out with passed": (
        [base_row("t1", 0, passed=True, timed_out=True)],
        "bad.jsonl:1: task 't1': contradiction: 'timed_out' and 'passed' are both true",
    ),
    "unparsable line": (
        json.dumps(base_row("t1", 0, passed=True)) + "\n{not json\n",
        "bad.jsonl:2: not valid JSON: Expecting property name enclosed in double quotes",
    ),
    "empty ledger": ("\n\n", "bad.jsonl: the ledger holds no attempts"),
    "unknown field": (
        [base_row("t1", 0, passed=True, cots=1.0)],
        "bad.jsonl:1: unknown field 'cots' (did you mean 'cost'?)",
    ),
    "status contradicts passed": (
        [base_row("t1", 0, passed=True, status="failed")],
        "contradiction: field 'passed' is true but 'status' is 'failed'",
    ),
    "bad timestamp": (
        [base_row("t1", 0, passed=True, started_at="2026-11-30T10:00:00")],
        "field 'started_at': timestamp '2026-11-30T10:00:00' has no UTC offset",
    ),
    "empty task id": (
        [base_row("  ", 0, passed=True)],
        "bad.jsonl:1: field 'task_id': must not be empty",
    ),
    "mixed run ids": (
        [base_row("t1", 0, passed=True, run_id="r"), base_row("t2", 0, passed=True)],
        "bad.jsonl:2: field 'run_id': missing while other rows name their run",
    ),
}


@pytest.mark.parametrize("case", list(BAD_CASES))
def test_bad_input_exits_2_with_a_named_problem(tmp_path: Path, case: str) -> None:
    rows, message = BAD_CASES[case]
    result = _bad(tmp_path, rows)
    assert message in result.output


def test_k_larger_than_some_tasks_names_them(tmp_path: Path) -> None:
    rows = matrix_rows({"long": [1, 0, 1], "short-1": [1], "short-2": [0, 1]})
    for r in rows:
        r["k_budget"] = 3
    result = _bad(tmp_path, rows, ".jsonl", "--k", "2")
    assert "k=2 exceeds the attempts of 1 task(s): 'short-1' (n=1)" in result.output


def test_problems_are_capped_at_20_then_counted(tmp_path: Path) -> None:
    rows = [base_row(f"t{i}", 0, passed=True, elapsed_s=-1.0) for i in range(25)]
    result = _bad(tmp_path, rows)
    assert result.output.count("must be >= 0") == 20
    assert "... and 5 more problems" in result.output


def test_csv_bad_input_names_line_and_field(tmp_path: Path) -> None:
    header = "task_id,attempt_index,k_budget,timeout_s,elapsed_s,passed,timed_out,helper_calls,oracle_leak"
    text = f"{header}\nt1,0,2,60,1.0,true,false,0,false\nt1,1,2,60,1.0,maybe,false,0,false\n"
    result = _bad(tmp_path, text, ".csv")
    assert (
        "bad.csv:3: task 't1': field 'passed': expected true or false, got \"maybe\""
        in result.output
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "0"], "expected whole numbers >= 1"),
        (["--k", "a,b"], "expected whole numbers >= 1"),
        (["--confidence", "1.2"], "--confidence must lie strictly between 0 and 1"),
        (["--resamples", "1"], "--resamples must be >= 2"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    path = claim_7f(tmp_path)
    result = CliRunner().invoke(main, ["score", str(path), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not RATE.search(result.output)


def test_missing_file_and_wrong_suffix(tmp_path: Path) -> None:
    result = _bad(tmp_path, "x", ".txt")
    assert "unsupported ledger type '.txt'" in result.output
    result = run("score", str(tmp_path / "none.jsonl"))
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_passk_calculator() -> None:
    out = run("passk", "--n", "10", "--c", "2", "--k", "3").output
    assert "C(10,3) = 120" in out
    assert "C(8,3) = 56" in out
    assert "1 - 56/120 = 53.33%" in out
    assert "48.80%" in out
    strict = CliRunner().invoke(main, ["passk", "--n", "5", "--c", "1", "--k", "9"])
    assert strict.exit_code == 2
    assert "k (9) exceeds n (5)" in strict.output
    clamped = run("passk", "--n", "5", "--c", "7", "--k", "9", "--clamp").output
    assert "effective settings: n=5, c=5, k=5" in clamped
    assert "clamped: c: 7 -> 5; k: 9 -> 5" in clamped
    doc = json.loads(run("passk", "--n", "10", "--c", "2", "--k", "3", "--format", "json").output)
    assert doc["pass@k"] == pytest.approx(64 / 120, abs=1e-15)


def test_csv_that_is_not_utf8_names_the_line_of_the_bad_byte(tmp_path: Path) -> None:
    header = "task_id,attempt_index,k_budget,timeout_s,elapsed_s,passed,timed_out,helper_calls,oracle_leak"
    good = "t1,0,2,60,1.0,true,false,0,false"
    # lines 1-3 are fine text (line 2 ends in CRLF); line 4 holds the byte 0xff
    data = (
        f"{header}\n{good}\r\n{good.replace('t1', 't2')}\n".encode()
        + b"t\xff,0,2,60,1,true,false,0,false\n"
    )
    result = _bad(tmp_path, data, ".csv")
    assert "bad.csv:4: not UTF-8 text (invalid start byte)" in result.output
