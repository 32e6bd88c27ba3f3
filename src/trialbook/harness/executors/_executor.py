"""Executors: where attempts run. The seam a cluster executor (Ray) plugs into.

An executor runs a worker (``run_attempt``) on an :class:`AttemptSpec` and hands back its
:class:`AttemptResult` through a future. It never touches the ledger or the transcripts (the driver
is the only writer), never retries an attempt on its own, and the attempt enforces its own timeout
wherever it runs. Stopping belongs to the executor too: ``cancel`` stops every running attempt
(each comes back cancelled, without a row) and starts no queued one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from trialbook.harness.attempt import AttemptResult, AttemptSpec
from trialbook.harness.sandbox import cancellable

__all__ = ["Executor", "LocalExecutor", "Worker"]

Worker = Callable[[AttemptSpec], AttemptResult]
"""A function from an attempt spec to its result: ``run_attempt``, or a test's stand-in."""


class Executor(Protocol):
    """Runs attempts somewhere and returns their results as futures."""

    def submit(self, worker: Worker, spec: AttemptSpec, /) -> Future[AttemptResult]:
        """Start ``worker(spec)``; its result (or its exception) arrives through the future."""
        ...

    def capacity(self) -> int:
        """How many attempts may be in flight now (a cluster's CPUs change as nodes come and go);
        the driver starts no more than that."""
        ...

    def cancel(self) -> None:
        """Stop every running attempt soon (each returns a cancelled result) and start no queued
        one; returns at once."""
        ...

    def shutdown(self, *, cancel: bool = False) -> None:
        """Release the executor once its attempts are done; with ``cancel``, cancel them first."""
        ...


class LocalExecutor:
    """A pool of ``jobs`` threads on this machine; each attempt's processes do the work.

    Each worker runs inside the executor's cancel scope, which ``cancel`` closes: the worker's
    commands are then stopped (TERM, grace, KILL) and it returns a cancelled result.
    """

    def __init__(self, jobs: int) -> None:
        self._jobs = jobs
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="attempt")
        self._cancelled = threading.Event()

    def capacity(self) -> int:
        """The pool's threads."""
        return self._jobs

    def submit(self, worker: Worker, spec: AttemptSpec, /) -> Future[AttemptResult]:
        """Start ``worker(spec)`` on a free thread."""
        return self._pool.submit(self._call, worker, spec)

    def _call(self, worker: Worker, spec: AttemptSpec) -> AttemptResult:
        if self._cancelled.is_set():
            return AttemptResult(row=None)
        with cancellable(self._cancelled.is_set):
            return worker(spec)

    def cancel(self) -> None:
        """Stop the running attempts (they see it within a fifth of a second) and drop queued ones."""
        self._cancelled.set()

    def shutdown(self, *, cancel: bool = False) -> None:
        """Wait for running attempts; with ``cancel``, stop them first."""
        if cancel:
            self.cancel()
        self._pool.shutdown(wait=True, cancel_futures=cancel)
