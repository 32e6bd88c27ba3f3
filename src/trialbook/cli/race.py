"""``trialbook race``: baseline and candidate on one suite, stopped as soon as the answer is known."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trialbook.cli._console import echo
from trialbook.cli._options import format_option, passed_env, sandbox_option, user_errors

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trialbook.ledger.store import RaceRecord
    from trialbook.stats import SequenceLook

__all__ = ["race"]

EXIT_INTERRUPTED = 130
"""A race stopped by Ctrl-C or SIGTERM (resumable), as ``trialbook run`` reports it."""


class _Lines:
    """Progress on standard error: one line per task pair."""

    def begin(self, race: RaceRecord, notes: Sequence[str]) -> None:
        import textwrap

        head = (
            f"race {race.race_id}: {len(race.task_order)} tasks in a random order "
            f"(seed {race.order_seed}); {race.stopping_rule}"
        )
        echo(textwrap.fill(head, 80, subsequent_indent="  "), err=True)
        for note in notes:
            echo(f"note: {note}", err=True)

    def look(self, look: SequenceLook, tasks_total: int, attempts: int, full: int) -> None:
        from trialbook import report as render

        echo(render.race_look_line(look, tasks_total, attempts, full), err=True)


@click.command()
@click.argument(
    "suite_dir",
    metavar="[SUITE]",
    required=False,
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option("--baseline", help="The baseline agent's command (run through /bin/sh -c).")
@click.option("--candidate", help="The candidate agent's command.")
@click.option(
    "--ledger",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite ledger (.db) both runs and the race are written to; created if absent.",
)
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Error rate kept at every look at once (the interval is 1 - alpha).",
)
@click.option(
    "--min-effect",
    type=float,
    metavar="D",
    help="Also stop, with 'no meaningful difference', once every difference of at least D "
    "(a difference of pass rates, e.g. 0.05) is excluded.",
)
@click.option("--max-tasks", type=int, metavar="N", help="Use at most N task pairs.")
@click.option(
    "--order-seed",
    type=int,
    default=0,
    show_default=True,
    metavar="S",
    help="Seed of the random task order.",
)
@click.option(
    "--method",
    type=click.Choice(["spending", "betting-population", "betting-suite", "discordant"]),
    default="spending",
    show_default=True,
    help="The sequential design (docs/statistics.md): alpha spent over the suite's known size "
    "(O'Brien-Fleming type, about the fixed design's power); the betting confidence sequence "
    "for the task population's or the full suite's mean difference; or the discordant-pair "
    "test (single attempts, no interval).",
)
@click.option("--jobs", type=int, default=1, show_default=True, help="Task pairs run at once.")
@click.option(
    "--resume", metavar="RACE_ID", help="Continue race RACE_ID from the ledger (same order)."
)
@click.option("--race-id", help="Id of the new race (default: race-<UTC time>-<6 hex digits>).")
@click.option(
    "--baseline-system",
    default="baseline",
    show_default=True,
    help="System name of the baseline's run (its run id is RACE_ID-NAME).",
)
@click.option(
    "--candidate-system",
    default="candidate",
    show_default=True,
    help="System name of the candidate's run.",
)
@sandbox_option
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    help="Pass this variable of the caller's environment to both agents (repeatable).",
)
@format_option("table", "json", schema="trialbook.race/1")
@user_errors
def race(
    suite_dir: Path | None,
    baseline: str | None,
    candidate: str | None,
    ledger: Path,
    alpha: float,
    min_effect: float | None,
    max_tasks: int | None,
    order_seed: int,
    method: str,
    jobs: int,
    resume: str | None,
    race_id: str | None,
    baseline_system: str,
    candidate_system: str,
    sandbox: str | None,
    pass_env: tuple[str, ...],
    fmt: str,
) -> None:
    """Race CANDIDATE against BASELINE on a frozen SUITE: both run task by task in a seeded
    random order (same tasks, same seeds), and the race stops as soon as its sequential interval
    for the mean per-task difference excludes 0 (improvement or regression), or excludes every
    difference of at least --min-effect, or the suite (--max-tasks) is spent.

    The default design spends alpha over the suite's size (its horizon), so it keeps the error
    rate at every look at once and about the power of a fixed design on the whole suite
    (docs/statistics.md). Progress prints one line per task pair on standard error. Ctrl-C stops
    cleanly; --resume continues with the same order. Exit 130 when interrupted, 2 on bad input.
    """

    from trialbook import report as render
    from trialbook.cli._signals import stop_on_signals
    from trialbook.cli.run import program_name
    from trialbook.race import RaceOptions, run_race

    env = passed_env(pass_env)
    options = RaceOptions(
        ledger=ledger,
        suite=suite_dir,
        baseline=baseline,
        candidate=candidate,
        alpha=alpha,
        min_effect=min_effect,
        max_tasks=max_tasks,
        order_seed=order_seed,
        method=method,
        jobs=jobs,
        resume=resume,
        race_id=race_id,
        baseline_system=baseline_system,
        candidate_system=candidate_system,
        sandbox=sandbox,
        pass_env=env,
    )
    with stop_on_signals() as stop:
        result = run_race(options, progress=_Lines(), stop=stop)
    if fmt == "json":
        echo(render.to_json(render.race_to_dict(result)))
    else:
        echo(render.race_text(result, program=program_name()), nl=False)
    if result.interrupted:
        sys.exit(EXIT_INTERRUPTED)
