"""The harness: runs an agent on a frozen suite, k sandboxed attempts per task, one row per attempt.

Exports load lazily, so that the run's watchdog (``python -m trialbook.harness._watchdog``) starts
without importing the ledger store and numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness._run import RunOptions, RunProgress, RunResult, run_suite

__all__ = ["RunOptions", "RunProgress", "RunResult", "run_suite"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from trialbook.harness import _run

        return getattr(_run, name)
    raise AttributeError(f"module 'trialbook.harness' has no attribute {name!r}")
