"""Progress of a run on the terminal: a rich bar on a tty, one plain line per attempt otherwise."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

__all__ = ["Progress"]


class Progress:
    """A :class:`trialbook.harness.RunProgress` that draws on standard error."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.passes = self.timeouts = self.infra = self.done = 0
        self.total = 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def begin(self, run_id: str, total: int, done: int, notes: Sequence[str]) -> None:
        for note in notes:
            click.echo(note, err=True)
        self.total, self.done = total, done
        click.echo(
            f"run {run_id}: {total - done} attempts to run ({done} already in the ledger)", err=True
        )
        if self.tty:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bar

            self._bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("attempts", total=total, completed=done, stats="")

    def attempt(self, row: Mapping[str, Any]) -> None:
        self.done += 1
        self.passes += bool(row["passed"])
        self.timeouts += bool(row["timed_out"])
        self.infra += row["status"] == "infra_error"
        stats = f"passed {self.passes} · timed out {self.timeouts} · infra errors {self.infra}"
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, stats=stats)
        else:
            click.echo(
                f"[{self.done}/{self.total}] {row['task_id']} #{row['attempt_index']}: {row['status']} "
                f"({float(row['elapsed_s']):.1f} s) · {stats}",
                err=True,
            )
