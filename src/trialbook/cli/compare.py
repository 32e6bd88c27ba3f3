"""``trialbook compare``: two runs task by task, the difference, its interval and the decision."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trialbook.cli._console import echo, show
from trialbook.cli._options import (
    EXIT_GATE,
    format_option,
    interval_options,
    reward_option,
    source_option,
    user_errors,
)
from trialbook.cli._sequential import sequential_option, sequential_report

if TYPE_CHECKING:
    from trialbook.ledger import Ledger

__all__ = ["compare"]


@click.command()
@click.argument("baseline")
@click.argument("candidate", required=False)
@click.option(
    "--metric",
    default="pass@1",
    show_default=True,
    help="pass@K or pass^K, e.g. pass@1, pass^3; within@K (success within K rounds) for repair "
    "runs, where pass@K is read as within@K.",
)
@click.option(
    "--gate",
    type=click.Choice(["fail-on-regression", "require-improvement"]),
    help="Turn the decision into the exit code: 1 on a regression, or 1 unless an improvement; "
    "1 also when there are too few tasks to decide either way.",
)
@interval_options
@click.option(
    "--allow-different-suites",
    is_flag=True,
    help="Compare runs on different dataset_ids (said first).",
)
@click.option(
    "--allow-grader-change", is_flag=True, help="Compare runs graded by different grader versions."
)
@click.option(
    "--mixed-protocols",
    is_flag=True,
    help="Compare runs whose attempt protocols differ (independent, repair, human-selected): "
    "each side by its own protocol's figure, labelled so.",
)
@sequential_option
@source_option
@click.option("--scorer", help="Inspect: the scorer whose value decides passed (several scorers).")
@reward_option
@format_option("table", "json", "markdown", "html", schema="trialbook.compare/1")
@user_errors
def compare(
    baseline: str,
    candidate: str | None,
    metric: str,
    gate: str | None,
    confidence: float,
    resamples: int,
    seed: int,
    method: str,
    allow_different_suites: bool,
    allow_grader_change: bool,
    mixed_protocols: bool,
    sequential: bool,
    source: str | None,
    scorer: str | None,
    reward: str | None,
    fmt: str,
) -> None:
    """Compare BASELINE and CANDIDATE task by task (each LEDGER or LEDGER:RUN_ID).

    With BASELINE alone, a ledger of exactly two runs: the earlier run is the baseline, the later
    the candidate (said first, on standard error).

    Each LEDGER is a ledger file or another harness's result file (--source, or detected), e.g.
    a SWE-bench leaderboard file with one run per system: FILE:SYSTEM_KEY.

    The decision rule (docs/methodology.md, "Paired comparison and the decision rule"): improvement
    when the interval of the difference lies above 0, regression when below, otherwise no
    detectable difference; "not enough tasks to decide" when no outcome of so few tasks could
    reach the level. The p-value and the interval come from one test (a paired sign-flip test
    over tasks, mid-p McNemar with single attempts), so they never disagree. Exit 1 when --gate
    fails or cannot decide, 2 on bad input.
    """
    from trialbook import report as render
    from trialbook.analysis import CompareOptions, compare_runs
    from trialbook.importers import ImportOptions, read_source

    def read(path: Path) -> Ledger:
        return read_source([path], source, ImportOptions(scorer=scorer, reward=reward))

    if candidate is None:
        baseline, candidate = _two_runs(baseline, read)
        echo(
            f"comparing baseline {baseline} (the earlier run) with candidate {candidate}", err=True
        )

    # two runs of a race (or --sequential): the anytime-valid interval, never a fixed-design one
    if sequential_report(baseline, candidate, sequential, confidence, seed, fmt, gate, read):
        return
    result = compare_runs(
        baseline,
        candidate,
        CompareOptions(
            metric=metric,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            method=method,  # type: ignore[arg-type]
            allow_different_suites=allow_different_suites,
            allow_grader_change=allow_grader_change,
            mixed_protocols=mixed_protocols,
        ),
        read=read,
    )
    if fmt == "json":
        echo(render.to_json(render.compare_to_dict(result)))
    elif fmt == "markdown":
        echo(render.compare_markdown(result), nl=False)
    elif fmt == "html":
        echo(render.compare_html(result), nl=False)
    else:
        show(render.compare_table(result))
    undecided = result.decision == "not enough tasks to decide"
    failed = gate is not None and (
        undecided
        or (gate == "fail-on-regression" and result.decision == "regression")
        or (gate == "require-improvement" and result.decision != "improvement")
    )
    if gate:
        verdict = "NOT DECIDED: too few tasks" if undecided else "FAILED" if failed else "passed"
        echo(f"gate {gate}: {verdict} ({result.decision})", err=True)
    if failed:
        sys.exit(EXIT_GATE)


def _two_runs(spec: str, read: Callable[[Path], Ledger]) -> tuple[str, str]:
    """BASELINE alone: the two runs of that one ledger, earlier first; else the commands to type."""
    from trialbook.errors import ArgumentError

    if not Path(spec).exists():
        if not any(Path(spec[:i]).exists() for i, ch in enumerate(spec) if ch == ":" and i):
            raise ArgumentError(f"{spec}: no such file")
        raise ArgumentError(
            f"{spec}: give CANDIDATE too (BASELINE alone must be a ledger holding two runs)"
        )
    runs = read(Path(spec)).run_ids
    if len(runs) == 2:
        return f"{spec}:{runs[0]}", f"{spec}:{runs[1]}"
    if len(runs) < 2:
        held = f"one run ({runs[0]})" if runs else "no run"
        raise ArgumentError(
            f"{spec} holds {held}: give CANDIDATE, another ledger or LEDGER:RUN_ID to compare with"
        )
    shown = ", ".join(runs[:10]) + (f" and {len(runs) - 10} more" if len(runs) > 10 else "")
    raise ArgumentError(
        f"{spec} holds {len(runs)} runs ({shown}): name two, e.g. "
        f"trialbook compare {spec}:{runs[0]} {spec}:{runs[1]}"
    )
