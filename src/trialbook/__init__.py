"""trialbook: agent scores you can defend.

The public API. Statistics live in :mod:`trialbook.stats` (pure), ledger files in
:mod:`trialbook.ledger`, rendering in :mod:`trialbook.report`. Names are loaded on first use (PEP 562)
so that ``trialbook --help`` does not pay for numpy, scipy and pyarrow.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from trialbook.errors import (
    ArgumentError,
    InsufficientAttemptsError,
    LedgerError,
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
]

_LAZY = {
    "CompareOptions": "trialbook.analysis",
    "Comparison": "trialbook.analysis",
    "compare_runs": "trialbook.analysis",
    "plan_design": "trialbook.stats",
    "Ledger": "trialbook.ledger",
    "read_ledger": "trialbook.ledger",
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
