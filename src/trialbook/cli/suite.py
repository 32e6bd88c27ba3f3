"""``trialbook suite freeze``, ``trialbook suite check`` and ``trialbook suite import``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trialbook.cli._console import echo, width
from trialbook.cli._options import EXIT_GATE, format_option, user_errors

__all__ = ["suite"]


@click.group()
def suite() -> None:
    """Freeze a suite (dataset_id, oracle-leak quarantine) and check its lock."""


@suite.command(name="freeze")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@format_option("table", "json", schema="trialbook.suite/1")
@user_errors
def suite_freeze(directory: Path, fmt: str) -> None:
    """Hash every prompt, fixture, oracle, grader and budget field into the dataset_id, quarantine
    tasks whose oracle leaks into their prompt or fixture, and write suite.lock.json."""
    from trialbook import report as render
    from trialbook.suite import feedback_warnings, freeze, load_suite, write_lock

    loaded = load_suite(directory)
    lock = freeze(loaded)
    path = write_lock(loaded, lock)
    for warning in feedback_warnings(loaded):
        echo(f"warning: {warning}", err=True)
    if fmt == "json":
        echo(render.to_json(lock.to_dict()))
    else:
        echo(render.lock_text(lock, str(path), width=width()))


@suite.command(name="check")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@format_option("table", "json", schema="trialbook.suite_check/1")
@user_errors
def suite_check(directory: Path, fmt: str) -> None:
    """Say whether suite.lock.json still matches the files (exit 1 when stale or missing)."""
    from trialbook import report as render
    from trialbook.suite import check_lock

    result = check_lock(directory)
    if fmt == "json":
        echo(render.to_json(render.lock_check_to_dict(result)))
    else:
        echo(render.lock_check_text(result, str(directory), width=width()))
    if not result.matches:
        sys.exit(EXIT_GATE)


@suite.command(name="import")
@click.argument("kind", type=click.Choice(["harbor"]))
@click.argument("dataset", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="The suite folder to write (new); the solutions go to OUT.solutions beside it.",
)
@click.option("--k", "k", type=int, default=1, show_default=True, help="Attempts per task.")
@user_errors
def suite_import(kind: str, dataset: Path, out: Path, k: int) -> None:
    """Write a Harbor dataset (or one Harbor task) as a frozen suite of the container tier.

    Each task: instruction.md the prompt, environment/ its image, tests/ the oracle (bound at
    /tests), tests/test.sh the verifier, whose reward file is the verdict; solution/ goes to
    OUT.solutions, where run.sh is the oracle agent. What trialbook cannot honour is refused in
    one line naming the task and the key, nothing written (docs/suites.md, "Harbor datasets")."""
    from trialbook.errors import SuiteError
    from trialbook.suite import freeze, import_harbor, load_suite, write_lock

    done = import_harbor(dataset, out, k=k)
    loaded = load_suite(done.suite)
    notes = list(done.notes)
    try:  # the freeze reads the digests of the images the tasks rest on from the local engine
        lock = freeze(loaded)
    except SuiteError as exc:
        lock = None
        notes.append(
            f"not frozen: {exc}; where the images are, run 'trialbook suite freeze {done.suite}'"
        )
    if lock is not None:
        write_lock(loaded, lock)
    for note in notes:
        echo(f"note: {note}", err=True)
    agent = (done.solutions / "run.sh").resolve()
    echo(f"{len(done.tasks)} Harbor task(s) written to {done.suite}")
    if lock is not None:
        echo(f"dataset {lock.dataset_id}")
    echo(f"the oracle agent: {agent}")
    echo(f"try:\n  trialbook run {done.suite} --sandbox container --ledger oracle.db \\")
    echo(f"    --agent {agent}")
