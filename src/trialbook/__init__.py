"""trialbook: agent scores you can defend.

The public API: score and compare ledgers (:mod:`trialbook.analysis`), read and store them
(:mod:`trialbook.ledger`), load and freeze suites (:mod:`trialbook.suite`), run them
(:mod:`trialbook.harness`); pure statistics in :mod:`trialbook.stats`. docs/architecture.md lists
every package's public names. Names are loaded on first use (PEP 562)
so that ``trialbook --help`` does not pay for numpy, scipy and pyarrow.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from trialbook.errors import (
    ArgumentError,
    InsufficientAttemptsError,
    LedgerError,
    SuiteError,
    TrialbookError,
)

if TYPE_CHECKING:
    from trialbook.analysis import (
        CompareOptions,
        Comparison,
        RunScore,
        ScoreOptions,
        ScoreReport,
        compare_runs,
        score_file,
        score_ledger,
    )
    from trialbook.ledger import Ledger, read_ledger
    from trialbook.stats import pass_at_k, pass_hat_k, plan_design, task_bootstrap

__all__ = [
    "ArgumentError",
    "CompareOptions",
    "Comparison",
    "InsufficientAttemptsError",
    "IntervalOptions",
    "Ledger",
    "LedgerError",
    "LedgerStore",
    "RunOptions",
    "RunResult",
    "RunScore",
    "ScoreOptions",
    "ScoreReport",
    "SuiteError",
    "TrialbookError",
    "compare_runs",
    "freeze",
    "load_suite",
    "pass_at_k",
    "pass_hat_k",
    "plan_design",
    "plan_from_options",
    "read_ledger",
    "run_suite",
    "score_file",
    "score_ledger",
    "task_bootstrap",
    "write_ledger",
]

_LAZY = {
    "CompareOptions": "trialbook.analysis",
    "Comparison": "trialbook.analysis",
    "compare_runs": "trialbook.analysis",
    "plan_design": "trialbook.stats",
    "IntervalOptions": "trialbook.analysis",
    "plan_from_options": "trialbook.analysis",
    "Ledger": "trialbook.ledger",
    "LedgerStore": "trialbook.ledger",
    "read_ledger": "trialbook.ledger",
    "write_ledger": "trialbook.ledger",
    "RunOptions": "trialbook.harness",
    "RunResult": "trialbook.harness",
    "run_suite": "trialbook.harness",
    "freeze": "trialbook.suite",
    "load_suite": "trialbook.suite",
    "RunScore": "trialbook.analysis",
    "ScoreOptions": "trialbook.analysis",
    "ScoreReport": "trialbook.analysis",
    "score_file": "trialbook.analysis",
    "score_ledger": "trialbook.analysis",
    "pass_at_k": "trialbook.stats",
    "pass_hat_k": "trialbook.stats",
    "task_bootstrap": "trialbook.stats",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
