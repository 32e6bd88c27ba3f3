"""The executors room: where attempts run. The local pool (``_executor``) and Ray, its driver side
(``_ray``, its connection and the cluster's CPUs in ``_ray_cluster``) and what runs inside a Ray
task on a node (``_ray_worker``).

It imports the sandbox and attempt rooms. Exports load lazily (Ray itself only when a
:class:`RayExecutor` is made).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness.executors._executor import Executor, LocalExecutor
    from trialbook.harness.executors._ray import RayExecutor

__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
]

_LAZY = {
    "Executor": "_executor",
    "LocalExecutor": "_executor",
    "RayExecutor": "_ray",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness.executors' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.executors.{module}"), name)
