"""``compare``'s sequential path: a race's runs, or ``--sequential`` on any two runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trialbook.cli._console import echo
from trialbook.cli._options import EXIT_GATE

if TYPE_CHECKING:
    from trialbook.ledger import Ledger

__all__ = ["sequential_option", "sequential_report"]

sequential_option = click.option(
    "--sequential",
    is_flag=True,
    help="Report the anytime-valid interval (a confidence sequence over the paired tasks in a "
    "random order, --seed; alpha = 1 - --confidence) instead of the fixed-design one. A race's "
    "runs always get their race's.",
)


def sequential_report(
    baseline: str,
    candidate: str,
    sequential: bool,
    confidence: float,
    seed: int,
    fmt: str,
    gate: str | None,
    read: Callable[[Path], Ledger],
) -> bool:
    """Print the sequential comparison and apply the gate, when there is one; False otherwise
    (a plain comparison of two runs that are not a race, without --sequential)."""
    from trialbook import report as render
    from trialbook.analysis import SequentialOptions, sequential_compare

    options = SequentialOptions(alpha=1 - confidence, order_seed=seed) if sequential else None
    result = sequential_compare(baseline, candidate, options, read=read)
    if result is None:
        return False
    doc = render.sequential_to_dict(result)
    if fmt == "json":
        echo(render.to_json(doc))
    else:
        echo(render.sequential_text(result), nl=False)
    decision = str(doc["decision"])
    if gate is not None:
        undecided = decision == "undecided"
        failed = (
            undecided
            or (gate == "fail-on-regression" and decision == "regression")
            or (gate == "require-improvement" and decision != "improvement")
        )
        verdict = (
            "NOT DECIDED: the race did not stop" if undecided else "FAILED" if failed else "passed"
        )
        echo(f"gate {gate}: {verdict} ({decision})", err=True)
        if failed:
            sys.exit(EXIT_GATE)
    return True
