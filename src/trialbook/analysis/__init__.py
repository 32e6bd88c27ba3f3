"""Analysis: a validated Ledger (or a ledger path) plus one options object in, frozen results out.

Each module is one question asked of a ledger: ``_score`` (the scorecard of each run), ``_compare``
(is the candidate better than the baseline, task by task), ``_plan`` (how many tasks and attempts a
design needs). The numbers come from :mod:`trialbook.stats` (pure); the policy (quarantine, dropped
infrastructure errors, weights, which runs) lives here; rendering lives in :mod:`trialbook.report`.
"""

from trialbook.analysis._compare import (
    CompareOptions,
    Comparison,
    RunSide,
    StratumDifference,
    compare_runs,
)
from trialbook.analysis._plan import plan_from_options
from trialbook.analysis._score import (
    AcrossRuns,
    MetricEstimate,
    RunScore,
    ScoreOptions,
    ScoreReport,
    StratumScore,
    TaskScore,
    score_file,
    score_ledger,
)

__all__ = [
    "AcrossRuns",
    "CompareOptions",
    "Comparison",
    "MetricEstimate",
    "RunScore",
    "RunSide",
    "ScoreOptions",
    "ScoreReport",
    "StratumDifference",
    "StratumScore",
    "TaskScore",
    "compare_runs",
    "plan_from_options",
    "score_file",
    "score_ledger",
]
