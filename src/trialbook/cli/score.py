"""``trialbook score``: pass@k and pass^k per run, with task-bootstrap intervals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from trialbook.cli._console import echo, show
from trialbook.cli._options import (
    format_option,
    interval_options,
    parse_ks,
    reward_option,
    source_option,
    source_options,
    user_errors,
)

if TYPE_CHECKING:
    from trialbook.analysis import ScoreReport

__all__ = ["echo_score", "score"]


@click.command()
@click.argument("ledger", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--run", "run", help="Score only this run_id (default: every run in the ledger).")
@click.option(
    "--k",
    "ks",
    callback=parse_ks,
    metavar="K[,K...]",
    help="Budgets for pass@k and pass^k, e.g. 1,2,5. Default: 1 and every k up to the smallest "
    "number of attempts of any task. A k above some task's attempts is an error naming them.",
)
@interval_options
@click.option(
    "--weights",
    type=click.Choice(["equal", "declared"]),
    default="equal",
    show_default=True,
    help="Mean over tasks with equal weight, or with each task's declared 'weight'.",
)
@click.option(
    "--drop-infra-errors",
    is_flag=True,
    help="Drop attempts with status infra_error instead of counting them as failures "
    "(the report says so).",
)
@click.option("--tasks", "show_tasks", is_flag=True, help="Add the per-task table.")
@click.option(
    "--all-rows",
    is_flag=True,
    help="Keep the rows that repeat pass@1 (pass^1; the pooled attempt rate where it equals "
    "pass@1), left out by default.",
)
@source_option
@source_options
@reward_option
@format_option("table", "json", "markdown", "html", schema="trialbook.score/1")
@user_errors
def score(
    ledger: tuple[Path, ...],
    run: str | None,
    ks: tuple[int, ...] | None,
    confidence: float,
    resamples: int,
    seed: int,
    method: str,
    weights: str,
    drop_infra_errors: bool,
    show_tasks: bool,
    all_rows: bool,
    source: str | None,
    run_id: str | None,
    system: str | None,
    as_attempts: str | None,
    scorer: str | None,
    reward: str | None,
    fmt: str,
) -> None:
    """Score LEDGER: pass@k and pass^k per run, with task-bootstrap intervals and companion figures.

    LEDGER is a SQLite ledger (.db) or a .jsonl / .csv file, or another harness's result files
    read directly (--source, or detected where the format is unambiguous: an Inspect .eval or .json log, a
    tau-bench results list, tau2-bench results, a Terminal-Bench results.json, a SWE-bench
    report, a Harbor job folder). Every row is
    validated first; a ledger with any problem prints one line per problem (file, line, task,
    field) and no rate at all, and exits 2.
    """
    from trialbook.analysis import ScoreOptions, score_file, score_ledger

    options = ScoreOptions(
        ks=ks,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        method=method,  # type: ignore[arg-type]
        weights=weights,  # type: ignore[arg-type]
        drop_infra_errors=drop_infra_errors,
    )
    plain = (source, system, as_attempts, scorer, reward) == (None, None, None, None, None)
    if len(ledger) == 1 and plain and ledger[0].suffix.lower() in (".db", ".jsonl", ".csv"):
        # tallied, not read into rows: by SQLite for the store, a chunk at a time for a file
        report = score_file(ledger[0], run=run, options=options, default_run=run_id)
        echo_score(report, fmt, tasks=show_tasks, every=all_rows)
        return
    from trialbook.importers import ImportOptions, read_source  # only another harness's files

    rows = read_source(
        list(ledger),
        source,
        ImportOptions(
            run_id=run_id, system=system, as_attempts=as_attempts, scorer=scorer, reward=reward
        ),
    )
    echo_score(score_ledger(rows, run=run, options=options), fmt, tasks=show_tasks, every=all_rows)


def echo_score(report: ScoreReport, fmt: str, *, tasks: bool = False, every: bool = False) -> None:
    """Print a score report as a rich table, markdown, JSON or a self-contained HTML page
    (``tasks``: with the per-task table; ``every``: with the rows that repeat pass@1)."""
    from trialbook import report as render

    if fmt == "json":
        echo(render.to_json(render.score_to_dict(report)))
    elif fmt == "markdown":
        echo(render.score_markdown(report, tasks=tasks, every=every), nl=False)
    elif fmt == "html":
        echo(render.score_html(report), nl=False)
    else:
        show(render.score_table(report, tasks=tasks, every=every))
