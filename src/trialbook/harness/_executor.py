"""Executors: where attempts run. The seam a cluster executor (Ray) plugs into.

An executor only runs ``run_attempt`` and hands back its row through a future; it never touches the
ledger (the driver is the only writer), never retries an attempt on its own, and the attempt enforces
its own timeout wherever it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

__all__ = ["Executor", "LocalExecutor"]

T = TypeVar("T")


class Executor(Protocol):
    """Runs attempts somewhere and returns their rows as futures."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]: ...

    def shutdown(self) -> None: ...


class LocalExecutor:
    """A pool of ``jobs`` threads on this machine; each attempt's processes do the work."""

    def __init__(self, jobs: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="attempt")

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        """Start ``fn(*args)`` on a free thread."""
        return self._pool.submit(fn, *args)

    def shutdown(self) -> None:
        """Wait for running attempts (they stop quickly once the run's stop flag is set)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
