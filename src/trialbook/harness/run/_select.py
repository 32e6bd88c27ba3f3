"""Which tasks a run attempts: the suite's, narrowed by a named subset, ``--task`` globs and
``--limit``; quarantined tasks are never run."""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from trialbook.errors import ArgumentError
from trialbook.suite import Lock, Suite, Task

__all__ = ["Selection", "select_tasks"]


@dataclass(frozen=True)
class Selection:
    """The tasks to run and how they were chosen."""

    tasks: tuple[Task, ...]
    """In suite order, quarantined ones left out."""
    quarantined: tuple[str, ...]
    """Selected tasks that are quarantined (oracle leak): not run."""
    description: str | None
    """``subset smoke, --task 'repair-*', --limit 3``; None for the whole suite."""


def select_tasks(
    suite: Suite,
    lock: Lock,
    *,
    subset: str | None = None,
    patterns: Sequence[str] = (),
    limit: int | None = None,
    ids: Sequence[str] | None = None,
) -> Selection:
    """The tasks of ``subset`` (all without one) whose ids match any of ``patterns`` (shell globs;
    all without any), the first ``limit`` of them. ``ids``: exactly these tasks (a resumed run's)."""
    tasks = list(suite.tasks)
    if ids is not None:
        wanted = set(ids)
        return _finish(lock, [t for t in tasks if t.id in wanted], None, None)
    said: list[str] = []
    if subset is not None:
        if subset not in suite.subsets:
            known = ", ".join(sorted(suite.subsets)) or "none"
            raise ArgumentError(
                f"the suite has no subset {subset!r} (subsets: {known})", argument="subset"
            )
        members = set(suite.subsets[subset])
        tasks = [t for t in tasks if t.id in members]
        said.append(f"subset {subset}")
    if patterns:
        for pattern in patterns:
            if not any(fnmatch.fnmatchcase(t.id, pattern) for t in tasks):
                known = ", ".join(t.id for t in tasks[:8]) + (", ..." if len(tasks) > 8 else "")
                raise ArgumentError(
                    f"{pattern!r} matches no task{' of the subset' if subset else ''} "
                    f"(tasks: {known})",
                    argument="tasks",
                )
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(t.id, p) for p in patterns)]
        said += [f"--task {shlex.quote(p)}" for p in patterns]
    if limit is not None:
        if limit < 1:
            raise ArgumentError(f"limit must be >= 1, got {limit}", argument="limit")
        said.append(f"--limit {limit}")
    return _finish(lock, tasks, limit, ", ".join(said) or None)


def _finish(lock: Lock, tasks: list[Task], limit: int | None, description: str | None) -> Selection:
    quarantined = tuple(t.id for t in tasks if t.id in lock.quarantined)
    runnable = [t for t in tasks if t.id not in lock.quarantined]
    if limit is not None:
        runnable = runnable[:limit]
    return Selection(tuple(runnable), quarantined, description)
