"""``trialbook report``: one self-contained HTML page of every run in the ledgers, and their
comparison."""

from __future__ import annotations

import os
from pathlib import Path

import click

from trialbook.cli._console import echo
from trialbook.cli._options import interval_options, reward_option, source_option, user_errors

__all__ = ["report"]


@click.command()
@click.argument("ledger", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="The HTML file to write (written whole or not at all).",
)
@click.option(
    "--metric",
    default="pass@1",
    show_default=True,
    help="pass@K or pass^K: what the comparisons pair on.",
)
@click.option(
    "--baseline",
    metavar="RUN_ID",
    help="The run the other runs on its suite are compared with (default: the first run given).",
)
@interval_options
@click.option(
    "--drop-infra-errors",
    is_flag=True,
    help="Drop attempts with status infra_error instead of counting them as failures.",
)
@source_option
@reward_option
@user_errors
def report(
    ledger: tuple[Path, ...],
    output: Path,
    metric: str,
    baseline: str | None,
    confidence: float,
    resamples: int,
    seed: int,
    method: str,
    drop_infra_errors: bool,
    source: str | None,
    reward: str | None,
) -> None:
    """Write one HTML page of every run in LEDGER... and of their paired comparison.

    Per run: the headline, the scorecard and its companion figures, failures by outcome and error,
    pass@k and pass^k against k with interval bands, per-stratum rates, the task x attempt outcome
    grid (each attempt linking to its kept raw output), budget and cost curves, the selection view
    and fault table where the ledger has them, and the variance split. Runs on the same suite (same dataset_id) are
    compared with the baseline task by task: the decision, a per-task difference plot and the
    tasks that changed. The page fetches nothing and needs no JavaScript; plots need the extra
    trialbook[plots] (matplotlib), without which tables stand in their place. docs/report.md
    explains each figure.
    """
    from trialbook import report as render
    from trialbook.analysis import ReportOptions, build_report
    from trialbook.importers import ImportOptions, read_source

    options = ReportOptions(
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        method=method,  # type: ignore[arg-type]
        drop_infra_errors=drop_infra_errors,
        metric=metric,
        baseline=baseline,
    )
    read = ImportOptions(reward=reward)
    result = build_report([read_source([path], source, read) for path in ledger], options)
    page = render.report_html(result, base=output.resolve().parent)
    _write_whole(output, page)
    echo(f"wrote {output}", err=True)


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it: whole or not at all."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
