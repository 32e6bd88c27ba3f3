"""The driver of ``trialbook run``: plans the attempts, hands them to an executor, writes the rows.

The driver is the only ledger writer. Before an attempt starts it writes a start marker; when the
attempt's row comes back it writes the row, one transaction each. A harness killed at any instant
therefore leaves finished attempts (rows) and cut-off attempts (markers without rows); ``--resume``
runs exactly the attempts without a row again and records how many were cut off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Protocol

from trialbook.errors import ArgumentError
from trialbook.harness._attempt import AttemptSpec, RunContext, run_attempt
from trialbook.harness._executor import Executor, LocalExecutor
from trialbook.harness._process import sweep
from trialbook.harness._sandbox import Tier, resolve_tier
from trialbook.ledger import LedgerStore, Prepared, RunRecord, prepare
from trialbook.suite import (
    Lock,
    Suite,
    SuiteError,
    Task,
    check_lock,
    fixture_hash,
    load_suite,
)

__all__ = ["RunOptions", "RunProgress", "RunResult", "run_suite"]


@dataclass(frozen=True)
class RunOptions:
    """Everything ``trialbook run`` takes."""

    suite: Path
    agent: str
    ledger: Path
    system: str | None = None
    run_id: str | None = None
    resume: str | None = None
    jobs: int = 1
    sandbox: str = "auto"
    tier: str | None = None
    """A subset of tasks named in suite.toml [tiers], e.g. smoke."""
    executor: str = "local"
    pass_env: Mapping[str, str] = field(default_factory=dict)
    model_version: str | None = None
    rerun_reason: str | None = None
    grace_s: float = 2.0


class RunProgress(Protocol):
    """What the driver reports while it runs (the CLI draws a bar or prints lines)."""

    def begin(self, run_id: str, total: int, done: int, notes: Sequence[str]) -> None: ...

    def attempt(self, row: Mapping[str, object]) -> None: ...


@dataclass(frozen=True)
class RunResult:
    """What a finished (or interrupted) run did."""

    run_id: str
    ledger: Path
    tier: str
    planned: int
    written: int
    cut_off: int
    """Attempts found cut off by an earlier crash and run again (resume)."""
    quarantined: tuple[str, ...]
    interrupted: bool
    notes: tuple[str, ...]


def _hidden(suite_root: Path, ledger: Path, transcripts: Path, scratch: Path) -> tuple[Path, ...]:
    """Folders the agent must not see (bwrap tier): suite, ledger folder, transcripts, other attempts.

    The ledger's folder is hidden unless the Python running trialbook lives inside it (a project
    folder with its .venv): then only the transcripts are hidden, and the ledger files themselves are
    unreadable only by being outside the workspace (documented in docs/harness.md).
    """
    python_dirs = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    ledger_dir = ledger.parent.resolve()
    hide = [suite_root.resolve(), transcripts.resolve(), scratch.resolve()]
    if not any(p.is_relative_to(ledger_dir) for p in python_dirs):
        hide.append(ledger_dir)
    return tuple(hide)


def _plan(
    tasks: Sequence[Task], k: int, seeds: Sequence[int], done: set[tuple[str, int]]
) -> list[tuple[Task, int, int]]:
    """Attempts still to run, attempt-major (every task's attempt 0 first), so a partial run is even."""
    return [
        (task, index, seeds[index])
        for index in range(k)
        for task in tasks
        if (task.id, index) not in done
    ]


def _attempt(
    spec: AttemptSpec, ctx: RunContext, stop: threading.Event
) -> tuple[dict[str, object], Prepared] | None:
    """Run one attempt and validate its row, in the worker (so the driver only writes)."""
    row = run_attempt(spec, ctx, stop)
    if row is None:
        return None
    return row, prepare([row], f"run {ctx.run_id}")


def _check_agent(agent: str) -> None:
    """Refuse an agent command that names a program by a path relative to the caller's folder: it
    runs in each attempt's fresh workspace, where that path does not exist."""
    import shlex

    try:
        words = shlex.split(agent)
    except ValueError as exc:
        raise ArgumentError(f"--agent: not a valid shell command ({exc})") from None
    if not words:
        raise ArgumentError("--agent: empty command")
    program = words[0]
    if "/" in program and not program.startswith("/") and Path(program).exists():
        raise ArgumentError(
            f"--agent: {program!r} is relative to this folder, but the agent runs in a fresh "
            f"workspace: give its absolute path ({Path(program).resolve()})"
        )


def _start_watchdog(run_id: str) -> subprocess.Popen[bytes]:
    """A process that outlives a killed harness just long enough to kill the run's processes."""
    return subprocess.Popen(
        [sys.executable, "-m", "trialbook.harness._watchdog", str(os.getpid()), f"{run_id}/"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop_watchdog(watchdog: subprocess.Popen[bytes]) -> None:
    watchdog.kill()
    watchdog.wait()


def _check_options(options: RunOptions) -> None:
    if options.jobs < 1:
        raise ArgumentError(f"--jobs must be >= 1, got {options.jobs}")
    if options.executor != "local":
        raise ArgumentError(
            f"--executor: only 'local' exists in this version, got {options.executor!r}"
        )
    if options.ledger.suffix.lower() != ".db":
        raise ArgumentError(
            f"--ledger: the harness writes a SQLite ledger (.db), got {str(options.ledger)!r}"
        )
    if options.resume is not None and not options.ledger.is_file():
        raise ArgumentError(f"--resume: no ledger {str(options.ledger)!r} to resume from")
    _check_agent(options.agent)


def _frozen_suite(root: Path) -> tuple[Suite, Lock]:
    """The suite and its lock, refusing a lock that is missing or no longer matches the files."""
    suite = load_suite(root)
    check = check_lock(suite)
    if not check.matches:
        what = "; ".join(check.changed)
        raise SuiteError(
            f"{suite.root}: the suite lock is stale or missing ({what}): "
            f"run 'trialbook suite freeze {suite.root}' and start a new run"
        )
    return suite, check.current


def _tasks_to_run(suite: Suite, lock: Lock, tier: str | None) -> tuple[list[Task], tuple[str, ...]]:
    """The tasks of the tier (or all), and the quarantined ones among them, which are not run."""
    tasks = list(suite.tasks)
    if tier is not None:
        if tier not in suite.tiers:
            known = ", ".join(sorted(suite.tiers)) or "none"
            raise ArgumentError(f"--tier: the suite has no tier {tier!r} (tiers: {known})")
        members = set(suite.tiers[tier])
        tasks = [t for t in tasks if t.id in members]
    quarantined = tuple(t.id for t in tasks if t.id in lock.quarantined)
    return [t for t in tasks if t.id not in lock.quarantined], quarantined


def _open_run(
    store: LedgerStore,
    options: RunOptions,
    suite: Suite,
    dataset_id: str,
    tier: Tier,
    harness_version: str,
) -> tuple[RunRecord, list[tuple[str, int]]]:
    """Create the run, or reopen it for --resume; returns its record and the cut-off attempts."""
    if options.resume is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        record = RunRecord(
            run_id=options.run_id or f"{options.system or 'run'}-{stamp}",
            system=options.system,
            dataset_id=dataset_id,
            suite_path=str(suite.root.resolve()),
            k_budget=suite.k,
            timeout_s=suite.timeout_s,
            temperature=suite.temperature,
            seeds=suite.seeds,
            model_version=options.model_version,
            grader_version=suite.grader_version,
            harness_version=harness_version,
            sandbox=tier,
            rerun_reason=options.rerun_reason,
            origin="trialbook run",
        )
        store.create_run(record)
        return record, []
    status = store.run(options.resume)
    if status is None:
        raise ArgumentError(f"--resume: no run {options.resume!r} in {options.ledger}")
    record = status.record
    if record.dataset_id != dataset_id:
        raise SuiteError(
            f"--resume: run {record.run_id!r} was made on dataset {record.dataset_id}, "
            f"the suite is now {dataset_id}: start a new run"
        )
    if record.sandbox is not None and record.sandbox != tier:
        raise ArgumentError(
            f"--resume: run {record.run_id!r} used the {record.sandbox} sandbox, this "
            f"would use {tier}: pass --sandbox {record.sandbox}"
        )
    # Processes an earlier, killed harness left behind die before anything runs again.
    sweep(f"{record.run_id}/", prefix=True)
    cut_off = store.unfinished_starts(record.run_id)
    store.record_event(
        record.run_id,
        "resumed",
        {"cut_off": len(cut_off), "attempts": [f"{t}#{i}" for t, i in cut_off]},
    )
    return record, cut_off


class _Driver:
    """The loop of one run: keeps ``jobs`` attempts running and writes what comes back.

    The only ledger writer. Each finished row is written in a transaction of its own; the start
    markers of the attempts about to begin ride along with the last one.
    """

    def __init__(
        self,
        store: LedgerStore,
        ctx: RunContext,
        jobs: int,
        progress: RunProgress | None,
        stop: threading.Event,
    ) -> None:
        self.store, self.ctx, self.jobs, self.progress, self.stop = store, ctx, jobs, progress, stop
        self.written = 0
        self._finished: list[tuple[dict[str, object], Prepared]] = []

    def _write(self, starting: list[tuple[Task, int, int]]) -> list[int]:
        run_id = self.ctx.run_id
        for _, validated in self._finished[:-1]:
            self.store.write(run_id, [validated], [])
        last = [validated for _, validated in self._finished[-1:]]
        ids = self.store.write(run_id, last, [(task.id, index) for task, index, _ in starting])
        self.written += len(self._finished)
        if self.progress is not None:
            for row, _ in self._finished:
                self.progress.attempt(row)
        self._finished.clear()
        return ids

    def drive(self, todo: list[tuple[Task, int, int]], executor: Executor) -> None:
        """Run ``todo``; on any exception (or once ``stop`` is set) stop starting attempts, keep the
        rows of those that finished, and leave the rest cut off."""
        queue = deque(todo)
        running: dict[Future[tuple[dict[str, object], Prepared] | None], AttemptSpec] = {}
        try:
            while queue or running or self._finished:
                starting: list[tuple[Task, int, int]] = []
                while queue and len(running) + len(starting) < self.jobs and not self.stop.is_set():
                    starting.append(queue.popleft())
                if starting or self._finished:
                    for (task, index, seed), start_id in zip(
                        starting, self._write(starting), strict=True
                    ):
                        spec = AttemptSpec(
                            task=task, attempt_index=index, seed=seed, start_id=start_id
                        )
                        running[executor.submit(_attempt, spec, self.ctx, self.stop)] = spec
                if self.stop.is_set() and not running:
                    break
                if not running:
                    continue
                done_now, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done_now:
                    running.pop(future)
                    row = future.result()
                    if row is not None:  # None: cut off by the stop; its marker stays without a row
                        self._finished.append(row)
        except BaseException:
            self.stop.set()
            for future in running:
                future.cancel()
            executor.shutdown()
            for future in running:  # attempts that finished while stopping keep their rows
                if future.done() and not future.cancelled() and future.exception() is None:
                    row = future.result()
                    if row is not None:
                        self._finished.append(row)
            if self._finished:
                self._write([])
            raise


def run_suite(
    options: RunOptions,
    progress: RunProgress | None = None,
    stop: threading.Event | None = None,
    executor_factory: Callable[[int], Executor] | None = None,
) -> RunResult:
    """Run (or resume) one system on a frozen suite and append one row per finished attempt.

    ``stop``: set it (e.g. on Ctrl-C) to stop cleanly: running attempts are killed and left without
    a row (they are cut off and run again by ``--resume``), and the run records an 'interrupted' event.
    """
    _check_options(options)
    suite, lock = _frozen_suite(options.suite)
    try:
        tier, tier_note = resolve_tier(options.sandbox)
    except ValueError as exc:
        raise ArgumentError(str(exc)) from None
    notes = [tier_note] if tier_note else []
    tasks, quarantined = _tasks_to_run(suite, lock, options.tier)
    if quarantined:
        notes.append(f"quarantined (oracle leak), not run: {', '.join(quarantined)}")

    options.ledger.parent.mkdir(parents=True, exist_ok=True)
    with LedgerStore(options.ledger) as store:
        # a resumed run keeps its record; each row says which harness wrote it
        harness_version = f"trialbook {version('trialbook')}"
        record, cut_off = _open_run(store, options, suite, lock.dataset_id, tier, harness_version)
        run_id = record.run_id
        done = store.finished(run_id)
        todo = _plan(tasks, suite.k, suite.seeds, done)
        if cut_off:
            notes.append(f"{len(cut_off)} attempt(s) cut off by an earlier stop will run again")
        transcripts = options.ledger.parent / f"{options.ledger.stem}.transcripts" / run_id
        transcripts.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="trialbook-run-")).resolve()
        prompts = scratch / "prompts"
        prompts.mkdir()
        for task in tasks:
            prompt = prompts / f"{task.id}.md"
            prompt.write_text(task.prompt, encoding="utf-8")
            prompt.chmod(0o444)
        ctx = RunContext(
            run_id=run_id,
            agent=options.agent,
            tier=tier,
            temperature=suite.temperature,
            scratch=scratch,
            transcripts=transcripts,
            transcript_base=options.ledger.parent,
            prompts=prompts,
            row_fields={
                "system": record.system,
                "dataset_id": lock.dataset_id,
                "k_budget": suite.k,
                "model_version": record.model_version,
                "grader_version": suite.grader_version,
                "harness_version": harness_version,
                "sandbox": tier,
            },
            fixture_hashes={t.id: fixture_hash(t) for t in tasks},
            hidden=_hidden(suite.root, options.ledger, transcripts, scratch),
            pass_env=dict(options.pass_env),
            grace_s=options.grace_s,
        )
        stop = stop or threading.Event()
        if progress is not None:
            progress.begin(run_id, len(todo) + len(done), len(done), notes)
        driver = _Driver(store, ctx, options.jobs, progress, stop)
        watchdog = _start_watchdog(run_id)
        executor = (executor_factory or LocalExecutor)(options.jobs)
        try:
            driver.drive(todo, executor)
        except BaseException:
            store.record_event(run_id, "interrupted", {"written": driver.written})
            raise
        finally:
            executor.shutdown()
            shutil.rmtree(scratch, ignore_errors=True)
            _stop_watchdog(watchdog)
        interrupted = stop.is_set() and driver.written < len(todo)
        store.record_event(
            run_id,
            "interrupted" if interrupted else "finished",
            {"written": driver.written, "cut_off_rerun": len(cut_off)},
        )
    return RunResult(
        run_id=run_id,
        ledger=options.ledger,
        tier=tier,
        planned=len(todo),
        written=driver.written,
        cut_off=len(cut_off),
        quarantined=quarantined,
        interrupted=interrupted,
        notes=tuple(notes),
    )
