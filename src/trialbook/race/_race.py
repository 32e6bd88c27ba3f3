"""``run_race``: two systems on one suite, task pair by task pair, until the answer is known.

The race records itself in the ledger before the first attempt (settings, the seeded task order,
the two run ids), then repeats: take the next ``jobs`` tasks of the order, run the baseline's
attempts of them, then the candidate's (the harness's ``only`` option: the same seeds per attempt
index in both runs), read both runs' finished tasks back from the ledger, and feed the sequence
the pairs that are complete, in order. It stops at the first look that decides, or when the suite
or ``max_tasks`` is spent, and records why ('stopped' event).

Everything the sequence sees comes from the ledger, so a resume (``resume=RACE_ID``) rebuilds the
same state from the rows and continues with the same order: a crash loses at most the attempts
that were running, which the harness runs again. Tasks of a batch past the stopping pair ran and
stay in the ledger; the sequence never looks at them, so where a race stops depends only on the
order and the outcomes, never on ``jobs``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from trialbook.analysis import (
    STOP_REASONS,
    SequenceReplay,
    SequentialOptions,
    run_task_rates,
    task_differences,
)
from trialbook.errors import ArgumentError, TrialbookError
from trialbook.harness import RunOptions, check_agents, run_suite
from trialbook.ledger.store import LedgerStore, RaceRecord, RaceStatus
from trialbook.stats import SequenceLook, task_order
from trialbook.suite import check_lock, load_suite

__all__ = ["RaceOptions", "RaceProgress", "RaceResult", "run_race"]


@dataclass(frozen=True)
class RaceOptions:
    """Everything ``trialbook race`` takes."""

    ledger: Path
    """The SQLite ledger (.db) both runs and the race are written to."""
    suite: Path | None = None
    """The suite folder; None to resume (the race's record names it)."""
    baseline: str | None = None
    """The baseline's command; None to resume."""
    candidate: str | None = None
    """The candidate's command; None to resume."""
    alpha: float = 0.05
    min_effect: float | None = None
    max_tasks: int | None = None
    order_seed: int = 0
    method: str = "spending"
    jobs: int = 1
    """Task pairs run at once (each side's attempts of ``jobs`` tasks run in parallel)."""
    resume: str | None = None
    """Continue this race (after a crash or an interrupt) from the ledger."""
    race_id: str | None = None
    baseline_system: str = "baseline"
    candidate_system: str = "candidate"
    sandbox: str | None = None
    pass_env: Mapping[str, str] = field(default_factory=dict)


class RaceProgress(Protocol):
    """What a race reports while it runs (the CLI prints a line per look)."""

    def begin(self, race: RaceRecord, notes: Sequence[str]) -> None: ...

    def look(self, look: SequenceLook, tasks_total: int, attempts: int, full: int) -> None:
        """After each task pair: the look, attempts run so far (both runs), and the attempts the
        whole suite would take."""


@dataclass(frozen=True)
class RaceResult:
    """What a race did, stopped or interrupted."""

    race_id: str
    ledger: Path
    baseline_run: str
    candidate_run: str
    method: str
    alpha: float
    min_effect: float | None
    order_seed: int
    look: SequenceLook
    """The sequence at the stop: estimate, interval, decision."""
    stopped_because: str | None
    """One of ``analysis.STOP_REASONS``; None when interrupted."""
    tasks_used: int
    """Task pairs the sequence took."""
    tasks_total: int
    """Tasks in the suite (the race's order)."""
    attempts_used: int
    """Attempts both runs made (including any past the stopping pair in its batch)."""
    attempts_full: int
    """Attempts running both systems on the whole suite takes."""
    interrupted: bool
    resume_command: tuple[str, ...]
    """The ``trialbook race`` arguments that continue this race."""

    @property
    def decision(self) -> str:
        """improvement, regression, no meaningful difference, no detectable difference (the
        tasks ran out first) or undecided (interrupted)."""
        if self.look.decision != "undecided":
            return self.look.decision
        return "undecided" if self.stopped_because is None else "no detectable difference"


def _rule(options: SequentialOptions) -> str:
    words = f"stop when the {options.method} sequence at alpha={options.alpha} excludes 0"
    if options.min_effect is not None:
        words += f", or excludes every difference of at least {options.min_effect}"
    limit = f"{options.max_tasks} task pairs are" if options.max_tasks else "the whole suite is"
    return words + f", or when {limit} spent"


def _check(options: RaceOptions) -> None:
    if options.jobs < 1:
        raise ArgumentError(f"jobs must be >= 1, got {options.jobs}", argument="jobs")
    if options.ledger.suffix.lower() != ".db":
        raise ArgumentError(
            f"ledger must be a SQLite ledger (.db) for a race, got {str(options.ledger)!r}",
            argument="ledger",
        )
    if options.resume is None:
        for name in ("suite", "baseline", "candidate"):
            if getattr(options, name) is None:
                raise ArgumentError(f"give the {name} to start a race", argument=name)
        if options.baseline_system == options.candidate_system:
            raise ArgumentError(
                "the baseline and the candidate need different system names",
                argument="candidate_system",
            )
    elif any(getattr(options, name) is not None for name in ("suite", "baseline", "candidate")):
        raise ArgumentError(
            "a resumed race keeps its suite and commands (its runs record them): drop them",
            argument="resume",
        )
    elif not options.ledger.is_file():
        raise ArgumentError(f"no ledger {str(options.ledger)!r} to resume from", argument="resume")


def _new_race(options: RaceOptions, sequential: SequentialOptions) -> RaceRecord:
    assert options.suite is not None
    suite = load_suite(options.suite)
    check = check_lock(suite)
    if not check.matches:
        raise TrialbookError(
            f"{suite.root}: the suite lock is stale or missing: run "
            f"'trialbook suite freeze {suite.root}' first"
        )
    if suite.protocol != "independent":
        # the sequential tests pair tasks as independent draws of each system's success
        raise ArgumentError(
            f"{suite.root}: protocol {suite.protocol!r}: a race compares independent attempts; "
            "race a suite whose protocol is independent",
            argument="suite",
        )
    if sequential.method == "discordant" and suite.k != 1:
        raise ArgumentError(
            f"the discordant test takes single-attempt suites; this one has k={suite.k}: use "
            "method spending",
            argument="method",
        )
    ids = [t.id for t in suite.tasks if t.id not in check.current.quarantined]
    if not ids:
        raise ArgumentError("no task to race: every task is quarantined", argument="suite")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    race_id = options.race_id or f"race-{stamp}-{os.urandom(3).hex()}"
    return RaceRecord(
        race_id=race_id,
        baseline_run=f"{race_id}-{options.baseline_system}",
        candidate_run=f"{race_id}-{options.candidate_system}",
        baseline_agent=str(options.baseline),
        candidate_agent=str(options.candidate),
        method=sequential.method,
        alpha=sequential.alpha,
        order_seed=sequential.order_seed,
        task_order=task_order(ids, sequential.order_seed),
        stopping_rule=_rule(sequential),
        dataset_id=check.current.dataset_id,
        suite_path=str(suite.root.resolve()),
        min_effect=sequential.min_effect,
        max_tasks=sequential.max_tasks,
    )


def _resumed(options: RaceOptions, store: LedgerStore) -> RaceStatus:
    assert options.resume is not None
    status = store.race(options.resume)
    if status is None:
        raise ArgumentError(f"no race {options.resume!r} in {options.ledger}", argument="resume")
    return status


def _side(
    options: RaceOptions,
    store: LedgerStore,
    *,
    run_id: str,
    system: str,
    agent: str | None,
    suite: Path,
    tasks: tuple[str, ...],
    stop: threading.Event,
) -> None:
    """Run one system's missing attempts of ``tasks`` (creating its run the first time)."""
    exists = store.run(run_id) is not None
    run_suite(
        RunOptions(
            suite=None if exists else suite,
            agent=None if exists else agent,
            ledger=options.ledger,
            system=None if exists else system,
            run_id=None if exists else run_id,
            resume=run_id if exists else None,
            jobs=options.jobs,
            sandbox=options.sandbox,
            pass_env=options.pass_env,
            only=tasks,
        ),
        stop=stop,
    )


def run_race(
    options: RaceOptions,
    progress: RaceProgress | None = None,
    stop: threading.Event | None = None,
) -> RaceResult:
    """Race the candidate against the baseline on a frozen suite (or resume a race).

    ``stop``: set it (e.g. on Ctrl-C) to stop after the running attempts are cut off; the race
    records an 'interrupted' event and ``resume`` continues it. Errors of the input are
    :class:`ArgumentError` (nothing written); an agent that fails is data (its rows).
    """
    _check(options)
    sequential = SequentialOptions(
        alpha=options.alpha,
        method=options.method,  # type: ignore[arg-type]
        order_seed=options.order_seed,
        min_effect=options.min_effect,
        max_tasks=options.max_tasks,
    )
    stop = stop or threading.Event()
    was_stopped = False
    fresh: RaceRecord | None = None
    if options.resume is None:  # every check before the ledger file is opened (or created)
        sequential.check()
        fresh = _new_race(options, sequential)
        assert options.suite is not None
        for name in ("baseline", "candidate"):
            try:
                check_agents(
                    options.suite,
                    [str(getattr(options, name))],
                    ledger=options.ledger,
                    sandbox=options.sandbox,
                    pass_env=options.pass_env,
                )
            except ArgumentError as exc:  # the agent's problem, spoken of as its option
                if exc.argument != "agent":
                    raise
                raise ArgumentError(exc.problems, argument=name) from None
    with LedgerStore(options.ledger) as store:
        if fresh is not None:
            race = fresh
            if store.race(race.race_id) is not None:
                raise ArgumentError(f"race {race.race_id!r} already exists", argument="race_id")
            store.create_race(race)
        else:
            status = _resumed(options, store)
            race = status.record
            sequential = SequentialOptions(
                alpha=race.alpha,
                method=race.method,  # type: ignore[arg-type]
                order_seed=race.order_seed,
                min_effect=race.min_effect,
                max_tasks=race.max_tasks,
            )
            was_stopped = status.status == "stopped"
            if not was_stopped:
                store.record_race_event(race.race_id, "resumed")
        assert race.suite_path is not None
        suite = Path(race.suite_path)
        k = load_suite(suite).k
        replay = SequenceReplay(race.task_order, sequential, attempts=k)
        full = 2 * k * len(race.task_order)
        if progress is not None:
            progress.begin(race, [])

        def attempts() -> int:
            return sum(store.tally(r)[0] for r in (race.baseline_run, race.candidate_run))

        def catch_up() -> None:
            known = {r.record.run_id for r in store.runs()}
            rates = [
                run_task_rates(store.read(r), r) if r in known else {}
                for r in (race.baseline_run, race.candidate_run)
            ]
            new = replay.advance(task_differences(*rates, attempts=k))
            if progress is not None:
                for look in new:
                    progress.look(look, len(race.task_order), attempts(), full)

        def done(run_id: str, tasks: tuple[str, ...]) -> bool:
            finished = store.finished(run_id)
            return all((t, i) in finished for t in tasks for i in range(k))

        catch_up()
        try:
            while replay.stopped_because is None and not stop.is_set():
                batch = replay.next_tasks(options.jobs)
                before = replay.used
                for run_id, agent in (
                    (race.baseline_run, race.baseline_agent),
                    (race.candidate_run, race.candidate_agent),
                ):
                    if not stop.is_set() and not done(run_id, batch):
                        _side(
                            options,
                            store,
                            run_id=run_id,
                            system=run_id.removeprefix(f"{race.race_id}-"),
                            agent=agent,
                            suite=suite,
                            tasks=batch,
                            stop=stop,
                        )
                catch_up()
                if replay.used == before and not stop.is_set():
                    # every attempt comes back as a row (errors are data), so this is a bug
                    raise TrialbookError(
                        f"race {race.race_id}: the batch {', '.join(batch)} left no task pair "
                        "finished; resume it with --resume"
                    )
        except BaseException:
            store.record_race_event(race.race_id, "interrupted", {"tasks_used": replay.used})
            raise
        look = replay.look
        used = attempts()
        if replay.stopped_because is None:
            store.record_race_event(race.race_id, "interrupted", {"tasks_used": replay.used})
        elif not was_stopped:
            store.record_race_event(
                race.race_id,
                "stopped",
                {
                    "decision": look.decision,
                    "stopped_because": replay.stopped_because,
                    "tasks_used": replay.used,
                    "attempts_used": used,
                    "estimate": look.estimate,
                    "ci_low": look.ci_low,
                    "ci_high": look.ci_high,
                },
            )
    assert replay.stopped_because in (None, *STOP_REASONS)
    return RaceResult(
        race_id=race.race_id,
        ledger=options.ledger,
        baseline_run=race.baseline_run,
        candidate_run=race.candidate_run,
        method=race.method,
        alpha=race.alpha,
        min_effect=race.min_effect,
        order_seed=race.order_seed,
        look=look,
        stopped_because=replay.stopped_because,
        tasks_used=replay.used,
        tasks_total=len(race.task_order),
        attempts_used=used,
        attempts_full=full,
        interrupted=replay.stopped_because is None,
        resume_command=(
            "race",
            "--ledger",
            str(options.ledger.resolve()),
            "--resume",
            race.race_id,
        ),
    )
