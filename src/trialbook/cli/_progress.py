"""Progress of a run on the terminal: a rich bar on a tty, one plain line per attempt otherwise.

Every count is of the whole run: a resume starts from the counts of the attempts already in the
ledger (done, passed, timed out, infra errors), and time left is estimated from this session's pace.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trialbook.cli._console import echo, width

if TYPE_CHECKING:
    from trialbook.harness import Tally

__all__ = ["Progress", "time_left"]


def time_left(seconds: float | None) -> str:
    """``4 s left``, ``2 min left``, ``1.5 h left``; empty when there is no estimate yet."""
    if seconds is None:
        return ""
    if seconds < 90:
        return f"{seconds:.0f} s left"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min left"
    return f"{seconds / 3600:.1f} h left"


class Progress:
    """A :class:`trialbook.harness.RunProgress` that draws on standard error."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.tally: Tally | None = None
        self.total = self.session = 0
        self.started = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None:
        from trialbook.report import printable, wrap

        for note in notes:
            echo(wrap(printable(note), width()), err=True)
        self.total, self.tally, self.started = total, done, time.monotonic()
        echo(
            wrap(
                f"run {printable(run_id)}: {total - done.done} attempts to run "
                f"({done.done} already in the ledger)",
                width(),
            ),
            err=True,
        )
        if self.tty:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
            from rich.progress import Progress as Bar

            # the bar takes what the words leave of the terminal's width (at most rich's 40)
            self._bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(bar_width=max(10, min(40, width() - 66))),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(
                "attempts", total=total, completed=done.done, stats=self._stats()
            )

    def _left(self) -> float | None:
        """Seconds left at this session's pace (None before its first attempt)."""
        if self.session == 0 or self.tally is None:
            return None
        pace = (time.monotonic() - self.started) / self.session
        return pace * max(self.total - self.tally.done, 0)

    def _stats(self) -> str:
        t = self.tally
        if t is None:
            return ""
        stats = f"{t.passed} passed, {t.timed_out} timed out, {t.infra_errors} infra errors"
        left = time_left(self._left())
        return f"{stats} · {left}" if left else stats

    def attempt(self, row: Mapping[str, Any]) -> None:
        if self.tally is None:
            return
        self.tally = self.tally.add(row)
        self.session += 1
        stats = self._stats()
        if self._bar is not None:
            self._bar.update(self._task, completed=self.tally.done, stats=stats)
        else:
            from trialbook.report import printable, wrap

            line = (
                f"[{self.tally.done}/{self.total}] {printable(str(row['task_id']))} "
                f"#{row['attempt_index']}: {printable(str(row['status']))} "
                f"({float(row['elapsed_s']):.1f} s) · {stats}"
            )
            echo(wrap(line, width()), err=True)
