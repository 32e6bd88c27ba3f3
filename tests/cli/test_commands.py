"""The command layer: one module per command, the shared --format factory, help that tells the
truth about each command's JSON, flags named in library errors, and the entry points."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from trialbook import report
from trialbook.cli import main


def _help(*command: str) -> str:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def test_compare_help_names_the_json_it_prints() -> None:
    text = _help("compare")
    assert "trialbook.compare/1" in text
    assert "trialbook.score/1" not in text
    assert "trialbook.score/1" in _help("score")


def _format(*command: str) -> click.Option:
    cmd: click.Command = main
    for name in command:
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[name]
    (option,) = [p for p in cmd.params if p.name == "fmt"]
    assert isinstance(option, click.Option)
    return option


@pytest.mark.parametrize(
    ("command", "choices", "default"),
    [
        (("score",), ["table", "json", "markdown", "html"], "table"),
        (("compare",), ["table", "json", "markdown", "html"], "table"),
        (("board",), ["table", "json", "markdown", "html"], "table"),
        (("plan",), ["text", "json"], "text"),
        (("passk",), ["text", "json"], "text"),
        (("suite", "freeze"), ["table", "json"], "table"),
        (("suite", "check"), ["table", "json"], "table"),
        (("grader-check",), ["table", "json"], "table"),
        (("export",), ["jsonl", "csv", "parquet"], None),
    ],
)
def test_every_format_option_keeps_its_choices(
    command: tuple[str, ...], choices: list[str], default: str | None
) -> None:
    option = _format(*command)
    assert isinstance(option.type, click.Choice)
    assert list(option.type.choices) == choices
    if default is None:  # required, with no default at all (click 8.5 marks that with a sentinel)
        assert option.required
        assert option.default is None or type(option.default).__name__ == "Sentinel"
    else:
        assert option.default == default
    assert option.required is (default is None)


def test_a_library_argument_error_names_the_flag(tmp_path: Path) -> None:
    ledger = tmp_path / "l.jsonl"
    ledger.write_text("")
    out = CliRunner().invoke(main, ["score", str(ledger), "--confidence", "1.5"])
    assert out.exit_code == 2
    assert "trialbook: error: --confidence" in out.output
    assert "Traceback" not in out.output


def test_run_takes_a_named_subset(tmp_path: Path) -> None:
    assert "--subset NAME" in _help("run")
    assert "Run only the tasks of this named subset of the suite (e.g. smoke)." in _help("run")
    assert "--tier" not in _help("run")
    tasks = {name: {"grader": "true"} for name in ("a", "b", "c")}
    suite = make_suite(tmp_path / "s", tasks, k=1, extra='[subsets]\nsmoke = ["b"]\n')
    ledger = tmp_path / "out" / "l.db"
    args = ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", "process"]
    out = CliRunner().invoke(main, [*args, "--subset", "smoke"])
    assert out.exit_code == 0, out.output
    exported = CliRunner().invoke(main, ["export", str(ledger), "--format", "jsonl"])
    assert [json.loads(line)["task_id"] for line in exported.output.splitlines()] == ["b"]


def test_a_required_format_is_required(tmp_path: Path) -> None:
    # export's --format has no default (a ledger out must say in what); click 8.5 took the
    # explicit default=None for a value given, and export failed later on "format None"
    ledger = tmp_path / "l.jsonl"
    row = {"task_id": "a", "attempt_index": 0, "k_budget": 1, "timeout_s": 1.0, "elapsed_s": 0.5,
           "passed": True, "timed_out": False, "helper_calls": 0, "oracle_leak": False}  # fmt: skip
    ledger.write_text(json.dumps(row) + "\n")
    out = CliRunner().invoke(main, ["export", str(ledger)])
    assert out.exit_code == 2
    assert "Missing option '--format'" in out.output
    assert "None" not in out.output


def test_passk_json_keeps_counts_past_64_bits() -> None:
    out = CliRunner().invoke(
        main, ["passk", "--n", "100", "--c", "50", "--k", "50", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["schema"] == "trialbook.passk/1"
    assert doc["C(n,k)"] == 100891344545564193334812497256
    assert doc["C(c,k)"] == 1


def test_passk_text_is_rendered_by_report() -> None:
    from trialbook.stats import pass_k_steps

    out = CliRunner().invoke(main, ["passk", "--n", "10", "--c", "2", "--k", "3"])
    assert out.output == report.passk_text(pass_k_steps(10, 2, 3)) + "\n"


@pytest.mark.parametrize("module", ["trialbook", "trialbook.cli"])
def test_python_dash_m_runs_the_command_line(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Commands:" in done.stdout
    assert "grader-check" in done.stdout


def test_the_command_line_has_exactly_the_documented_commands() -> None:
    assert set(main.commands) == {
        "score",
        "budget",
        "report",
        "compare",
        "board",
        "plan",
        "passk",
        "suite",
        "grader-check",
        "run",
        "runs",
        "race",
        "import",
        "export",
        "demo",
    }


def test_run_with_a_pass_env_variable_not_set_is_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {"grader": "true"}}, k=1)
    ledger = tmp_path / "l.db"
    result = CliRunner().invoke(
        main,
        ["run", str(suite), "--agent", "true", "--ledger", str(ledger), "--sandbox", "process",
         "--pass-env", "TRIALBOOK_TEST_SURELY_UNSET"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "--pass-env: not set in this environment: TRIALBOOK_TEST_SURELY_UNSET" in line
    assert not ledger.exists()


def test_runs_help_says_what_the_model_gateway_does() -> None:
    text = "".join(_help("run").split())  # wrapped at any width, compared without the spaces

    def said(phrase: str) -> bool:
        return "".join(phrase.split()) in text

    # a budget refuses the next call once the attempt has used it all: at the limit, not past it
    assert said("once an attempt has used this many tokens or more, its next model call is refused")
    assert said("once an attempt's calls have cost this much or more, its next model call is")
    # through the gateway, a row's model_version is the model that answered, not the option's
    assert said("a row records the model the upstream answered instead")
    # where the tier is chosen: what the process tier cannot do, and what the gateway then needs
    assert said(
        "process: own session + rlimits only, and it cannot close the network (the model gateway "
        "then needs --accept-open-network)"
    )
