"""Analysis: a validated Ledger (or a ledger path) plus one options object in, frozen results out.

Each module is one question asked of a ledger: ``_score`` (the scorecard of each run), ``_compare``
(is the candidate better than the baseline, task by task), ``_board`` (many systems ranked with
joint intervals, on the cost-accuracy frontier), ``_plan`` (how many tasks and attempts a
design needs), ``_budget`` (coverage and cost per per-task budget), ``_selection`` (pool coverage
against what a selector delivered), ``_checks`` (the grader's named checks: per-check rates and how
they moved), ``_faults`` (fault-injection and regression-set cases, in their
own table), ``_report`` (all of it for the HTML report: scorecards, outcome grids, comparisons).
The numbers come from :mod:`trialbook.stats` (pure); the policy (quarantine, dropped
infrastructure errors, weights, which runs) lives here; rendering lives in :mod:`trialbook.report`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from trialbook.analysis._options import INTERVAL_METHODS, IntervalMethod, IntervalOptions

if TYPE_CHECKING:
    from trialbook.analysis._board import board_runs
    from trialbook.analysis._board_results import (
        Board,
        BoardMcNemar,
        BoardOptions,
        BoardPair,
        BoardSystem,
    )
    from trialbook.analysis._budget import (
        BudgetReport,
        BudgetRow,
        RunBudget,
        budget_file,
        budget_replay,
    )
    from trialbook.analysis._checks import CheckMove, CheckRate
    from trialbook.analysis._compare import (
        CompareOptions,
        Comparison,
        RunSide,
        StratumDifference,
        TaskDifference,
        compare_runs,
    )
    from trialbook.analysis._failures import Failures
    from trialbook.analysis._faults import FaultRow, FaultTable
    from trialbook.analysis._plan import plan_from_options
    from trialbook.analysis._report import (
        AttemptOutcome,
        PairedRuns,
        Report,
        ReportOptions,
        RunReport,
        TaskOutcomes,
        build_report,
    )
    from trialbook.analysis._results import (
        AcrossRuns,
        MetricEstimate,
        RunScore,
        ScoreReport,
        StratumScore,
        TaskScore,
    )
    from trialbook.analysis._score import ScoreOptions, score_file, score_ledger, score_tallies
    from trialbook.analysis._selection import SelectionSummary
    from trialbook.analysis._sequential import (
        STOP_REASONS,
        SequenceReplay,
        SequentialComparison,
        SequentialOptions,
        run_task_rates,
        sequential_compare,
        task_differences,
    )

__all__ = [
    "INTERVAL_METHODS",
    "STOP_REASONS",
    "AcrossRuns",
    "AttemptOutcome",
    "Board",
    "BoardMcNemar",
    "BoardOptions",
    "BoardPair",
    "BoardSystem",
    "BudgetReport",
    "BudgetRow",
    "CheckMove",
    "CheckRate",
    "CompareOptions",
    "Comparison",
    "Failures",
    "FaultRow",
    "FaultTable",
    "IntervalMethod",
    "IntervalOptions",
    "MetricEstimate",
    "PairedRuns",
    "Report",
    "ReportOptions",
    "RunBudget",
    "RunReport",
    "RunScore",
    "RunSide",
    "ScoreOptions",
    "ScoreReport",
    "SelectionSummary",
    "SequenceReplay",
    "SequentialComparison",
    "SequentialOptions",
    "StratumDifference",
    "StratumScore",
    "TaskDifference",
    "TaskOutcomes",
    "TaskScore",
    "board_runs",
    "budget_file",
    "budget_replay",
    "build_report",
    "compare_runs",
    "plan_from_options",
    "run_task_rates",
    "score_file",
    "score_ledger",
    "score_tallies",
    "sequential_compare",
    "task_differences",
]

# Loaded on first use (PEP 562): the command line reads IntervalOptions' defaults for --help
# without paying for numpy and scipy.
_LAZY = {
    **dict.fromkeys(
        ("Board", "BoardMcNemar", "BoardOptions", "BoardPair", "BoardSystem"), "_board_results"
    ),
    "board_runs": "_board",
    **dict.fromkeys(
        ("BudgetReport", "BudgetRow", "RunBudget", "budget_file", "budget_replay"), "_budget"
    ),
    **dict.fromkeys(("FaultRow", "FaultTable"), "_faults"),
    **dict.fromkeys(("CheckMove", "CheckRate"), "_checks"),
    "SelectionSummary": "_selection",
    "Failures": "_failures",
    **dict.fromkeys(
        (
            "CompareOptions",
            "Comparison",
            "RunSide",
            "StratumDifference",
            "TaskDifference",
            "compare_runs",
        ),
        "_compare",
    ),
    "plan_from_options": "_plan",
    **dict.fromkeys(
        (
            "AttemptOutcome",
            "PairedRuns",
            "Report",
            "ReportOptions",
            "RunReport",
            "TaskOutcomes",
            "build_report",
        ),
        "_report",
    ),
    **dict.fromkeys(
        (
            "STOP_REASONS",
            "SequenceReplay",
            "SequentialComparison",
            "SequentialOptions",
            "run_task_rates",
            "sequential_compare",
            "task_differences",
        ),
        "_sequential",
    ),
    **dict.fromkeys(
        ("AcrossRuns", "MetricEstimate", "RunScore", "ScoreReport", "StratumScore", "TaskScore"),
        "_results",
    ),
    **dict.fromkeys(("ScoreOptions", "score_file", "score_ledger", "score_tallies"), "_score"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.analysis' has no attribute {name!r}")
    value = getattr(import_module(f"trialbook.analysis.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
