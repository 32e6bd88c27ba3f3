"""``trialbook passk``: pass@k and pass^k for one task worked out by hand."""

from __future__ import annotations

import click

from trialbook.cli._console import echo, width
from trialbook.cli._options import format_option, user_errors

__all__ = ["passk"]


@click.command()
@click.option("--n", "n", type=int, required=True, help="Attempts made (candidates generated).")
@click.option("--c", "c", type=int, required=True, help="Attempts that passed.")
@click.option("--k", "k", type=int, required=True, help="Attempts allowed per task.")
@click.option(
    "--clamp",
    is_flag=True,
    help="Cut c and k to n, as an interactive calculator would, and show the effective values.",
)
@format_option("text", "json")
@user_errors
def passk(n: int, c: int, k: int, clamp: bool, fmt: str) -> None:
    """Work out pass@k and pass^k for one task by hand, every step shown (docs/methodology.md,
    "pass@k and pass^k")."""
    from trialbook import report as render
    from trialbook.stats import pass_k_steps

    steps = pass_k_steps(n, c, k, clamp=clamp)
    if fmt == "json":
        echo(render.passk_json(steps))
    else:
        echo(render.passk_text(steps, width=width()))
