"""``trialbook demo``: the bundled suite through the harness with two simulated agents."""

from __future__ import annotations

import sys
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
    Ends by writing OUT/report.html (both runs and their comparison) and a short summary.
    """
    from rich.console import Console

    from trialbook import report as render
    from trialbook.demo import check_out, run_demo

    check_out(out)  # a folder that cannot take the demo: its one line before any banner
    # the banner and the summary on standard output, wrapped at words to the terminal (80
    # columns when piped); the steps on standard error
    console = Console(highlight=False)
    console.print(BANNER)
    with _DemoProgress(Console(stderr=True, highlight=False)) as progress:
        result = run_demo(out, jobs=jobs, sandbox=sandbox or "auto", progress=progress)
    c = result.comparison
    for score in result.scores.values():
        console.print(render.headline(score.runs[0]), markup=False)
    console.print(
        f"compare ({c.metric}): {c.decision}, candidate - baseline "
        f"{_pp(c.difference.estimate)}, {c.confidence:.0%} interval "
        f"{_pp(c.ci_low)} to {_pp(c.ci_high)} over {c.tasks} paired tasks",
        markup=False,
    )
    # paths on lines of their own, never folded mid-word however long they are
    console.print("\nthe report of both runs and their comparison (open it in a browser):")
    console.print(f"  {result.report}", markup=False, soft_wrap=True)
    console.print(
        "beside it: ledger.db (both runs), ledger.transcripts/ (raw output per attempt), suite/ "
        "(the frozen copy that ran), <system>-score.json/md, compare.json/md",
        markup=False,
    )
    console.print(
        "next, with trialbook from the venv that 'make demo' made (.venv/bin/trialbook, or "
        "'source .venv/bin/activate' first):",
        markup=False,
    )
    for command in ("score", "report", "compare"):  # compare: the ledger's two runs
        console.print(f"  trialbook {command} {out / 'ledger.db'}", markup=False, soft_wrap=True)


def _pp(x: float) -> str:
    """Points with a sign; a bound that rounds to zero is +0.0 pp, never -0.0 pp."""
    return f"{round(100 * x, 1) + 0.0:+.1f} pp"


class _DemoProgress:
    """The demo's steps on standard error: one line for the freeze, then per run a live bar on a
    terminal, or a line when it starts and one when it ends when piped."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.bar: Progress | None = None
        self.tally: Tally | None = None
        self.tty = sys.stderr.isatty()

    def __enter__(self) -> _DemoProgress:
        return self

    def __exit__(self, *_: object) -> None:
        self._stop_bar()

    def _stop_bar(self) -> None:
        if self.bar is not None:
            self.bar.__exit__()
            self.bar = None

    def frozen(self, lock: Lock, lock_path: Path) -> None:
        self.console.print(
            f"\nfroze a copy of the bundled suite: {len(lock.task_hashes)} tasks, "
            f"{len(lock.quarantined)} quarantined for a leaked oracle ({', '.join(lock.quarantined)}); "
            f"dataset_id {lock.dataset_id[:19]}…",
            markup=False,
        )

    def run_started(self, name: str) -> None:
        self.console.print(f"[bold]{name}[/]: k attempts per task through the harness")
        self.bar = Progress() if self.tty else None

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None:
        self.tally = done
        if self.bar is not None:
            self.bar.begin(run_id, total, done, ())

    def attempt(self, row: Mapping[str, Any]) -> None:
        if self.tally is not None:
            self.tally = self.tally.add(row)
        if self.bar is not None:
            self.bar.attempt(row)

    def run_finished(self, name: str, result: RunResult) -> None:
        from trialbook import report as render

        self._stop_bar()
        t = self.tally
        if t is None or result.interrupted:
            # and how to resume
            self.console.print(render.printable(render.run_text(result), lines=True), markup=False)
        else:
            self.console.print(
                f"  run {result.run_id} ({result.tier} sandbox): {t.done} attempts, {t.passed} "
                f"passed, {t.timed_out} timed out, {t.infra_errors} infrastructure errors",
                markup=False,
            )
        for note in result.notes:
            self.console.print(f"  note: {render.printable(note)}", markup=False)
