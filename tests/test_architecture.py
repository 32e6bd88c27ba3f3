"""The house rules that keep the code readable: public API, one-way data flow, docs for every command."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click

import trialbook
from trialbook import errors, ledger, report, stats
from trialbook.cli import main

SRC = Path(trialbook.__file__).parent
ROOT = SRC.parents[1]


def test_public_api_is_exactly_the_intended_names() -> None:
    assert set(trialbook.__all__) == {
        "ArgumentError",
        "CompareOptions",
        "Comparison",
        "InsufficientAttemptsError",
        "Ledger",
        "LedgerError",
        "RunScore",
        "ScoreOptions",
        "ScoreReport",
        "TrialbookError",
        "compare_runs",
        "pass_at_k",
        "pass_hat_k",
        "plan_design",
        "read_ledger",
        "score_file",
        "score_ledger",
        "task_bootstrap",
    }
    for module in (trialbook, stats, ledger, report, errors):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"


def test_errors_share_one_root_and_the_matching_builtin() -> None:
    for cls in (errors.LedgerError, errors.InsufficientAttemptsError, errors.ArgumentError):
        assert issubclass(cls, errors.TrialbookError)
        assert issubclass(cls, ValueError)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_data_flows_one_way() -> None:
    # stats is pure (no ledger, report, cli, terminal or files); ledger knows nothing of stats or report
    rules = {
        "stats": (
            "trialbook.ledger",
            "trialbook.report",
            "trialbook.cli",
            "trialbook.analysis",
            "rich",
            "click",
            "pyarrow",
        ),
        "ledger": (
            "trialbook.suite",
            "trialbook.harness",
            "trialbook.stats",
            "trialbook.report",
            "trialbook.cli",
            "trialbook.analysis",
            "rich",
            "click",
        ),
        "report": ("trialbook.cli", "trialbook.ledger", "click"),
        # suites are files and hashes: they know nothing of running, storing or scoring
        "suite": (
            "trialbook.harness",
            "trialbook.ledger",
            "trialbook.stats",
            "trialbook.report",
            "trialbook.cli",
            "rich",
            "click",
        ),
        # the harness writes rows; it never scores, renders or talks to the terminal
        "harness": (
            "trialbook.stats",
            "trialbook.analysis",
            "trialbook.report",
            "trialbook.cli",
            "rich",
            "click",
        ),
    }
    for package, banned in rules.items():
        for path in (SRC / package).rglob("*.py"):
            bad = {m for m in _imports(path) if m.startswith(banned)}
            assert not bad, f"{path.relative_to(SRC)} imports {sorted(bad)}"


def test_help_does_not_import_the_numerical_stack() -> None:
    code = (
        "import sys; from trialbook.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pyarrow', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_every_command_has_help_and_a_doc_entry() -> None:
    docs = (ROOT / "docs" / "cli.md").read_text()
    assert isinstance(main, click.Group)
    for name, command in main.commands.items():
        assert command.help, name
        assert f"## trialbook {name}" in docs, f"docs/cli.md lacks a section for {name}"


def test_ledger_doc_lists_every_field() -> None:
    docs = (ROOT / "docs" / "ledger.md").read_text()
    for f in ledger.FIELDS:
        assert f"| `{f.name}` |" in docs, f.name
