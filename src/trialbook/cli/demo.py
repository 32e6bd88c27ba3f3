"""``trialbook demo``: the bundled suite through the harness with two simulated agents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from trialbook.cli._options import sandbox_option, user_errors
from trialbook.cli._progress import Progress

if TYPE_CHECKING:
    from trialbook.harness import RunResult, Tally
    from trialbook.suite import Lock

__all__ = ["demo"]

BANNER = (
    "[bold yellow]SIMULATED AGENTS[/] — the suite is real (21 small Python tasks with real tests, "
    "one more quarantined for a leaked oracle), but both agents are simulators: no model is "
    "called. Each applies a correct or a plausible wrong fix by seeded chance (the candidate a "
    "little more often), sometimes hangs past the timeout or leaves a process behind. These "
    "numbers show the method, not a system."
)


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-output"),
    show_default=True,
    help="Folder for the ledger, raw output and reports.",
)
@click.option("--jobs", default=2, show_default=True, help="Attempts run at once.")
@sandbox_option
@user_errors
def demo(out: Path, jobs: int, sandbox: str | None) -> None:
    """Run two SIMULATED agents on the bundled suite through the harness, score both, compare them.

    The suite is real (small Python tasks with real tests); the agents are simulators that apply a
    correct or a plausible wrong fix by seeded chance, sometimes hang or leave a process behind.
    """
    from rich.console import Console

    from trialbook import report as render
    from trialbook.demo import run_demo

    console = Console()
    console.print(BANNER)
    with _DemoProgress(console) as progress:
        result = run_demo(out, jobs=jobs, sandbox=sandbox or "auto", progress=progress)
    for report in result.scores.values():
        console.print(render.score_table(report))
    console.print(render.compare_text(result.comparison), markup=False)
    console.print(
        f"\neverything is in {out}/: suite/ (the frozen copy that ran), "
        f"ledger.db (both runs; export with 'trialbook export'), "
        f"ledger.transcripts/ (raw agent and grader output per attempt), "
        f"baseline-score.json/md, candidate-score.json/md, compare.json/md"
    )


class _DemoProgress:
    """The demo's steps on the console: the freeze, then each run with its own progress display."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.bar: Progress | None = None

    def __enter__(self) -> _DemoProgress:
        return self

    def __exit__(self, *_: object) -> None:
        self._stop_bar()

    def _stop_bar(self) -> None:
        if self.bar is not None:
            self.bar.__exit__()
            self.bar = None

    def frozen(self, lock: Lock, lock_path: Path) -> None:
        from trialbook import report as render

        self.console.print("\n[bold]freeze[/] (a copy of the bundled suite):")
        self.console.print(render.lock_text(lock, str(lock_path)), markup=False)

    def run_started(self, name: str) -> None:
        self.console.print(f"\n[bold]{name}[/]: k attempts per task through the harness ...")
        self.bar = Progress()

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None:
        if self.bar is not None:
            self.bar.begin(run_id, total, done, notes)

    def attempt(self, row: Mapping[str, Any]) -> None:
        if self.bar is not None:
            self.bar.attempt(row)

    def run_finished(self, name: str, result: RunResult) -> None:
        from trialbook import report as render

        self._stop_bar()
        self.console.print(render.run_text(result))
