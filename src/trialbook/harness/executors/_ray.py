"""The Ray executor: each attempt one Ray task on a cluster, the driver the only ledger writer.

Each attempt is one task with ``max_retries=0`` and ``retry_exceptions=False``: Ray never starts an
attempt a second time on its own (by default it re-runs a task whose node died). The whole attempt
runs inside the task on the worker (``_ray_worker``); the spec travels pickled, the fixture and
oracle as packed folders in the object store (put once per content digest), and the row and raw
output come back as the task's result.

An attempt the cluster loses (its worker crashed, its node died, its task was cancelled by someone
else, or no result came within its deadline) comes back as an ``infra_error`` row. Every wait on
the cluster has a timeout: the deadline of an attempt is its own budget (agent and grader timeouts,
grace) plus ``pending_s`` for the task to be scheduled and its files fetched, after which the task
is force-cancelled and the attempt recorded as lost. Ray is imported only when this executor is
made (``trialbook run --executor ray``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from importlib.metadata import version
from pathlib import Path
from typing import Any

from trialbook.harness.attempt import AttemptResult, AttemptSpec
from trialbook.harness.executors._executor import Worker
from trialbook.harness.executors._ray_cluster import ClusterCpus, connect, import_ray
from trialbook.harness.executors._ray_worker import Material, lost_result, pack, run_on_worker
from trialbook.ledger import now

__all__ = ["PENDING_S", "RayExecutor"]

PENDING_S = 120.0
"""Seconds an attempt may take beyond its own budget: the wait for a CPU on the cluster, a worker
to start, the task's files to arrive and the workspace to be made and removed."""

_POLL_S = 0.2
"""The longest single wait on the cluster: how often deadlines and cancels are looked at."""

_CANCEL_WAIT_S = 10.0
"""After a cancel, how long a task may take to come back before it is given up as cut off."""


@dataclasses.dataclass
class _Flight:
    future: Future[AttemptResult]
    spec: AttemptSpec
    deadline: float
    started_at: str
    cancelled_at: float | None = None


def _budget_s(spec: AttemptSpec) -> float:
    """The longest an attempt can take on a worker that is alive: agent, grader, two graces."""
    budget = spec.budget
    return budget.timeout_s + budget.grader_timeout_s + 2 * spec.grace_s


def _raised(
    flight: _Flight, exc: Exception, errors: Any, harness_version: str
) -> AttemptResult | BaseException:
    """What a task that raised means (``errors``: ``ray.exceptions``): cut off (we cancelled it),
    an exception of the worker function itself (raised again here, as the local executor would),
    else a lost attempt."""
    if isinstance(exc, errors.TaskCancelledError) and flight.cancelled_at is not None:
        return AttemptResult(row=None)
    if isinstance(exc, errors.RayTaskError):
        cause = exc.as_instanceof_cause()
        if isinstance(cause, ImportError):  # the node lacks trialbook (or one of its modules)
            return lost_result(
                flight.spec,
                f"a Ray worker cannot import {cause.name or 'trialbook'}: install "
                f"{harness_version} on every node",
                flight.started_at,
                lost=False,
            )
        return cause if isinstance(cause, BaseException) else exc
    text = str(exc).strip().splitlines()
    why = {
        errors.NodeDiedError: "its node died",
        errors.WorkerCrashedError: "its worker process died",
        errors.TaskCancelledError: "its task was cancelled on the cluster",
    }
    reason = next((w for kind, w in why.items() if isinstance(exc, kind)), "it was lost")
    detail = f"{type(exc).__name__}: {text[0] if text else ''}".strip()
    return lost_result(
        flight.spec,
        f"the Ray cluster lost the attempt: {reason} ({detail}); a resume runs it again",
        flight.started_at,
    )


class RayExecutor:
    """Attempts as Ray tasks: connects to ``address`` (``RAY_ADDRESS`` when None, else a Ray
    instance started on this machine), or uses the connection the caller already opened.

    ``jobs``: the most attempts in flight; None: as many as the cluster has CPUs (looked at again
    as nodes come and go). ``withheld``: variables of this process's environment (the model's real
    key) that a Ray instance started here must not inherit.
    """

    def __init__(
        self,
        jobs: int | None = None,
        address: str | None = None,
        *,
        pending_s: float = PENDING_S,
        init: Callable[..., object] | None = None,
        withheld: Sequence[str] = (),
    ) -> None:
        ray = import_ray()
        self._ray = ray
        self._owned = connect(ray, address, init, withheld)
        self._jobs = jobs
        self._pending_s = pending_s
        self._version = f"trialbook {version('trialbook')}"
        self._remote = ray.remote(run_on_worker).options(
            num_cpus=1, max_retries=0, retry_exceptions=False, name="trialbook-attempt"
        )
        self._materials: dict[tuple[str, str], Material] = {}
        self._flights: dict[Any, _Flight] = {}
        self._lock = threading.Lock()
        self._cancelled = False
        self._closed = False
        self._cpus = ClusterCpus(ray)
        self._thread = threading.Thread(target=self._loop, name="ray-results", daemon=True)
        self._thread.start()

    def capacity(self) -> int:
        """How many attempts may be in flight now: ``jobs``, at most the cluster's CPUs (looked up
        at most once a second). Raises :class:`HarnessError` when the cluster has had no CPU for a
        minute."""
        cpus = self._cpus.count()
        return cpus if self._jobs is None else min(self._jobs, cpus)

    def _material(self, kind: str, folder: Path, digest: str) -> Material:
        key = (kind, digest)
        material = self._materials.get(key)
        if material is None:
            data = pack(folder)
            refs = () if data is None else (self._ray.put(data),)
            material = self._materials[key] = Material(kind, digest, refs)
        return material

    def submit(self, worker: Worker, spec: AttemptSpec, /) -> Future[AttemptResult]:
        """Send ``worker(spec)`` to the cluster as one task."""
        future: Future[AttemptResult] = Future()
        future.set_running_or_notify_cancel()
        fixture = self._material("fixture", spec.fixture, spec.fixture_hash)
        oracle = self._material("oracle", spec.oracle, spec.oracle_hash)
        with self._lock:
            if self._cancelled:
                future.set_result(AttemptResult(row=None))
                return future
            ref = self._remote.remote(worker, spec, fixture, oracle, self._version)
            deadline = time.monotonic() + _budget_s(spec) + self._pending_s
            self._flights[ref] = _Flight(future, spec, deadline, now())
        return future

    def _loop(self) -> None:
        ray = self._ray
        while not self._closed:
            with self._lock:
                refs = list(self._flights)
            if not refs:
                time.sleep(0.01)
                continue
            try:
                ready, _ = ray.wait(refs, num_returns=1, timeout=_POLL_S, fetch_local=True)
            except Exception as exc:  # the connection to the cluster failed: nothing will come
                self._give_up(f"waiting on the Ray cluster failed ({type(exc).__name__}: {exc})")
                continue
            for ref in ready:
                self._finish(ref)
            self._overdue()

    def _give_up(self, message: str) -> None:
        """Every attempt in flight is lost (cut off, when it was being cancelled anyway)."""
        with self._lock:
            flights = list(self._flights.values())
            self._flights.clear()
        for flight in flights:
            if flight.cancelled_at is not None:
                flight.future.set_result(AttemptResult(row=None))
            else:
                flight.future.set_result(
                    lost_result(
                        flight.spec, f"{message}; a resume runs it again", flight.started_at
                    )
                )

    def _finish(self, ref: Any) -> None:
        with self._lock:
            flight = self._flights.pop(ref, None)
        if flight is None:
            return
        try:
            result = self._ray.get(ref, timeout=_POLL_S * 50)
        except Exception as exc:
            outcome = _raised(flight, exc, self._ray.exceptions, self._version)
            if isinstance(outcome, BaseException):
                flight.future.set_exception(outcome)
            else:
                flight.future.set_result(outcome)
            return
        flight.future.set_result(result)

    def _overdue(self) -> None:
        """Give up on tasks past their deadline (force-cancelled, recorded as lost) and on
        cancelled ones that did not come back (cut off)."""
        clock = time.monotonic()
        gone: list[tuple[Any, _Flight, AttemptResult]] = []
        with self._lock:
            for ref, flight in list(self._flights.items()):
                if flight.cancelled_at is not None:
                    if clock - flight.cancelled_at > _CANCEL_WAIT_S:
                        gone.append((ref, flight, AttemptResult(row=None)))
                elif clock > flight.deadline:
                    waited = _budget_s(flight.spec) + self._pending_s
                    message = (
                        f"no result from the Ray cluster within {waited:g} s (the attempt's "
                        "budget and the wait for a CPU): its task was cancelled; a resume runs it "
                        "again"
                    )
                    gone.append((ref, flight, lost_result(flight.spec, message, flight.started_at)))
            for ref, _, _ in gone:
                del self._flights[ref]
        for ref, flight, result in gone:
            self._cancel_task(ref)
            flight.future.set_result(result)

    def _cancel_task(self, ref: Any) -> None:
        try:
            self._ray.cancel(ref, force=True)
        except Exception:  # already finished, or its node is gone: nothing left to stop
            return

    def cancel(self) -> None:
        """Force-cancel every task in flight (its worker is killed; the node's watchdog kills the
        attempt's processes); each comes back cut off, without a row."""
        with self._lock:
            self._cancelled = True
            clock = time.monotonic()
            flights = list(self._flights.items())
            for _, flight in flights:
                flight.cancelled_at = clock
        for ref, _ in flights:
            self._cancel_task(ref)

    def shutdown(self, *, cancel: bool = False) -> None:
        """Wait for the tasks in flight (with ``cancel``, cancel them first), then disconnect (and
        stop the Ray instance this executor started)."""
        if cancel:
            self.cancel()
        while True:
            with self._lock:
                if not self._flights:
                    break
            time.sleep(0.05)
        if self._closed:
            return
        self._closed = True
        self._thread.join()
        self._materials.clear()
        if self._owned:
            self._ray.shutdown()
