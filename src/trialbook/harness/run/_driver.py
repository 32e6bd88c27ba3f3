"""The driver's loop: keeps ``jobs`` attempts running (no more than the executor has room for),
writes what comes back.

The driver is the only writer of the ledger and of the raw output beside it. Before an attempt
starts it writes a start marker; when the attempt's result comes back it keeps the raw output in
``TRANSCRIPTS/TASK/ATTEMPT.START/`` and writes the row, one transaction each. Stopping is asked of
the executor: once ``stop`` is set, no attempt starts and the executor cancels the running ones,
which are left cut off (a marker without a row) for a resume to run again.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Protocol

from trialbook.harness.attempt import AttemptResult, AttemptSpec, feedback_json, run_attempt
from trialbook.harness.executors import Executor
from trialbook.harness.run._model import CALL_LOG, ModelGateway, merge_usage
from trialbook.harness.run._schedule import FirstErrors, next_rounds
from trialbook.harness.sandbox import start_key
from trialbook.ledger import LedgerStore, Prepared, prepare

__all__ = ["EARLY_ATTEMPTS", "Driver", "Planned", "RunProgress", "Tally"]

EARLY_ATTEMPTS = 3
"""When this many first attempts of a run (or all, if fewer but more than one) end in the same
harness-side error, the run stops: every further attempt would fail the same way."""

_POLL_S = 0.1
"""How often the loop looks at ``stop`` while attempts run (a Ctrl-C is acted on this soon)."""


@dataclasses.dataclass(frozen=True)
class Tally:
    """Counts of a run's finished attempts (the whole run, earlier sessions included)."""

    done: int = 0
    passed: int = 0
    timed_out: int = 0
    infra_errors: int = 0

    def add(self, row: Mapping[str, object]) -> Tally:
        """The counts with one more row."""
        return Tally(
            self.done + 1,
            self.passed + bool(row["passed"]),
            self.timed_out + bool(row["timed_out"]),
            self.infra_errors + (row["status"] == "infra_error"),
        )


class RunProgress(Protocol):
    """What the driver reports while it runs (the CLI draws a bar or prints lines). ``begin`` gets
    the counts of the attempts already in the ledger, so that every count is of the whole run."""

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None: ...

    def attempt(self, row: Mapping[str, object]) -> None: ...


@dataclasses.dataclass(frozen=True)
class Planned:
    """An attempt still to run: its task's spec (attempt 0, no start yet), its index and seed, and
    which re-run of the attempt it is (``retry``: 0 the first run; r > 0 runs again the attempt whose
    row of retry r - 1 the harness lost)."""

    template: AttemptSpec
    attempt_index: int
    seed: int
    retry: int = 0

    def spec(self, start_id: int, feedback: str | None = None) -> AttemptSpec:
        """The attempt's spec once its start marker has an id (and, in a repair run, the
        feedback of the task's previous round)."""
        fields = self.template.row_fields
        return dataclasses.replace(
            self.template,
            attempt_index=self.attempt_index,
            start_id=start_id,
            start_key=start_key(self.template.run_id, start_id),
            budget=dataclasses.replace(self.template.budget, seed=self.seed),
            row_fields={**fields, "retry": self.retry} if self.retry else fields,
            feedback=feedback,
        )


class Driver:
    """The loop of one run.

    Each finished row is written in a transaction of its own; the start markers of the attempts
    about to begin ride along with the last one.

    ``rounds`` (a ``repair`` suite): the attempts of one task run one after the other, attempt i
    starting only once attempt i-1 has its row, and each is handed its previous round's feedback
    (``feedback`` holds that of the rounds an earlier session finished); other tasks still run
    side by side, up to ``jobs``.
    """

    def __init__(
        self,
        store: LedgerStore,
        run_id: str,
        jobs: int,
        *,
        transcripts: Path,
        transcript_base: Path,
        progress: RunProgress | None,
        stop: threading.Event,
        rounds: bool = False,
        feedback: Mapping[tuple[str, int], str] | None = None,
        model: ModelGateway | None = None,
    ) -> None:
        self.store, self.run_id, self.jobs = store, run_id, jobs
        self.rounds = rounds
        self._feedback: dict[tuple[str, int], str] = dict(feedback or {})
        self.transcripts, self.transcript_base = transcripts, transcript_base
        self.progress, self.stop = progress, stop
        self.written = 0
        self.stopped_by: str | None = None
        """The harness error the first attempts all ended in, when it stopped the run."""
        self._first = FirstErrors(EARLY_ATTEMPTS)
        self._finished: list[tuple[dict[str, object], Prepared]] = []
        self.model = model
        """The run's model gateway: each attempt opened on it before it starts, closed when its
        result comes back (its figures then replace the agent's own in the row)."""

    def _watch(self, row: Mapping[str, object]) -> None:
        """Stop the run when its first attempts all ended in the same harness-side error."""
        cause = self._first.see(row)
        if cause is not None:
            self.stopped_by = cause
            self.stop.set()

    def _row(self, spec: AttemptSpec, result: AttemptResult) -> tuple[dict[str, object], Prepared]:
        """The row to write: the worker's, plus where its raw output is kept; validated."""
        assert result.row is not None
        row = dict(result.row)
        folder = self._folder(spec)
        if result.output or (self.model is not None and (folder / CALL_LOG).is_file()):
            try:
                folder.mkdir(parents=True, exist_ok=True)
                for name, data in result.output.items():
                    (folder / name).write_bytes(data)
                row["transcript"] = folder.relative_to(self.transcript_base).as_posix()
            except OSError as exc:
                note = f"raw output not kept: {exc}"
                row["error"] = f"{row['error']}; {note}" if row.get("error") else note
        return row, prepare([row], f"run {self.run_id}")

    def _folder(self, spec: AttemptSpec) -> Path:
        """Where the attempt's raw output is kept (the start id is unique: a re-run of the
        attempt keeps its own folder)."""
        return self.transcripts / spec.task_id / f"{spec.attempt_index}.{spec.start_id}"

    def _write(self, starting: list[Planned]) -> list[int]:
        finished = self._finished
        for _, validated in finished[:-1]:
            self.store.write(self.run_id, [validated], [])
        last = [validated for _, validated in finished[-1:]]
        starts = [(p.template.task_id, p.attempt_index, p.retry) for p in starting]
        ids = self.store.write(self.run_id, last, starts)
        self.written += len(finished)
        if self.progress is not None:
            for row, _ in finished:
                self.progress.attempt(row)
        self._finished = []
        return ids

    def _collect(self, spec: AttemptSpec, future: Future[AttemptResult]) -> None:
        result = future.result()
        usage = self.model.close(spec) if self.model is not None else None
        if not result.cancelled:  # cancelled: its marker stays without a row (cut off)
            if self.model is not None and usage is not None:
                assert result.row is not None
                merged = merge_usage(result.row, usage, priced=self.model.priced)
                result = dataclasses.replace(result, row=merged)
            row, validated = self._row(spec, result)
            self._watch(row)
            if self.rounds:
                stdout = result.output.get("grader.stdout")
                self._feedback[(spec.task_id, spec.attempt_index)] = feedback_json(
                    row, stdout, spec.feedback_level
                )
            self._finished.append((row, validated))

    def _next(
        self,
        queue: deque[Planned],
        running: Mapping[Future[AttemptResult], AttemptSpec],
        room: int,
    ) -> list[Planned]:
        """Take up to ``room`` attempts off the queue: the first ones; in a repair run, the first
        queued round of each task with no round running (the queue is attempt-major, so that is
        the task's lowest missing attempt, and every earlier one has its row)."""
        if not self.rounds:
            return [queue.popleft() for _ in range(min(room, len(queue)))]
        busy = {spec.task_id for spec in running.values()}
        return next_rounds(queue, busy, room, lambda planned: planned.template.task_id)

    def drive(self, todo: list[Planned], executor: Executor) -> None:
        """Run ``todo``; on any exception (or once ``stop`` is set) start no attempt, have the
        executor cancel the running ones, keep the rows of those that finished, and leave the rest
        cut off."""
        queue = deque(todo)
        # one attempt alone is no pattern: a run of one is left to finish with its row
        self._first = FirstErrors(min(EARLY_ATTEMPTS, len(todo)) if len(todo) > 1 else 0)
        running: dict[Future[AttemptResult], AttemptSpec] = {}
        cancelled = False
        try:
            while queue or running or self._finished:
                if self.stop.is_set() and not cancelled:
                    executor.cancel()
                    cancelled = True
                limit = 0 if cancelled or not queue else min(self.jobs, executor.capacity())
                starting = self._next(queue, running, limit - len(running))
                if starting or self._finished:
                    for planned, start_id in zip(starting, self._write(starting), strict=True):
                        before = (planned.template.task_id, planned.attempt_index - 1)
                        spec = planned.spec(start_id, self._feedback.get(before))
                        if self.model is not None:
                            spec = self.model.open(spec, self._folder(spec))
                        running[executor.submit(run_attempt, spec)] = spec
                if cancelled and not running:
                    break
                if not running:
                    if queue and not limit:  # no room on the executor now (a cluster's nodes lost)
                        self.stop.wait(_POLL_S)
                    continue
                done_now, _ = wait(list(running), timeout=_POLL_S, return_when=FIRST_COMPLETED)
                for future in done_now:
                    self._collect(running.pop(future), future)
        except BaseException:
            self.stop.set()
            executor.shutdown(cancel=True)
            for future, spec in running.items():  # attempts that finished while stopping
                if future.done() and not future.cancelled() and future.exception() is None:
                    self._collect(spec, future)
                elif self.model is not None:
                    self.model.close(spec)  # its token is revoked; the attempt is cut off
            if self._finished:
                self._write([])
            raise
