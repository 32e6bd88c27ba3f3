"""``trialbook runs``: the runs of a ledger, with status, attempts done of planned and pass@1."""

from __future__ import annotations

from pathlib import Path

import click

from trialbook.cli._console import echo, width
from trialbook.cli._options import format_option, user_errors

__all__ = ["runs"]


@click.command()
@click.argument(
    "ledger", required=False, type=click.Path(dir_okay=False, path_type=Path), metavar="[LEDGER]"
)
@format_option("table", "json", schema="trialbook.runs/1")
@user_errors
def runs(ledger: Path | None, fmt: str) -> None:
    """List the runs of a SQLite LEDGER (default: the project's, from trialbook.toml): id,
    system, dataset, status (finished / interrupted / running), attempts done of planned, start
    and pass@1 (mean over tasks; a quick look, not a score: 'trialbook score' draws intervals).

    'interrupted' covers a run stopped by Ctrl-C and one whose harness was killed; resume either
    with 'trialbook run --ledger LEDGER --resume ID'.
    """
    from trialbook import report as render
    from trialbook.errors import ArgumentError
    from trialbook.harness import list_runs, load_project

    if ledger is None:
        project = load_project(Path.cwd())
        if project is None or project.ledger is None:
            raise ArgumentError("give the LEDGER, or a ledger in trialbook.toml (docs/cli.md)")
        ledger = project.ledger
    found = list_runs(ledger)
    if fmt == "json":
        echo(render.to_json(render.runs_to_dict(found)))
    else:
        echo(render.runs_text(found, width=width()))
