"""``trialbook board``: many runs on one suite, ranked with joint intervals, on the cost-accuracy
frontier."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from trialbook.analysis import INTERVAL_METHODS, IntervalOptions
from trialbook.cli._console import echo, show
from trialbook.cli._options import (
    format_option,
    reward_option,
    source_option,
    user_errors,
)

if TYPE_CHECKING:
    from trialbook.ledger import Ledger

__all__ = ["board"]

_DEFAULTS = IntervalOptions()


@click.command()
@click.argument("ledger", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--run",
    "runs",
    multiple=True,
    metavar="ID",
    help="Rank only this run (repeat for more; default: every run of every LEDGER).",
)
@click.option(
    "--metric",
    default="pass@1",
    show_default=True,
    help="pass@K, pass^K (e.g. pass@1, pass^3) or mean-score (every attempt's partial credit).",
)
@click.option(
    "--cost",
    "cost",
    type=click.Choice(["per-task", "per-success"]),
    default="per-task",
    show_default=True,
    help="Cost of all attempts per task, or per task with a pass.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=round(1 - _DEFAULTS.confidence, 12),
    show_default=True,
    help="Family-wise level of the pairwise decisions (Holm); every interval is at 1 - alpha.",
)
@click.option(
    "--resamples",
    default=_DEFAULTS.resamples,
    show_default=True,
    help="Bootstrap resamples over tasks (and random sign patterns of the paired test).",
)
@click.option("--seed", default=_DEFAULTS.seed, show_default=True, help="Seed of both (reported).")
@click.option(
    "--ci",
    "method",
    type=click.Choice(list(INTERVAL_METHODS)),
    default=_DEFAULTS.method,
    show_default=True,
    help="The metric's interval, as score draws it: wilson, percentile or bca.",
)
@click.option(
    "--allow-different-suites",
    is_flag=True,
    help="Rank runs on different dataset_ids over the tasks they all share (said first).",
)
@source_option
@reward_option
@click.option(
    "--board",
    "leaderboard",
    metavar="NAME",
    help="SWE-bench leaderboards.json: the leaderboard to read (e.g. Verified, bash-only).",
)
@format_option("table", "json", "markdown", "html", schema="trialbook.board/1")
@user_errors
def board(
    ledger: tuple[Path, ...],
    runs: tuple[str, ...],
    metric: str,
    cost: str,
    alpha: float,
    resamples: int,
    seed: int,
    method: str,
    allow_different_suites: bool,
    source: str | None,
    reward: str | None,
    leaderboard: str | None,
    fmt: str,
) -> None:
    """Rank the runs of LEDGER... on one suite, with intervals that hold jointly.

    Each LEDGER is a ledger file or another harness's result files (--source, or detected): a
    SWE-bench leaderboard file (one run per submission; --board picks the leaderboard) or a
    Terminal-Bench leaderboard folder (one run per submission). Per system: score's metric and
    interval, cost with a task-bootstrap interval. Every pair is tested as compare tests it (a
    pair's p-value is compare's), Holm-adjusted over all pairs; rank intervals [1 + systems
    decided better, N - systems decided worse] hold jointly with probability at least 1 - alpha,
    and the systems whose interval contains 1 are the leaders. The frontier: the systems no
    other beats on both metric and cost; a system another beats significantly on both is
    dominated with confidence. Exit 2 on bad input.
    """
    from trialbook import report as render
    from trialbook.analysis import BoardOptions, board_runs
    from trialbook.importers import ImportOptions, read_source

    def read(path: Path) -> Ledger:
        return read_source([path], source, ImportOptions(board=leaderboard, reward=reward))

    result = board_runs(
        list(ledger),
        BoardOptions(
            metric=metric,
            cost=cost,  # type: ignore[arg-type]
            confidence=round(1 - alpha, 12),
            resamples=resamples,
            seed=seed,
            method=method,  # type: ignore[arg-type]
            allow_different_suites=allow_different_suites,
        ),
        runs=list(runs) or None,
        read=read,
    )
    if fmt == "json":
        echo(render.to_json(render.board_to_dict(result)))
    elif fmt == "markdown":
        echo(render.board_markdown(result), nl=False)
    elif fmt == "html":
        echo(render.board_html(result), nl=False)
    else:
        show(render.board_table(result))
