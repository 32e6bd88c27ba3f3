"""``trialbook score``: pass@k and pass^k per run, with task-bootstrap intervals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from trialbook.cli._options import format_option, interval_options, parse_ks, user_errors

if TYPE_CHECKING:
    from trialbook.analysis import ScoreReport

__all__ = ["echo_score", "score"]


@click.command()
@click.argument("ledger", type=click.Path(dir_okay=False, path_type=Path))
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
@format_option("table", "json", "markdown", schema="trialbook.score/1")
@user_errors
def score(
    ledger: Path,
    run: str | None,
    ks: tuple[int, ...] | None,
    confidence: float,
    resamples: int,
    seed: int,
    method: str,
    weights: str,
    drop_infra_errors: bool,
    fmt: str,
) -> None:
    """Score LEDGER: pass@k and pass^k per run, with task-bootstrap intervals and companion figures.

    LEDGER is a SQLite ledger (.db) or a .jsonl / .csv file. Every row is validated first; a ledger
    with any problem prints one line per problem (file, line, task, field) and no rate at all, and
    exits 2.
    """
    from trialbook.analysis import ScoreOptions, score_file

    options = ScoreOptions(
        ks=ks,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        method=method,  # type: ignore[arg-type]
        weights=weights,  # type: ignore[arg-type]
        drop_infra_errors=drop_infra_errors,
    )
    echo_score(score_file(ledger, run=run, options=options), fmt)


def echo_score(report: ScoreReport, fmt: str) -> None:
    """Print a score report as a rich table, markdown or JSON."""
    from trialbook import report as render

    if fmt == "json":
        click.echo(render.to_json(render.score_to_dict(report)))
    elif fmt == "markdown":
        click.echo(render.score_markdown(report), nl=False)
    else:
        from rich.console import Console

        Console().print(render.score_table(report))
