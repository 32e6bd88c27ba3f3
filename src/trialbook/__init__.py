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
    from trialbook.comparing import CompareOptions, Comparison, compare_runs
    from trialbook.ledger import Ledger, read_ledger
    from trialbook.scoring import RunScore, ScoreOptions, ScoreReport, score_file, score_ledger
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
    "CompareOptions": "trialbook.comparing",
    "Comparison": "trialbook.comparing",
    "compare_runs": "trialbook.comparing",
    "plan_design": "trialbook.stats",
    "Ledger": "trialbook.ledger",
    "read_ledger": "trialbook.ledger",
    "RunScore": "trialbook.scoring",
    "ScoreOptions": "trialbook.scoring",
    "ScoreReport": "trialbook.scoring",
    "score_file": "trialbook.scoring",
    "score_ledger": "trialbook.scoring",
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
