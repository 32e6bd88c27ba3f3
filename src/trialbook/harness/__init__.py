"""The harness: runs an agent on a frozen suite, k sandboxed attempts per task, one row per attempt.

Exports load lazily, so that the run's watchdog (``python -m trialbook.harness._watchdog``) starts
without importing the ledger store and numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness._gradercheck import GraderCase, GraderCheck, grader_check
    from trialbook.harness._run import RunOptions, RunProgress, RunResult, run_suite
    from trialbook.harness._sandbox import Tier, bwrap_problem, resolve_tier

__all__ = [
    "GraderCase",
    "GraderCheck",
    "RunOptions",
    "RunProgress",
    "RunResult",
    "Tier",
    "bwrap_problem",
    "grader_check",
    "resolve_tier",
    "run_suite",
]

_LAZY = {
    "GraderCase": "_gradercheck",
    "GraderCheck": "_gradercheck",
    "grader_check": "_gradercheck",
    "RunOptions": "_run",
    "RunProgress": "_run",
    "RunResult": "_run",
    "run_suite": "_run",
    "Tier": "_sandbox",
    "bwrap_problem": "_sandbox",
    "resolve_tier": "_sandbox",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.{module}"), name)
