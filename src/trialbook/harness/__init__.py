"""The harness: runs an agent on a frozen suite, k sandboxed attempts per task, one row per attempt.

The driver (``run_suite``) turns each attempt into a self-contained :class:`AttemptSpec`, hands it to
an :class:`Executor` that runs the worker (``run_attempt``) somewhere and returns its
:class:`AttemptResult`, and alone writes the row and the raw output (docs/harness.md, "Spec, worker
and driver").

Its rooms, each a package with its own ``__all__``, a lower one never importing a higher one:
``sandbox`` (the tiers and what they share) <- ``attempt`` (the spec, the worker and what judges it)
<- ``executors`` (local, Ray) <- ``run`` (options, pre-flight, plan, driver, the run's record);
docs/architecture.md draws them.

Exports load lazily, so that the run's watchdog (``python -m trialbook.harness.sandbox._watchdog``)
starts without importing the ledger store and numpy; Ray is imported only when a
:class:`RayExecutor` is made.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness.attempt import (
        AttemptResult,
        AttemptSpec,
        Budget,
        GraderCase,
        GraderCheck,
        grader_check,
        run_attempt,
    )
    from trialbook.harness.executors import Executor, LocalExecutor, RayExecutor
    from trialbook.harness.run import (
        ModelOptions,
        Project,
        RunOptions,
        RunProgress,
        RunResult,
        RunSummary,
        Tally,
        check_agents,
        list_runs,
        load_project,
        run_suite,
    )
    from trialbook.harness.sandbox import Tier, bwrap_problem, resolve_tier

__all__ = [
    "AttemptResult",
    "AttemptSpec",
    "Budget",
    "Executor",
    "GraderCase",
    "GraderCheck",
    "LocalExecutor",
    "ModelOptions",
    "Project",
    "RayExecutor",
    "RunOptions",
    "RunProgress",
    "RunResult",
    "RunSummary",
    "Tally",
    "Tier",
    "bwrap_problem",
    "check_agents",
    "grader_check",
    "list_runs",
    "load_project",
    "resolve_tier",
    "run_attempt",
    "run_suite",
]

_LAZY = {
    "run_attempt": "attempt",
    "check_agents": "run",
    "RunProgress": "run",
    "Tally": "run",
    "RunSummary": "run",
    "list_runs": "run",
    "Project": "run",
    "load_project": "run",
    "Executor": "executors",
    "LocalExecutor": "executors",
    "RayExecutor": "executors",
    "GraderCase": "attempt",
    "GraderCheck": "attempt",
    "grader_check": "attempt",
    "ModelOptions": "run",
    "RunOptions": "run",
    "RunResult": "run",
    "run_suite": "run",
    "Tier": "sandbox",
    "bwrap_problem": "sandbox",
    "resolve_tier": "sandbox",
    "AttemptResult": "attempt",
    "AttemptSpec": "attempt",
    "Budget": "attempt",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.{module}"), name)
