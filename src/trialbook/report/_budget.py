"""Render a BudgetReport: the ``trialbook.budget/1`` JSON, a terminal table, markdown.

Renderers compute no statistics: every number comes from the report object.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from trialbook.analysis import BudgetReport, RunBudget
from trialbook.report._json import json_safe
from trialbook.report._rich import Phrases
from trialbook.report._rich import table as titled_table
from trialbook.report._views import md_text

__all__ = ["BUDGET_SCHEMA", "budget_markdown", "budget_table", "budget_to_dict"]

BUDGET_SCHEMA = "trialbook.budget/1"


def budget_to_dict(report: BudgetReport) -> dict[str, Any]:
    """The ``trialbook.budget/1`` document (a cost not measured is null, never 0)."""
    return {
        "schema": BUDGET_SCHEMA,
        "source": report.source,
        "runs": [
            json_safe(
                {
                    "run_id": run.run_id,
                    "system": run.system,
                    "tasks": run.tasks,
                    "attempts": run.attempts,
                    "k": run.k,
                    "cost_known_attempts": run.cost_known_attempts,
                    "rows": [
                        {
                            "budget": r.budget,
                            "coverage": r.coverage,
                            "cost": r.cost,
                            "cost_stop_at_first_success": r.cost_stop_at_first_success,
                            "covered": r.covered,
                            "attempts": r.attempts,
                            "attempts_stop_at_first_success": r.attempts_stop_at_first_success,
                        }
                        for r in run.rows
                    ],
                    "notes": list(run.notes),
                }
            )
            for run in report.runs
        ],
    }


def _cost(x: float | None) -> str:
    return "not measured" if x is None else f"{x:,.2f}"


def _title(run: RunBudget) -> str:
    who = f" · {run.system}" if run.system else ""
    return f"budget replay of {run.run_id}{who} · {run.tasks} tasks, {run.attempts} attempts"


_EXPLAIN = (
    "coverage: tasks with a pass within their first b attempts (attempt_index order); cost and "
    "attempts: all b attempts of every task; stop: each task stops at its first pass"
)


def _cells(run: RunBudget) -> list[tuple[str, ...]]:
    return [
        (
            str(r.budget),
            f"{r.coverage:.1%} ({r.covered}/{run.tasks})",
            _cost(r.cost),
            _cost(r.cost_stop_at_first_success),
            str(r.attempts),
            str(r.attempts_stop_at_first_success),
        )
        for r in run.rows
    ]


_HEAD = ("budget", "coverage", "cost", "cost, stop", "attempts", "attempts, stop")


def budget_table(report: BudgetReport) -> Group:
    """A rich renderable for the terminal: one table per run."""
    parts: list[Any] = []
    for run in report.runs:
        table = titled_table(_title(run))
        for head in _HEAD:
            table.add_column(head, justify="right", no_wrap=True)
        for cells in _cells(run):
            table.add_row(*cells)
        parts += [table, Phrases(_EXPLAIN, style="dim")]
        parts += [Phrases(f"note: {n}", style="yellow") for n in run.notes]
        parts.append(Text(""))
    return Group(*parts)


def budget_markdown(report: BudgetReport) -> str:
    """Markdown fit for a pull-request comment or a job summary."""
    out: list[str] = []
    for run in report.runs:
        out += [f"### {md_text(_title(run))}", ""]
        out += ["| " + " | ".join(_HEAD) + " |", "|" + "---:|" * len(_HEAD)]
        out += ["| " + " | ".join(c) + " |" for c in _cells(run)]
        out += ["", f"_{_EXPLAIN}._"]
        out += [f"- note: {md_text(n)}" for n in run.notes]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
