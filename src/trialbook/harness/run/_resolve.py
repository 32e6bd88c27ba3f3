"""A run's options checked, and a resume's completed from its record; the frozen suite it runs.

Everything here refuses before anything is written: a bad option, a resume that names another
run's id or system, a suite without a lock or with a stale one.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.harness.run._model import resumed_model
from trialbook.harness.run._open import resumed
from trialbook.harness.run._options import RunOptions
from trialbook.ledger import LedgerStore, RunRecord
from trialbook.suite import Lock, Suite, SuiteError, check_lock, load_suite

__all__ = ["check_options", "frozen_suite", "resolve"]


def check_options(options: RunOptions) -> None:
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


def frozen_suite(root: Path) -> tuple[Suite, Lock]:
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


def resolve(options: RunOptions) -> tuple[RunOptions, RunRecord | None]:
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
