"""``run_suite``: checks the options and the suite (``_resolve``), opens (or resumes) the run, plans
the attempts as self-contained specs and lets the driver run them on an executor.

The driver writes a start marker before each attempt and the row when it comes back, so a harness
killed at any instant leaves finished attempts (rows) and cut-off attempts (markers without rows);
a resume runs exactly the attempts without a row again and records how many were cut off.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import version
from pathlib import Path

from trialbook.errors import ArgumentError, HarnessError
from trialbook.harness.attempt import stored_feedback
from trialbook.harness.executors import Executor, LocalExecutor
from trialbook.harness.run._driver import Driver, Planned, RunProgress, Tally
from trialbook.harness.run._model import ModelGateway, model_gateway, model_record
from trialbook.harness.run._open import agent_digest, check_resume, new_record
from trialbook.harness.run._options import RunOptions, RunResult
from trialbook.harness.run._plan import harness_stamp, hidden_paths, plan, templates
from trialbook.harness.run._preflight import hidden_reasons, preflight
from trialbook.harness.run._resolve import check_options, frozen_suite, resolve
from trialbook.harness.run._select import Selection, select_tasks
from trialbook.harness.sandbox import (
    Cgroup,
    ContainerTarget,
    Tier,
    agent_files,
    base_env,
    clean_stale_runs,
    command_words,
    limit_notes,
    make_scratch,
    not_capped,
    prepare_environments,
    remove_tree,
    resolve_tier,
    run_key,
    start_watchdog,
    stop_watchdog,
    unbound_notes,
)
from trialbook.ledger import LedgerStore, RunRecord
from trialbook.suite import (
    Lock,
    Suite,
    Task,
)

__all__ = ["RunOptions", "RunResult", "run_suite"]


def _executor(options: RunOptions, model: ModelGateway | None) -> Executor:
    """The executor the options name (Ray is imported only for ``ray``); a Ray instance it starts
    never holds the model's real key (``model``: the run's gateway)."""
    if options.executor == "ray":
        from trialbook.harness.executors import RayExecutor

        withheld = (model.key_env,) if model is not None else ()
        return RayExecutor(options.jobs, options.ray_address, withheld=withheld)
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
    check_options(options)
    options, prior = resolve(options)
    assert options.suite is not None
    assert options.agent is not None
    suite, lock = frozen_suite(options.suite)
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
    mounts: tuple[str, ...] = ()
    if tier == "container":  # what of the host its container shows the agent: its own files
        hidden = (suite.root.resolve(), options.ledger.resolve(), transcripts_root.resolve())
        mounts = tuple(str(p) for p in agent_files(options.agent, env, hidden))
        if mounts:
            notes.append(f"the agent's container shows, read-only: {', '.join(mounts)}")

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
    executor = (
        executor_factory(options.jobs or 1) if executor_factory else _executor(options, model)
    )
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
            mounts=mounts,
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
    mounts: tuple[str, ...] = (),
) -> RunResult:
    """The run itself, on an executor that is ready: its record opened (or resumed), its attempts
    planned, driven and the run's end recorded."""
    assert options.agent is not None
    transcripts_root = options.ledger.parent / f"{options.ledger.stem}.transcripts"
    options.ledger.parent.mkdir(parents=True, exist_ok=True)
    harness_version = f"trialbook {version('trialbook')}"
    with LedgerStore(options.ledger) as store:
        if prior is None:
            opened = _new_run(
                store, options, suite, lock, tier, selection, tasks, digest, harness_version, mounts
            )
        else:
            opened = _resumed_run(store, options, prior)
        record, cut_off, lost = opened.record, opened.cut_off, opened.lost
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
            run_fields=_run_fields(suite, lock, tier, record, harness_version),
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
        _drive(driver, todo, executor, store, options, model, scratch)
        _stopped_by_harness(store, driver, options, model)
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
                **_gateway_detail(model),
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
        refused_unattributed=model.refused_unattributed if model is not None else None,
    )


def _gateway_detail(model: ModelGateway | None) -> dict[str, int]:
    """What a run's end event says of its model gateway: the calls it refused at the address of
    no open attempt, which no row holds."""
    return {} if model is None else {"model_refused_unattributed": model.refused_unattributed}


@dataclasses.dataclass(frozen=True)
class _Opened:
    """A run's record in the ledger, and what its earlier sessions left to run again."""

    record: RunRecord
    cut_off: list[tuple[str, int]]
    """(task, attempt) of the attempts an earlier stop cut off (a start marker without a row)."""
    lost: list[tuple[str, int, int]]
    """(task, attempt, retry) of the rows to run again: lost by the harness, or (``rerun_infra``)
    any infra error."""


def _new_run(
    store: LedgerStore,
    options: RunOptions,
    suite: Suite,
    lock: Lock,
    tier: Tier,
    selection: Selection,
    tasks: list[Task],
    digest: str | None,
    harness_version: str,
    mounts: tuple[str, ...],
) -> _Opened:
    """A new run's record, pinned in the ledger before its first attempt."""
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
    return _Opened(record, [], [])


def _resumed_run(store: LedgerStore, options: RunOptions, record: RunRecord) -> _Opened:
    """A resumed run: its record kept, what its earlier sessions left found and recorded."""
    # Processes an earlier, killed harness left behind died with clean_stale_runs (its scratch
    # folder names it); a live harness running this run id is left alone.
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
    return _Opened(record, cut_off, lost)


def _run_fields(
    suite: Suite, lock: Lock, tier: Tier, record: RunRecord, harness_version: str
) -> dict[str, object]:
    """The fields every row of the run carries."""
    return {
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
    }


def _drive(
    driver: Driver,
    todo: list[Planned],
    executor: Executor,
    store: LedgerStore,
    options: RunOptions,
    model: ModelGateway | None,
    scratch: Path,
) -> None:
    """The driver's loop under the run's watchdog, with the model gateway up; whatever ends it,
    the executor is shut down and the run's scratch, cgroups and watchdog are cleared."""
    run_id = driver.run_id
    withheld = (model.key_env,) if model is not None else ()
    watchdog = start_watchdog(f"{run_key(run_id)}/{harness_stamp()}/", scratch, withheld)
    if model is not None:
        model.start()
    try:
        driver.drive(todo, executor)
    except BaseException:
        store.record_event(
            run_id,
            "interrupted",
            {"written": driver.written, "executor": options.executor, **_gateway_detail(model)},
        )
        raise
    finally:
        executor.shutdown()
        if model is not None:
            model.stop()
        remove_tree(scratch)
        Cgroup.release_idle()
        stop_watchdog(watchdog)


def _stopped_by_harness(
    store: LedgerStore, driver: Driver, options: RunOptions, model: ModelGateway | None
) -> None:
    """Raise :class:`HarnessError` (the run recorded as interrupted) when the driver stopped the
    run because its first attempts all ended in the same harness error."""
    if driver.stopped_by is None:
        return
    store.record_event(
        driver.run_id,
        "interrupted",
        {
            "written": driver.written,
            "stopped": driver.stopped_by,
            "executor": options.executor,
            **_gateway_detail(model),
        },
    )
    raise HarnessError(
        f"run {driver.run_id} stopped after its first {driver.written} attempt(s) all ended in "
        f"the same harness error: {driver.stopped_by.removeprefix('harness error: ')}; "
        "fix it and start a new run"
    )
