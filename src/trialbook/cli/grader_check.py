"""``trialbook grader-check``: the grader's own regression set, false accepts and false rejects."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trialbook.cli._console import echo, width
from trialbook.cli._options import EXIT_GATE, format_option, sandbox_option, user_errors

__all__ = ["grader_check"]


@click.command(name="grader-check")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@sandbox_option
@click.option("--jobs", default=1, show_default=True, help="Graders run at once.")
@click.option(
    "--allow-unvalidated",
    is_flag=True,
    help="Exit 0 although some task has no known-good sample (it is still listed).",
)
@format_option("table", "json", schema="trialbook.grader_check/1")
@user_errors
def grader_check(
    directory: Path, sandbox: str | None, jobs: int, allow_unvalidated: bool, fmt: str
) -> None:
    """Run each task's grader on its untouched fixture (must fail), its reference/ and each
    references/<name>/ (must pass) and each decoys/<name>/ (must fail), and hold each sample to
    the checks its expect.json names; print false accepts and false rejects per task, per grader
    and per check, with the grader's version; exit 1 if any, or if some task has no known-good
    sample (its false rejects are not measured) unless --allow-unvalidated."""
    from trialbook import report as render
    from trialbook.errors import ArgumentError
    from trialbook.harness import grader_check as check
    from trialbook.harness import resolve_tier
    from trialbook.suite import load_suite

    if jobs < 1:
        raise ArgumentError(f"jobs must be >= 1, got {jobs}", argument="jobs")
    loaded = load_suite(directory)
    tier, note = resolve_tier(sandbox or "auto")
    if note:
        echo(note, err=True)
    result = check(loaded, tier, jobs)
    if fmt == "json":
        echo(render.to_json(render.grader_check_to_dict(result)))
    else:
        echo(render.grader_check_text(result, width=width()))
    if result.failed or (result.unvalidated and not allow_unvalidated):
        sys.exit(EXIT_GATE)
