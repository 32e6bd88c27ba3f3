"""Analysis: a validated Ledger (or a ledger path) plus one options object in, frozen results out.

Each module is one question asked of a ledger: ``_score`` (the scorecard of each run), ``_compare``
(is the candidate better than the baseline, task by task), ``_plan`` (how many tasks and attempts a
design needs). The numbers come from :mod:`trialbook.stats` (pure); the policy (quarantine, dropped
infrastructure errors, weights, which runs) lives here; rendering lives in :mod:`trialbook.report`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from trialbook.analysis._options import INTERVAL_METHODS, IntervalMethod, IntervalOptions

if TYPE_CHECKING:
    from trialbook.analysis._compare import (
        CompareOptions,
        Comparison,
        RunSide,
        StratumDifference,
        compare_runs,
    )
    from trialbook.analysis._plan import plan_from_options
    from trialbook.analysis._results import (
        AcrossRuns,
        MetricEstimate,
        RunScore,
        ScoreReport,
        StratumScore,
        TaskScore,
    )
    from trialbook.analysis._score import ScoreOptions, score_file, score_ledger
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
    "CompareOptions",
    "Comparison",
    "IntervalMethod",
    "IntervalOptions",
    "MetricEstimate",
    "RunScore",
    "RunSide",
    "ScoreOptions",
    "ScoreReport",
    "SequenceReplay",
    "SequentialComparison",
    "SequentialOptions",
    "StratumDifference",
    "StratumScore",
    "TaskScore",
    "compare_runs",
    "plan_from_options",
    "run_task_rates",
    "score_file",
    "score_ledger",
    "sequential_compare",
    "task_differences",
]

# Loaded on first use (PEP 562): the command line reads IntervalOptions' defaults for --help
# without paying for numpy and scipy.
_LAZY = {
    **dict.fromkeys(
        ("CompareOptions", "Comparison", "RunSide", "StratumDifference", "compare_runs"), "_compare"
    ),
    "plan_from_options": "_plan",
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
    **dict.fromkeys(("ScoreOptions", "score_file", "score_ledger"), "_score"),
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
