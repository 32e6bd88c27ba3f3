"""trialbook: agent scores you can defend.

The public API. Statistics live in :mod:`trialbook.stats` (pure), ledger files in
:mod:`trialbook.ledger`, rendering in :mod:`trialbook.report`.
"""

from trialbook.errors import (
    ArgumentError,
    InsufficientAttemptsError,
    LedgerError,
    TrialbookError,
)
from trialbook.ledger import Ledger, read_ledger
from trialbook.scoring import RunScore, ScoreOptions, ScoreReport, score_file, score_ledger
from trialbook.stats import pass_at_k, pass_hat_k, task_bootstrap

__all__ = [
    "ArgumentError",
    "InsufficientAttemptsError",
    "Ledger",
    "LedgerError",
    "RunScore",
    "ScoreOptions",
    "ScoreReport",
    "TrialbookError",
    "pass_at_k",
    "pass_hat_k",
    "read_ledger",
    "score_file",
    "score_ledger",
    "task_bootstrap",
]
