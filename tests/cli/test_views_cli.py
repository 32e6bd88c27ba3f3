"""The command line of issue 15's views: budget, --tasks, colour, and the small things found on the way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import base_row, matrix_rows, write_jsonl
from trialbook.cli import main

ESC = re.compile(r"\x1b\[")


def _ledger(tmp_path: Path) -> Path:
    # the seed 000 table (budget 1: 25% for 8; budget 5: 75% for 40, 26 stopping at the first
    # pass; docs/methodology.md), with token counts
    outcomes = {"A": [1, 1, 0, 0, 0], "B": [0, 1, 0, 1, 0], "C": [0] * 5, "D": [0, 0, 0, 0, 1]}
    rows = matrix_rows(outcomes, run_id="r1", cost=2.0, tokens_in=31477, tokens_out=100)
    return write_jsonl(tmp_path / "runs.jsonl", rows)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_budget_json(tmp_path: Path) -> None:
    code, out = invoke("budget", str(_ledger(tmp_path)), "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["schema"] == "trialbook.budget/1"
    (run,) = doc["runs"]
    assert run["run_id"] == "r1"
    first, last = run["rows"][0], run["rows"][-1]
    assert (first["budget"], first["coverage"], first["cost"]) == (1, 0.25, 8.0)
    assert (last["budget"], last["coverage"], last["cost"]) == (5, 0.75, 40.0)
    assert last["cost_stop_at_first_success"] == 26.0


def test_budget_table_and_markdown(tmp_path: Path) -> None:
    path = str(_ledger(tmp_path))
    code, out = invoke("budget", path)
    assert code == 0, out
    assert "budget replay of r1" in out
    assert re.search(r"^\s+5\s+75\.0% \(3/4\)\s+40\.00\s+26\.00\s+20\s+13$", out, re.M), out
    code, md = invoke("budget", path, "--format", "markdown")
    assert "| 5 | 75.0% (3/4) | 40.00 | 26.00 | 20 | 13 |" in md


def test_budget_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, out = invoke("budget", str(_ledger(tmp_path)), "--run", "nope")
    assert code == 2
    assert out.strip().splitlines() == [
        f"trialbook: error: --run 'nope' is not in {tmp_path / 'runs.jsonl'} (runs: 'r1')"
    ]
    bad = write_jsonl(tmp_path / "bad.jsonl", [base_row("A", 0, passed=True, k=1, cost=-1)])
    code, out = invoke("budget", str(bad))
    assert code == 2
    assert "cost" in out
    assert "coverage" not in out  # nothing printed from data that failed validation
    assert "Traceback" not in out


def test_score_tasks_flag_shows_the_per_task_table(tmp_path: Path) -> None:
    path = str(_ledger(tmp_path))
    _, plain = invoke("score", path)
    _, with_tasks = invoke("score", path, "--tasks")
    assert "tasks (4)" not in plain
    assert "tasks (4)" in with_tasks
    assert re.search(r"^C\s+0/5\s+fail\s+0\s+0$", with_tasks, re.M), with_tasks
    assert "failures: 15 of 20 attempts did not pass: failed 15" in " ".join(plain.split())


def test_the_headline_is_the_first_line_and_pass_hat_1_is_not_repeated(tmp_path: Path) -> None:
    _, out = invoke("score", str(_ledger(tmp_path)))
    first = out.splitlines()[0]
    assert first.startswith("r1: pass@1 25.0% (")
    assert "pass^5 0.0% (" in " ".join(out.split()[:20])
    assert "pass^1 " not in out.replace("pass^1 and", "")
    _, every = invoke("score", str(_ledger(tmp_path)), "--all-rows")
    assert re.search(r"^pass\^1\s", every, re.M)


def test_no_colour_when_piped_or_under_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    from trialbook.cli._console import console

    monkeypatch.setenv("NO_COLOR", "1")
    forced = console()
    assert forced.color_system is None  # even on a terminal that would take colour
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert console().color_system is not None  # a terminal that supports it gets colour


def test_piped_score_has_no_escape_codes(tmp_path: Path) -> None:
    _, out = invoke("score", str(_ledger(tmp_path)))  # CliRunner's output is not a terminal
    assert not ESC.search(out)


# ---------------------------------------------------------------- small things (issue 15)


def test_compare_help_names_the_schema_it_prints(tmp_path: Path) -> None:
    _, help_text = invoke("compare", "--help")
    a = write_jsonl(tmp_path / "a.jsonl", matrix_rows({"t": [1], "u": [0]}, run_id="a"))
    b = write_jsonl(tmp_path / "b.jsonl", matrix_rows({"t": [1], "u": [1]}, run_id="b"))
    _, out = invoke("compare", str(a), str(b), "--format", "json")
    schema = json.loads(out)["schema"]
    assert schema == "trialbook.compare/1"
    assert f"({schema})" in " ".join(help_text.split())
    assert "trialbook.score/1" not in help_text


def test_compare_with_a_missing_run_lists_the_runs_there(tmp_path: Path) -> None:
    rows = matrix_rows({"t": [1]}, run_id="r2") + matrix_rows({"t": [0]}, run_id="r3")
    path = write_jsonl(tmp_path / "runs.jsonl", rows)
    code, out = invoke("compare", f"{path}:r1", f"{path}:r2")
    assert code == 2
    assert out.strip() == (
        f"trialbook: error: {path}:r1: run 'r1' is not in {path} (runs: 'r2', 'r3')"
    )


def test_passk_clamped_to_100_percent_explains_no_difference() -> None:
    code, out = invoke("passk", "--n", "5", "--c", "7", "--k", "9", "--clamp")
    assert code == 0
    assert "pass@5 = 1 - 0/1 = 100.00%" in out
    assert "why they differ" not in out
    assert "the two agree here" in out
    _, differ = invoke("passk", "--n", "5", "--c", "2", "--k", "2")
    assert "why they differ" in differ  # 70.00% against 64.00%: the explanation stays


def test_score_json_writes_token_counts_as_integers(tmp_path: Path) -> None:
    _, out = invoke("score", str(_ledger(tmp_path)), "--format", "json")
    assert '"value": 629540,' in out  # 20 attempts x 31477 tokens in
    assert "629540.0" not in out
    cost = json.loads(out)["runs"][0]["cost"]
    assert cost["tokens_in"]["value"] == 629540
    assert isinstance(cost["tokens_in"]["value"], int)
    assert isinstance(cost["tokens_out"]["partial"], int)
    assert cost["total_cost"]["value"] == 40.0  # money stays a float
