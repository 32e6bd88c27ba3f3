"""The harness: runs an agent on a frozen suite, k sandboxed attempts per task, one row per attempt.

The driver (``run_suite``) turns each attempt into a self-contained :class:`AttemptSpec`, hands it to
an :class:`Executor` that runs the worker (``run_attempt``) somewhere and returns its
:class:`AttemptResult`, and alone writes the row and the raw output (docs/harness.md, "Spec, worker
and driver").

Exports load lazily, so that the run's watchdog (``python -m trialbook.harness._watchdog``) starts
without importing the ledger store and numpy; Ray is imported only when a :class:`RayExecutor` is
made.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness._attempt import run_attempt
    from trialbook.harness._check import check_agents
    from trialbook.harness._driver import RunProgress, Tally
    from trialbook.harness._executor import Executor, LocalExecutor
    from trialbook.harness._gradercheck import GraderCase, GraderCheck, grader_check
    from trialbook.harness._model import ModelOptions
    from trialbook.harness._project import Project, load_project
    from trialbook.harness._ray import RayExecutor
    from trialbook.harness._run import RunOptions, RunResult, run_suite
    from trialbook.harness._runs import RunSummary, list_runs
    from trialbook.harness._sandbox import Tier, bwrap_problem, resolve_tier
    from trialbook.harness._spec import AttemptResult, AttemptSpec, Budget

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
    "run_attempt": "_attempt",
    "check_agents": "_check",
    "RunProgress": "_driver",
    "Tally": "_driver",
    "RunSummary": "_runs",
    "list_runs": "_runs",
    "Project": "_project",
    "load_project": "_project",
    "Executor": "_executor",
    "LocalExecutor": "_executor",
    "RayExecutor": "_ray",
    "GraderCase": "_gradercheck",
    "GraderCheck": "_gradercheck",
    "grader_check": "_gradercheck",
    "ModelOptions": "_model",
    "RunOptions": "_run",
    "RunResult": "_run",
    "run_suite": "_run",
    "Tier": "_sandbox",
    "bwrap_problem": "_sandbox",
    "resolve_tier": "_sandbox",
    "AttemptResult": "_spec",
    "AttemptSpec": "_spec",
    "Budget": "_spec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.{module}"), name)
