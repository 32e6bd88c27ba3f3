"""The driver's two rules of pace: which queued attempts of a repair run may start (one round of a
task at a time), and when the first attempts' errors stop the run (every further attempt would
fail the same way)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["FirstErrors", "next_rounds"]

_Item = TypeVar("_Item")


def next_rounds(
    queue: deque[_Item], busy: set[str], room: int, task_of: Callable[[_Item], str]
) -> list[_Item]:
    """Take up to ``room`` items off ``queue``: the first queued one of each task not in ``busy``
    (the tasks with a round running), the others left queued in their order."""
    busy = set(busy)
    taken: list[_Item] = []
    for item in list(queue):
        if len(taken) >= room:
            break
        task = task_of(item)
        if task not in busy:
            busy.add(task)
            taken.append(item)
    chosen = {id(item) for item in taken}
    rest = [item for item in queue if id(item) not in chosen]
    queue.clear()
    queue.extend(rest)
    return taken


class FirstErrors:
    """The errors of a run's first ``n`` finished attempts (``n`` 0: none is looked at)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._errors: list[str | None] = []
        self._cause = ""

    def see(self, row: Mapping[str, object]) -> str | None:
        """Look at one more finished row. Returns the cause (the first of the errors) once all
        ``n`` first attempts ended in the same kind of harness-side error, else None."""
        if not self.n or len(self._errors) >= self.n:
            return None
        error = row.get("error")
        infra = row.get("status") == "infra_error" and isinstance(error, str)
        first = str(error).split("; ")[0]
        self._errors.append(first if infra else None)
        if infra and not self._cause:
            self._cause = first
        full = len(self._errors) == self.n
        # the same kind of error: the same words before the details (which name the task)
        kinds = {e.split(" (")[0] for e in self._errors if e is not None}
        if full and None not in self._errors and len(kinds) == 1:
            return self._cause
        return None
