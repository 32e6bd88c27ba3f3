"""``run_suite``: checks the options and the suite, opens (or resumes) the run, plans the attempts
as self-contained specs and lets the driver run them on an executor.

The driver writes a start marker before each attempt and the row when it comes back, so a harness
killed at any instant leaves finished attempts (rows) and cut-off attempts (markers without rows);
a resume runs exactly the attempts without a row again and records how many were cut off.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import version
from pathlib import Path

from trialbook.errors import ArgumentError, HarnessError
from trialbook.harness._cgroup import Cgroup, not_capped
from trialbook.harness._container import ContainerTarget
from trialbook.harness._container_wrap import agent_files
from trialbook.harness._driver import Driver, Planned, RunProgress, Tally
from trialbook.harness._env import base_env
from trialbook.harness._environments import prepare_environments
from trialbook.harness._executor import Executor, LocalExecutor
from trialbook.harness._feedback import stored_feedback
from trialbook.harness._fs import remove_tree, unbound_notes
from trialbook.harness._model import ModelGateway, model_gateway, model_record, resumed_model
from trialbook.harness._open import agent_digest, check_resume, new_record, resumed
from trialbook.harness._options import RunOptions, RunResult
from trialbook.harness._plan import harness_stamp, hidden_paths, plan, templates
from trialbook.harness._preflight import command_words
from trialbook.harness._preflight_run import hidden_reasons, preflight
from trialbook.harness._sandbox import Tier, limit_notes, resolve_tier
from trialbook.harness._scratch import (
    clean_stale_runs,
    make_scratch,
    start_watchdog,
    stop_watchdog,
)
from trialbook.harness._select import Selection, select_tasks
from trialbook.harness._sweep import run_key
from trialbook.ledger import LedgerStore, RunRecord
from trialbook.suite import (
    Lock,
    Suite,
    SuiteError,
    Task,
    check_lock,
    load_suite,
)

__all__ = ["RunOptions", "RunResult", "run_suite"]


def _check_options(options: RunOptions) -> None:
    if options.jobs is not None and options.jobs < 1:
        raise ArgumentError(f"jobs must be >= 1, got {options.jobs}", argument="jobs")
    if options.executor not in ("local", "ray"):
        raise ArgumentError(
            f"executor must be 'local' or 'ray', got {options.executor!r}", argument="executor"
        )
    if options.ray_address is not None and options.executor != "ray":
        raise ArgumentError("a Ray address needs the ray executor", argument="ray_address")
    if options.ledger.suffix.lower() != ".db":
        raise ArgumentError(
            f"ledger must be a SQLite ledger (.db) for the harness, got {str(options.ledger)!r}",
            argument="ledger",
        )
    if options.rerun_infra and options.resume is None:
        raise ArgumentError(
            "rerun_infra applies to a resume only: it runs again the infra errors of an "
            "existing run",
            argument="rerun_infra",
        )
    if options.resume is not None and not options.ledger.is_file():
        raise ArgumentError(
            f"{options.ledger}: no such file (no ledger to resume from)", argument="resume"
        )


def _frozen_suite(root: Path) -> tuple[Suite, Lock]:
    """The suite and its lock, refusing a lock that is missing or no longer matches the files."""
    suite = load_suite(root)
    check = check_lock(suite)
    if check.locked_id is None:
        raise SuiteError(
            f"{suite.root}: the suite has no lock: run 'trialbook suite freeze {suite.root}' first"
        )
    if not check.matches:
        what = "; ".join(check.changed)
        raise SuiteError(
            f"{suite.root}: the suite lock is stale ({what}): "
            f"run 'trialbook suite freeze {suite.root}' and start a new run"
        )
    return suite, check.current


def _resolve(options: RunOptions) -> tuple[RunOptions, RunRecord | None]:
    """The options of a new run, checked; or of a resume, completed from the run's record."""
    if options.resume is None:
        if options.suite is None:
            raise ArgumentError("give the suite folder to run", argument="suite")
        if options.agent is None:
            raise ArgumentError("give the agent's command", argument="agent")
        return options, None
    if options.subset is not None or options.tasks or options.limit is not None:
        raise ArgumentError(
            "a resume runs the run's own tasks: drop subset, tasks and limit", argument="resume"
        )
    with LedgerStore(options.ledger) as store:
        status = store.run(options.resume)
    if status is None:
        raise ArgumentError(f"no run {options.resume!r} in {options.ledger}", argument="resume")
    record = status.record
    if options.run_id not in (None, record.run_id) or options.system not in (None, record.system):
        raise ArgumentError(
            f"run {record.run_id!r} keeps its own id and system ({record.system}): drop run_id "
            "and system to resume it",
            argument="resume",
        )
    given = resumed(
        record,
        suite=options.suite,
        agent=options.agent,
        sandbox=options.sandbox,
        pass_env=tuple(options.pass_env),
    )
    values = dict(options.pass_env)
    missing = [name for name in given.pass_env if name not in values and name not in os.environ]
    if missing:
        raise ArgumentError(
            f"run {record.run_id!r} passes {', '.join(missing)} to its agent, and it is not set "
            "in this environment",
            argument="pass_env",
        )
    values = {name: values.get(name, os.environ.get(name, "")) for name in given.pass_env}
    model, network_model = resumed_model(
        record.run_id, record.model, options.model, options.network_model
    )
    completed = dataclasses.replace(
        options,
        suite=given.suite,
        agent=given.agent,
        sandbox=given.sandbox,
        pass_env=values,
        model=model,
        network_model=network_model,
    )
    return completed, record


def _executor(options: RunOptions) -> Executor:
    """The executor the options name (Ray is imported only for ``ray``)."""
    if options.executor == "ray":
        from trialbook.harness._ray import RayExecutor

        return RayExecutor(options.jobs, options.ray_address)
    return LocalExecutor(options.jobs or 1)


def run_suite(
    options: RunOptions,
    progress: RunProgress | None = None,
    stop: threading.Event | None = None,
    executor_factory: Callable[[int], Executor] | None = None,
) -> RunResult:
    """Run (or resume) one system on a frozen suite and append one row per finished attempt.

    Before the first attempt, the agent's and the graders' commands are checked (pre-flight): a
    program that is missing, not executable or hidden by the sandbox is refused then, with nothing
    written. When the first attempts all end in the same harness-side error, the run stops there
    (:class:`HarnessError`), its rows kept and the run recorded as interrupted.

    ``stop``: set it (e.g. on Ctrl-C) to stop cleanly: the executor cancels the running attempts,
    which are left without a row (cut off, run again by a resume), and the run records an
    'interrupted' event. ``executor_factory``: makes the executor from ``jobs`` (default: the
    one ``options.executor`` names, made once the pre-flight passed and before anything is
    written: a Ray cluster that cannot be reached writes nothing).
    """
    _check_options(options)
    options, prior = _resolve(options)
    assert options.suite is not None
    assert options.agent is not None
    suite, lock = _frozen_suite(options.suite)
    tier, tier_note = resolve_tier(options.sandbox or "auto")
    if prior is not None and prior.tasks is not None:
        selection = select_tasks(suite, lock, ids=prior.tasks)
    else:
        selection = select_tasks(
            suite, lock, subset=options.subset, patterns=options.tasks, limit=options.limit
        )
    tasks = list(selection.tasks)
    if not tasks:
        raise ArgumentError("no task to run: every selected task is quarantined", argument="tasks")
    if unknown := sorted(set(options.only) - {t.id for t in tasks}):
        raise ArgumentError(f"the run has no task {', '.join(unknown)}", argument="only")
    words = command_words(options.agent, "agent")
    env = base_env(options.pass_env)
    digest = agent_digest(options.agent, words, env["PATH"])
    if prior is not None:
        check_resume(prior, dataset_id=lock.dataset_id, tier=tier, digest=digest)
    transcripts_root = options.ledger.parent / f"{options.ledger.stem}.transcripts"
    reasons = hidden_reasons(suite.root, options.ledger, transcripts_root)
    environments = prepare_environments(tasks, tier, harness_stamp())
    if tier != "container":  # in a container the start check runs in each attempt's own
        preflight(options.agent, tasks, tier, reasons if tier == "bwrap" else {}, env)
    clean_stale_runs()  # a new run clears after killed ones, as a resume does
    notes = [tier_note] if tier_note else []
    longest = max([t.timeout_s for t in suite.tasks] + [t.grader_timeout_s for t in suite.tasks])
    notes += limit_notes(math.ceil(longest) + 10)
    notes += not_capped()
    notes += unbound_notes()
    if selection.quarantined:
        notes.append(f"quarantined (oracle leak), not run: {', '.join(selection.quarantined)}")

    tasks, model = model_gateway(
        options.model,
        tasks,
        tier=tier,
        executor=options.executor,
        pass_env=options.pass_env,
        network_model=options.network_model,
        resumed=(options.ledger, prior.run_id) if prior is not None else None,
        notes=notes,
    )
    executor = executor_factory(options.jobs or 1) if executor_factory else _executor(options)
    try:
        if options.executor == "ray":
            notes.append(f"on the Ray cluster: up to {executor.capacity()} attempt(s) at once")
        return _run(
            options,
            prior,
            suite,
            lock,
            tier,
            selection,
            tasks,
            digest,
            notes,
            executor,
            progress,
            stop,
            model,
            environments=environments,
        )
    finally:
        executor.shutdown()


def _run(
    options: RunOptions,
    prior: RunRecord | None,
    suite: Suite,
    lock: Lock,
    tier: Tier,
    selection: Selection,
    tasks: list[Task],
    digest: str | None,
    notes: list[str],
    executor: Executor,
    progress: RunProgress | None,
    stop: threading.Event | None,
    model: ModelGateway | None = None,
    *,
    environments: Mapping[str, ContainerTarget],
) -> RunResult:
    """The run itself, on an executor that is ready."""
    assert options.agent is not None
    transcripts_root = options.ledger.parent / f"{options.ledger.stem}.transcripts"
    options.ledger.parent.mkdir(parents=True, exist_ok=True)
    harness_version = f"trialbook {version('trialbook')}"
    mounts: tuple[str, ...] = ()
    if tier == "container":  # what of the host its container shows the agent: its own files
        hidden = (suite.root.resolve(), options.ledger.resolve(), transcripts_root.resolve())
        env = base_env(options.pass_env)
        mounts = tuple(str(p) for p in agent_files(options.agent, env, hidden))
        if mounts:
            notes.append(f"the agent's container shows, read-only: {', '.join(mounts)}")
    with LedgerStore(options.ledger) as store:
        if prior is None:
            record = new_record(
                run_id=options.run_id,
                system=options.system,
                fields={
                    "dataset_id": lock.dataset_id,
                    "suite_path": str(suite.root.resolve()),
                    "k_budget": suite.k,
                    "timeout_s": suite.timeout_s,
                    "temperature": suite.temperature,
                    "seeds": suite.seeds,
                    "model_version": options.model_version,
                    "grader_version": suite.grader_version,
                    "harness_version": harness_version,
                    "sandbox": tier,
                    "rerun_reason": options.rerun_reason,
                    "agent": options.agent,
                    "agent_digest": digest,
                    "graders": tuple(dict.fromkeys(t.grader for t in tasks)),
                    "pass_env": tuple(sorted(options.pass_env)),
                    "planned": len(tasks) * suite.k,
                    "tasks": tuple(t.id for t in tasks),
                    "selection": selection.description,
                    "protocol": suite.protocol,
                    "model": model_record(options.model, options.network_model),
                    "agent_mounts": mounts,
                },
            )
            store.create_run(record)
            cut_off: list[tuple[str, int]] = []
            lost: list[tuple[str, int, int]] = []
        else:
            record = prior
            # Processes an earlier, killed harness left behind died with clean_stale_runs above
            # (its scratch folder names it); a live harness running this run id is left alone.
            cut_off = store.unfinished_starts(record.run_id)
            lost = [
                item
                for item in store.lost(record.run_id, every_infra=options.rerun_infra)
                if not options.only or item[0] in options.only
            ]
            store.record_event(
                record.run_id,
                "resumed",
                {
                    "cut_off": len(cut_off),
                    "attempts": [f"{t}#{i}" for t, i in cut_off],
                    "rerun": len(lost),
                    "reruns": [f"{t}#{i}.{r + 1}" for t, i, r in lost],
                    "rerun_infra": options.rerun_infra,
                },
            )
        run_id = record.run_id
        done = store.finished(run_id)
        if cut_off:
            notes.append(f"{len(cut_off)} attempt(s) cut off by an earlier stop will run again")
        if lost:
            which = "ended in an infra error" if options.rerun_infra else "the harness lost"
            notes.append(f"{len(lost)} attempt(s) {which} will run again, each as a new row")
        transcripts = transcripts_root / run_id
        transcripts.mkdir(parents=True, exist_ok=True)
        scratch = make_scratch(run_id, run_key(run_id))
        specs = templates(
            tasks,
            options.agent,
            options.grace_s,
            options.pass_env,
            run_id=run_id,
            tier=tier,
            temperature=suite.temperature,
            grade_after_timeout=suite.grade_after_timeout,
            scratch=scratch,
            hidden=hidden_paths(suite.root, options.ledger, transcripts_root, scratch),
            environments=environments,
            run_fields={
                "system": record.system,
                "dataset_id": lock.dataset_id,
                "k_budget": suite.k,
                "model_version": record.model_version,
                # a resumed run keeps its record; each row says which harness wrote it
                "grader_version": suite.grader_version,
                "harness_version": harness_version,
                "sandbox": tier,
                # declared on every row of the run, or on none (the ledger checks it is constant)
                "graded_after_timeout": True if suite.grade_after_timeout else None,
                "protocol": suite.protocol,
            },
        )
        again = [
            Planned(specs[t], i, suite.seeds[i], retry + 1) for t, i, retry in lost if t in specs
        ]
        todo = plan(specs, suite.k, suite.seeds, done) + again
        if options.only:
            todo = [p for p in todo if p.template.task_id in set(options.only)]
        rounds = suite.protocol == "repair"
        feedback: dict[tuple[str, int], str] = {}
        if rounds:
            notes.append(
                "repair protocol: each task's attempts run in order, each told of the one before "
                "(TRIALBOOK_FEEDBACK)"
            )
            if done:  # a resumed repair run: the rounds done hand on their feedback
                levels = {t.id: t.feedback for t in suite.tasks}
                feedback = stored_feedback(store.read(run_id), options.ledger.parent, levels)
        stop = stop or threading.Event()
        if progress is not None:
            # the rows to be run again (infra errors, neither passed nor timed out) count as to do
            counts = Tally(*store.tally(run_id))
            counts = dataclasses.replace(
                counts, done=counts.done - len(again), infra_errors=counts.infra_errors - len(again)
            )
            progress.begin(run_id, len(todo) + len(done) - len(again), counts, notes)
        driver = Driver(
            store,
            run_id,
            options.jobs or len(todo) or 1,
            transcripts=transcripts,
            transcript_base=options.ledger.parent,
            progress=progress,
            stop=stop,
            rounds=rounds,
            feedback=feedback,
            model=model,
        )
        watchdog = start_watchdog(f"{run_key(run_id)}/{harness_stamp()}/", scratch)
        if model is not None:
            model.start()
        try:
            driver.drive(todo, executor)
        except BaseException:
            store.record_event(
                run_id, "interrupted", {"written": driver.written, "executor": options.executor}
            )
            raise
        finally:
            executor.shutdown()
            if model is not None:
                model.stop()
            remove_tree(scratch)
            Cgroup.release_idle()
            stop_watchdog(watchdog)
        if driver.stopped_by is not None:
            store.record_event(
                run_id,
                "interrupted",
                {
                    "written": driver.written,
                    "stopped": driver.stopped_by,
                    "executor": options.executor,
                },
            )
            raise HarnessError(
                f"run {run_id} stopped after its first {driver.written} attempt(s) all ended in "
                f"the same harness error: {driver.stopped_by.removeprefix('harness error: ')}; "
                "fix it and start a new run"
            )
        interrupted = stop.is_set() and driver.written < len(todo)
        # a run of some of its tasks (``only``) that leaves others undone is paused, not finished
        paused = bool(options.only) and len(store.finished(run_id)) < len(specs) * suite.k
        interrupted = interrupted or paused
        store.record_event(
            run_id,
            "interrupted" if interrupted else "finished",
            {
                "written": driver.written,
                "cut_off_rerun": len(cut_off),
                "executor": options.executor,
            },
        )
    return RunResult(
        run_id=run_id,
        ledger=options.ledger,
        tier=tier,
        planned=len(todo),
        written=driver.written,
        cut_off=len(cut_off),
        reruns=len(again),
        quarantined=selection.quarantined,
        interrupted=interrupted,
        notes=tuple(notes),
        resume_command=("run", "--ledger", str(options.ledger.resolve()), "--resume", run_id),
    )
