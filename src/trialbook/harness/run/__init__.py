"""The run room: ``run_suite`` and what a run is made of.

What a run takes and did (``_options``), the project file that keeps those options (``_project``),
the options checked and, for a resume, completed from the run's record (``_resolve``), the tasks it
attempts (``_select``), its pre-flight (``_preflight``, and ``check_agents`` in ``_check``), its
record, pinned before the first attempt and checked on resume (``_open``), its plan (``_plan``), the
run's model gateway (``_model``), the driver that alone writes the ledger (``_driver``) and its pace
(``_schedule``), ``run_suite`` itself (``_run``) and the runs of a ledger (``_runs``).

It imports the sandbox, attempt and executors rooms. Exports load lazily.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness.run._check import check_agents
    from trialbook.harness.run._driver import RunProgress, Tally
    from trialbook.harness.run._model import ModelOptions
    from trialbook.harness.run._project import Project, load_project
    from trialbook.harness.run._run import RunOptions, RunResult, run_suite
    from trialbook.harness.run._runs import RunSummary, list_runs

__all__ = [
    "ModelOptions",
    "Project",
    "RunOptions",
    "RunProgress",
    "RunResult",
    "RunSummary",
    "Tally",
    "check_agents",
    "list_runs",
    "load_project",
    "run_suite",
]

_LAZY = {
    "check_agents": "_check",
    "RunProgress": "_driver",
    "Tally": "_driver",
    "ModelOptions": "_model",
    "Project": "_project",
    "load_project": "_project",
    "RunOptions": "_run",
    "RunResult": "_run",
    "run_suite": "_run",
    "RunSummary": "_runs",
    "list_runs": "_runs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness.run' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.run.{module}"), name)
