"""Cancellation of running attempts, owned by the executor that runs them.

A worker is a plain function of its :class:`~trialbook.harness.AttemptSpec`: no flag is handed to it.
The local executor runs each worker inside a cancel scope (:func:`cancellable`); the command runner
looks at the scope a few times a second and stops the attempt's processes once it says so. Outside a
scope (``grader-check``, a remote worker) nothing is ever cancelled from here: a cluster executor
stops its tasks by its own means.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["cancellable", "cancelled"]

_SCOPE: ContextVar[Callable[[], bool] | None] = ContextVar("trialbook_cancel_scope", default=None)


def cancelled() -> bool:
    """Whether the executor running the current worker has cancelled it."""
    check = _SCOPE.get()
    return check is not None and check()


@contextmanager
def cancellable(check: Callable[[], bool]) -> Iterator[None]:
    """Run the body as a worker that ``check()`` cancels once it returns true."""
    token = _SCOPE.set(check)
    try:
        yield
    finally:
        _SCOPE.reset(token)
