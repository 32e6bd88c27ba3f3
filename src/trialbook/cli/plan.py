"""``trialbook plan``: what a design of T tasks x R attempts can detect."""

from __future__ import annotations

from pathlib import Path

import click

from trialbook.cli._console import echo, width
from trialbook.cli._options import format_option, user_errors

__all__ = ["plan"]


@click.command()
@click.option("--tasks", "tasks", type=int, required=True, help="T: tasks in the design.")
@click.option(
    "--runs",
    "attempts",
    type=int,
    default=1,
    show_default=True,
    help="R: independent attempts (runs) of each task.",
)
@click.option("--baseline", type=float, help="Assumed baseline pass rate (or from --pilot).")
@click.option("--effect", type=float, required=True, help="Difference to detect, e.g. 0.03.")
@click.option("--alpha", default=0.05, show_default=True, help="Two-sided significance level.")
@click.option("--power", default=0.8, show_default=True, help="Target power.")
@click.option(
    "--between-var",
    type=float,
    help="Between-task variance of true rates (default: half of P(1-P)).",
)
@click.option(
    "--within-var", type=float, help="Within-task variance of attempts (default: half of P(1-P))."
)
@click.option(
    "--agreement",
    type=float,
    help="Share of tasks where two systems agree with one attempt each (paired designs). With "
    "--runs > 1 extra runs are credited against the disagreement only when the within-task "
    "variance is known (--within-var, --between-var or a --pilot with 2+ attempts per task).",
)
@click.option(
    "--pilot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Estimate variances from a pilot ledger (two runs also give the agreement of their first "
    "attempts; single-attempt runs give no variance split, so the assumed one is used and named).",
)
@format_option("text", "json")
@user_errors
def plan(
    tasks: int,
    attempts: int,
    baseline: float | None,
    effect: float,
    alpha: float,
    power: float,
    between_var: float | None,
    within_var: float | None,
    agreement: float | None,
    pilot: Path | None,
    fmt: str,
) -> None:
    """What T tasks x R attempts can detect: SE, interval half-width, MDE unpaired and paired, power.

    Every output ends with the assumptions the figures rest on (JSON: "assumptions").
    """
    from trialbook import report as render
    from trialbook.analysis import plan_from_options

    result = plan_from_options(
        tasks=tasks,
        attempts=attempts,
        baseline=baseline,
        effect=effect,
        alpha=alpha,
        power=power,
        between_var=between_var,
        within_var=within_var,
        agreement=agreement,
        pilot=pilot,
    )
    if fmt == "json":
        echo(render.to_json(render.plan_to_dict(result)))
    else:
        echo(render.plan_text(result, width=width()), nl=False)
