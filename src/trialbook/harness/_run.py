"""``run_suite``: checks the options and the suite, opens (or resumes) the run, plans the attempts
as self-contained specs and lets the driver run them on an executor.

The driver writes a start marker before each attempt and the row when it comes back, so a harness
killed at any instant leaves finished attempts (rows) and cut-off attempts (markers without rows);
a resume runs exactly the attempts without a row again and records how many were cut off.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.harness._cgroup import Cgroup, clean_stale, not_capped
from trialbook.harness._driver import Driver, Planned, RunProgress
from trialbook.harness._executor import Executor, LocalExecutor
from trialbook.harness._process import sweep
from trialbook.harness._sandbox import Tier, limit_notes, resolve_tier
from trialbook.harness._spec import AttemptSpec, Budget
from trialbook.harness._stamp import is_dead, stamp
from trialbook.ledger import LedgerStore, RunRecord
from trialbook.suite import (
    Lock,
    Suite,
    SuiteError,
    Task,
    check_lock,
    fixture_hash,
    load_suite,
    oracle_hash,
)

__all__ = ["RunOptions", "RunResult", "run_suite"]


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
    """Sandbox tier: ``auto`` (bwrap where it works, else process), ``bwrap`` or ``process``."""
    subset: str | None = None
    """Run only the tasks of this subset named in suite.toml ``[subsets]``, e.g. ``smoke``."""
    executor: str = "local"
    pass_env: Mapping[str, str] = field(default_factory=dict)
    model_version: str | None = None
    rerun_reason: str | None = None
    grace_s: float = 2.0


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
    """What the agent and the grader must not see (bwrap tier): the suite (its oracles), the ledger
    file and its journals, the transcripts of every run, the run's scratch folder (other attempts).

    Exactly these, not the folders around them: an agent's script beside the ledger stays visible.
    """
    ledger = ledger.resolve()
    journals = [ledger.with_name(ledger.name + tail) for tail in _JOURNALS]
    return (suite_root.resolve(), ledger, *journals, transcripts.resolve(), scratch.resolve())


_JOURNALS = ("-wal", "-shm", "-journal")
"""SQLite's files beside a ledger (write-ahead log, its index, a rollback journal)."""


def _plan(
    templates: Mapping[str, AttemptSpec],
    k: int,
    seeds: Sequence[int],
    done: set[tuple[str, int]],
) -> list[Planned]:
    """Attempts still to run, attempt-major (every task's attempt 0 first), so a partial run is even."""
    return [
        Planned(template, index, seeds[index])
        for index in range(k)
        for task_id, template in templates.items()
        if (task_id, index) not in done
    ]


def _templates(
    tasks: Sequence[Task],
    options: RunOptions,
    *,
    run_id: str,
    tier: Tier,
    temperature: float | None,
    grade_after_timeout: bool = False,
    scratch: Path,
    hidden: tuple[Path, ...],
    run_fields: Mapping[str, object],
) -> dict[str, AttemptSpec]:
    """Each task's attempt spec, complete but for the attempt index, seed and start marker."""
    return {
        task.id: AttemptSpec(
            run_id=run_id,
            start_id=0,
            task_id=task.id,
            attempt_index=0,
            agent=options.agent,
            prompt=task.prompt,
            fixture=task.fixture.resolve(),
            fixture_hash=fixture_hash(task),
            oracle=task.oracle.resolve(),
            oracle_hash=oracle_hash(task),
            grader=task.grader,
            budget=Budget(
                timeout_s=task.timeout_s,
                grader_timeout_s=task.grader_timeout_s,
                seed=0,
                temperature=temperature,
                network=task.network,
                grade_after_timeout=grade_after_timeout,
            ),
            tier=tier,
            grace_s=options.grace_s,
            hidden=hidden,
            scratch=scratch,
            pass_env=dict(options.pass_env),
            row_fields={**run_fields, "stratum": task.stratum, "weight": task.weight},
        )
        for task in tasks
    }


def _check_agent(agent: str) -> None:
    """Refuse an agent command that names a program by a path relative to the caller's folder: it
    runs in each attempt's fresh workspace, where that path does not exist."""
    import shlex

    try:
        words = shlex.split(agent)
    except ValueError as exc:
        raise ArgumentError(f"not a valid shell command ({exc})", argument="agent") from None
    if not words:
        raise ArgumentError("empty command", argument="agent")
    program = words[0]
    if "/" in program and not program.startswith("/") and Path(program).exists():
        raise ArgumentError(
            f"{program!r} is relative to this folder, but the agent runs in a fresh "
            f"workspace: give its absolute path ({Path(program).resolve()})",
            argument="agent",
        )


_SCRATCH_PREFIX = "trialbook-run-"


def _make_scratch(run_id: str) -> Path:
    """The run's throwaway folder, named after this harness, with the run id inside: a harness
    killed with SIGKILL leaves it behind for the next run to recognise and clear."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{stamp(os.getpid())}.")).resolve()
    (scratch / "run_id").write_text(run_id)
    return scratch


def _clean_stale_runs() -> int:
    """Clear what killed harnesses left on this machine: the processes of their runs, their
    cgroups and their scratch folders (workspaces, prompts, oracle copies); returns how many
    scratch folders were removed. A live harness's folder is never touched."""
    removed = 0
    clean_stale()
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*"):
        if not is_dead(folder.name[len(_SCRATCH_PREFIX) :].split(".", 1)[0]):
            continue  # a live harness's, or one of another pid namespace (a container sharing /tmp)
        try:
            run_id = (folder / "run_id").read_text()
        except OSError:
            run_id = ""
        if run_id:
            sweep(f"{run_id}/", prefix=True)
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _start_watchdog(run_id: str, scratch: Path) -> subprocess.Popen[bytes]:
    """A process that outlives a killed harness just long enough to kill the run's processes and
    remove its scratch folder."""
    watchdog = [sys.executable, "-m", "trialbook.harness._watchdog", str(os.getpid())]
    return subprocess.Popen(
        [*watchdog, f"{run_id}/", str(scratch)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop_watchdog(watchdog: subprocess.Popen[bytes]) -> None:
    watchdog.kill()
    watchdog.wait()


def _check_options(options: RunOptions) -> None:
    if options.jobs < 1:
        raise ArgumentError(f"jobs must be >= 1, got {options.jobs}", argument="jobs")
    if options.executor != "local":
        raise ArgumentError(
            f"executor must be 'local' (the only one in this version), got {options.executor!r}",
            argument="executor",
        )
    if options.ledger.suffix.lower() != ".db":
        raise ArgumentError(
            f"ledger must be a SQLite ledger (.db) for the harness, got {str(options.ledger)!r}",
            argument="ledger",
        )
    if options.resume is not None and not options.ledger.is_file():
        raise ArgumentError(f"no ledger {str(options.ledger)!r} to resume from", argument="resume")
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


def _tasks_to_run(
    suite: Suite, lock: Lock, subset: str | None
) -> tuple[list[Task], tuple[str, ...]]:
    """The tasks of the subset (or all), and the quarantined ones among them, which are not run."""
    tasks = list(suite.tasks)
    if subset is not None:
        if subset not in suite.subsets:
            known = ", ".join(sorted(suite.subsets)) or "none"
            raise ArgumentError(
                f"the suite has no subset {subset!r} (subsets: {known})", argument="subset"
            )
        members = set(suite.subsets[subset])
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
        # the random tail: two runs of one system started in the same second never share an id
        record = RunRecord(
            run_id=options.run_id or f"{options.system or 'run'}-{stamp}-{os.urandom(3).hex()}",
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
        raise ArgumentError(f"no run {options.resume!r} in {options.ledger}", argument="resume")
    record = status.record
    if record.dataset_id != dataset_id:
        raise SuiteError(
            f"run {record.run_id!r}, to resume, was made on dataset {record.dataset_id}, "
            f"the suite is now {dataset_id}: start a new run"
        )
    if record.sandbox is not None and record.sandbox != tier:
        raise ArgumentError(
            f"run {record.run_id!r} used the {record.sandbox} sandbox, this would use "
            f"{tier}: resume it with the {record.sandbox} sandbox",
            argument="sandbox",
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


def run_suite(
    options: RunOptions,
    progress: RunProgress | None = None,
    stop: threading.Event | None = None,
    executor_factory: Callable[[int], Executor] | None = None,
) -> RunResult:
    """Run (or resume) one system on a frozen suite and append one row per finished attempt.

    ``stop``: set it (e.g. on Ctrl-C) to stop cleanly: the executor cancels the running attempts,
    which are left without a row (cut off, run again by a resume), and the run records an
    'interrupted' event. ``executor_factory``: makes the executor from ``jobs`` (default: a
    :class:`LocalExecutor`).
    """
    _check_options(options)
    suite, lock = _frozen_suite(options.suite)
    _clean_stale_runs()  # a new run clears after killed ones, as a resume does
    tier, tier_note = resolve_tier(options.sandbox)
    notes = [tier_note] if tier_note else []
    longest = max([t.timeout_s for t in suite.tasks] + [t.grader_timeout_s for t in suite.tasks])
    notes += limit_notes(math.ceil(longest) + 10)
    notes += not_capped()
    tasks, quarantined = _tasks_to_run(suite, lock, options.subset)
    if quarantined:
        notes.append(f"quarantined (oracle leak), not run: {', '.join(quarantined)}")

    options.ledger.parent.mkdir(parents=True, exist_ok=True)
    with LedgerStore(options.ledger) as store:
        # a resumed run keeps its record; each row says which harness wrote it
        harness_version = f"trialbook {version('trialbook')}"
        record, cut_off = _open_run(store, options, suite, lock.dataset_id, tier, harness_version)
        run_id = record.run_id
        done = store.finished(run_id)
        if cut_off:
            notes.append(f"{len(cut_off)} attempt(s) cut off by an earlier stop will run again")
        transcripts = options.ledger.parent / f"{options.ledger.stem}.transcripts" / run_id
        transcripts.mkdir(parents=True, exist_ok=True)
        scratch = _make_scratch(run_id)
        templates = _templates(
            tasks,
            options,
            run_id=run_id,
            tier=tier,
            temperature=suite.temperature,
            grade_after_timeout=suite.grade_after_timeout,
            scratch=scratch,
            hidden=_hidden(suite.root, options.ledger, transcripts.parent, scratch),
            run_fields={
                "system": record.system,
                "dataset_id": lock.dataset_id,
                "k_budget": suite.k,
                "model_version": record.model_version,
                "grader_version": suite.grader_version,
                "harness_version": harness_version,
                "sandbox": tier,
                # declared on every row of the run, or on none (the ledger checks it is constant)
                "graded_after_timeout": True if suite.grade_after_timeout else None,
            },
        )
        todo = _plan(templates, suite.k, suite.seeds, done)
        stop = stop or threading.Event()
        if progress is not None:
            progress.begin(run_id, len(todo) + len(done), len(done), notes)
        driver = Driver(
            store,
            run_id,
            options.jobs,
            transcripts=transcripts,
            transcript_base=options.ledger.parent,
            progress=progress,
            stop=stop,
        )
        watchdog = _start_watchdog(run_id, scratch)
        executor = (executor_factory or LocalExecutor)(options.jobs)
        try:
            driver.drive(todo, executor)
        except BaseException:
            store.record_event(run_id, "interrupted", {"written": driver.written})
            raise
        finally:
            executor.shutdown()
            shutil.rmtree(scratch, ignore_errors=True)
            Cgroup.release_idle()
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
