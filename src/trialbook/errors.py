"""Every exception trialbook raises for a user's mistake, in one place.

An agent's crash, timeout or wrong answer is never an exception: it is a ledger row. The exceptions
here are for input that cannot be scored honestly, and every message names the field, row or argument
at fault. The command line turns each into one line per problem and exit code 2.

    TrialbookError
     ├── LedgerError (ValueError)            a ledger that breaks the rules of docs/ledger.md
     ├── SuiteError (ValueError)             a suite folder that cannot be loaded or frozen
     ├── InsufficientAttemptsError (ValueError)  k larger than the attempts some tasks have
     ├── ArgumentError (ValueError)          an argument out of its range; ``argument`` names it
     └── HarnessError (RuntimeError)         a run stopped early: its first attempts all ended in
                                             the same harness-side error (a set-up problem)

Library messages name the Python argument (``confidence``); the command line maps
``ArgumentError.argument`` to its flag (``--confidence``) before printing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "ArgumentError",
    "HarnessError",
    "InsufficientAttemptsError",
    "LedgerError",
    "Problem",
    "SuiteError",
    "TrialbookError",
]


class TrialbookError(Exception):
    """Root of every error trialbook raises for bad input.

    ``problems`` holds one line per problem; ``str()`` joins them.
    """

    def __init__(self, problems: Sequence[str] | str) -> None:
        lines = [problems] if isinstance(problems, str) else list(problems)
        if not lines:
            raise ValueError("a TrialbookError needs at least one problem")
        self.problems: tuple[str, ...] = tuple(lines)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one ledger row (or with the ledger as a whole)."""

    line: int
    """1-based line of the file (the header is line 1 of a CSV); 0 for the ledger as a whole."""
    message: str
    """What is wrong, naming the task and the field."""
    source: str = ""
    """The file the row came from."""

    def render(self) -> str:
        """The problem as one line, e.g. ``runs.jsonl:12: task 'a': field 'passed': ...``."""
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.message}" if where else self.message


class LedgerError(TrialbookError, ValueError):
    """A ledger that cannot be scored. Nothing is printed from it and nothing is written."""

    MAX_SHOWN = 20

    def __init__(self, problems: Sequence[Problem]) -> None:
        ordered = sorted(problems)
        self.details: tuple[Problem, ...] = tuple(ordered)
        shown = [p.render() for p in ordered[: self.MAX_SHOWN]]
        hidden = len(ordered) - len(shown)
        if hidden:
            shown.append(f"... and {hidden} more problem{'s' if hidden != 1 else ''}")
        super().__init__(shown)


class InsufficientAttemptsError(TrialbookError, ValueError):
    """pass@k or pass^k asked for a k above the attempts of some tasks (never a silent 0, 1 or NaN)."""


class SuiteError(TrialbookError, ValueError):
    """A suite folder that cannot be loaded, frozen or run; one line per problem, naming file and key."""


class ArgumentError(TrialbookError, ValueError):
    """An argument outside its allowed range; the message names the argument and the value.

    ``argument`` is the Python name of the argument at fault (``confidence``), or None when the
    problem is not one argument's. The message speaks of that name, never of a command-line flag: the
    CLI knows which flag it maps to and says so.
    """

    def __init__(self, problems: Sequence[str] | str, *, argument: str | None = None) -> None:
        super().__init__(problems)
        self.argument = argument


class HarnessError(TrialbookError, RuntimeError):
    """A run that stopped early because its first attempts all ended in the same harness-side
    error (an agent that cannot start, a sandbox that will not come up): a set-up problem, not
    the agent's result. The rows written are kept; the run is recorded as interrupted."""
