"""``trialbook budget``: coverage and cost for each per-task budget, fixed and stop at first pass."""

from __future__ import annotations

from pathlib import Path

import click

from trialbook.cli._console import echo, show
from trialbook.cli._options import (
    format_option,
    reward_option,
    source_option,
    source_options,
    user_errors,
)

__all__ = ["budget"]


@click.command()
@click.argument("ledger", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--run", "run", help="Replay only this run_id (default: every run in the ledger).")
@click.option(
    "--drop-infra-errors",
    is_flag=True,
    help="Drop attempts with status infra_error instead of counting them as failures, as score "
    "does (the report says so).",
)
@source_option
@source_options
@reward_option
@format_option("table", "json", "markdown", schema="trialbook.budget/1")
@user_errors
def budget(
    ledger: tuple[Path, ...],
    run: str | None,
    drop_infra_errors: bool,
    source: str | None,
    run_id: str | None,
    system: str | None,
    as_attempts: str | None,
    scorer: str | None,
    reward: str | None,
    fmt: str,
) -> None:
    """Replay budgets b = 1..k per task from LEDGER: coverage and cost, fixed and stopping early.

    For each b, in attempt_index order: the share of tasks with a pass within their first b
    attempts (coverage), the total cost of those b attempts of every task, and the total cost
    when each task stops at its first pass. A cost that was not measured stays "not measured"
    (null in JSON), never 0. The attempts replayed are those score scores: quarantined tasks and
    fault cases left out, infrastructure errors counted as failures unless dropped. k is the
    fewest attempts of any task. LEDGER is read as in score.
    """
    from trialbook import report as render
    from trialbook.analysis import ScoreOptions, budget_replay
    from trialbook.importers import ImportOptions, read_source

    rows = read_source(
        list(ledger),
        source,
        ImportOptions(
            run_id=run_id, system=system, as_attempts=as_attempts, scorer=scorer, reward=reward
        ),
    )
    result = budget_replay(rows, run=run, options=ScoreOptions(drop_infra_errors=drop_infra_errors))
    if fmt == "json":
        echo(render.to_json(render.budget_to_dict(result)))
    elif fmt == "markdown":
        echo(render.budget_markdown(result), nl=False)
    else:
        show(render.budget_table(result))
