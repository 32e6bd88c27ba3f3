"""What every command shares: exit codes, the user-error wrapper and the option decorators.

Library errors name the Python argument (``confidence must ...``); :func:`user_errors` turns each
into one line that names the command's flag (``--confidence must ...``) and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, NoReturn, TypeVar

import click

from trialbook.analysis import INTERVAL_METHODS, IntervalOptions
from trialbook.cli._console import echo
from trialbook.errors import ArgumentError, TrialbookError

__all__ = [
    "EXIT_GATE",
    "EXIT_OK",
    "EXIT_USAGE",
    "IMPORT_SOURCES",
    "fail",
    "format_option",
    "interval_options",
    "parse_ks",
    "passed_env",
    "reward_option",
    "sandbox_choice",
    "sandbox_option",
    "source_option",
    "source_options",
    "user_errors",
]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2


def fail(problems: Sequence[str]) -> NoReturn:
    """Print one ``trialbook: error:`` line per problem and exit 2."""
    for line in problems:
        echo(f"trialbook: error: {line}", err=True)
    sys.exit(EXIT_USAGE)


def passed_env(names: Sequence[str]) -> dict[str, str]:
    """The values of the variables ``--pass-env`` names, each of which must be set here."""
    import os

    missing = [name for name in names if name not in os.environ]
    if missing:
        raise ArgumentError(f"--pass-env: not set in this environment: {', '.join(missing)}")
    return {name: os.environ[name] for name in names}


def user_errors(fn: F) -> F:
    """Turn library errors about the user's input into one line each and exit 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArgumentError as exc:
            fail([_as_flag(exc.argument, line) for line in exc.problems])
        except TrialbookError as exc:
            fail(exc.problems)
        except OSError as exc:
            fail([f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")])
        except MemoryError:
            # an input too large for this machine's memory (numpy's _ArrayMemoryError is one):
            # one line; a reading command has written nothing (an import writes after its read)
            fail(["out of memory reading the input: too large for this machine"])

    return wrapper  # type: ignore[return-value]


def _as_flag(argument: str | None, line: str) -> str:
    """A library message about a Python argument, spoken of as the command's flag for it."""
    ctx = click.get_current_context(silent=True)
    if argument is None or ctx is None:
        return line
    for param in ctx.command.params:
        if param.name == argument and isinstance(param, click.Option):
            flag = param.opts[0]  # the spelling the command declares first (-o, --ci, --runs)
            if line.startswith((f"{argument} ", f"{argument}:")):
                return flag + line[len(argument) :]
            return f"{flag}: {line}"
    return line


def parse_ks(_: click.Context, __: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    """``--k 1,2,5`` as sorted distinct whole numbers >= 1."""
    if value is None:
        return None
    ks: list[int] = []
    for part in value.split(","):
        text = part.strip()
        if not text.isdigit() or int(text) < 1:
            raise click.BadParameter(
                f"expected whole numbers >= 1 separated by commas, got {value!r}"
            )
        ks.append(int(text))
    return tuple(sorted(set(ks)))


def format_option(
    *choices: str,
    default: str | None = None,
    schema: str | None = None,
    required: bool = False,
    help: str | None = None,
) -> Callable[[F], F]:
    """``--format`` (Python name ``fmt``) with these choices, the first the default unless told;
    ``schema`` names the versioned JSON the command prints, in the help."""
    if help is None and schema is not None:
        help = f"Output format. JSON is versioned ({schema})."
    if required:
        # no default at all: click 8.5 takes an explicit ``default=None`` as a value given, and
        # would let the command run without the option it requires
        return click.option(
            "--format", "fmt", type=click.Choice(list(choices)), required=True, help=help
        )
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=default or choices[0],
        show_default=True,
        help=help,
    )


def interval_options(fn: F) -> F:
    """--confidence, --resamples, --seed and --ci, shared by every command that draws intervals.

    The defaults are IntervalOptions' own: one place for them in the whole project.
    """
    defaults = IntervalOptions()
    for option in reversed(
        (
            click.option(
                "--confidence",
                default=defaults.confidence,
                show_default=True,
                help="Two-sided interval level.",
            ),
            click.option(
                "--resamples",
                default=defaults.resamples,
                show_default=True,
                help="Bootstrap resamples over tasks.",
            ),
            click.option(
                "--seed",
                default=defaults.seed,
                show_default=True,
                help="Bootstrap seed (reported with the interval).",
            ),
            click.option(
                "--ci",
                "method",
                type=click.Choice(list(INTERVAL_METHODS)),
                default=defaults.method,
                show_default=True,
                help="Score interval: wilson (the Wilson interval over the effective number of "
                "tasks, honest at few tasks), or the task bootstrap's percentile or bca. A "
                "comparison's interval always agrees with its test.",
            ),
        )
    ):
        fn = option(fn)
    return fn


def sandbox_choice(process: str = "") -> Callable[[F], F]:
    """``--sandbox auto|bwrap|process|container`` (see docs/harness.md); ``process``: what else
    the command's help says the process tier cannot do, where the tier is chosen."""
    return click.option(
        "--sandbox",
        type=click.Choice(["auto", "bwrap", "process", "container"]),
        default=None,
        help=(
            "auto (the default): bubblewrap where it works, else the process tier (and say so); "
            "bwrap: require it; process: own session + rlimits only, and it cannot close the "
            f"network{process}; container: each command in a fresh container of the task's image "
            "(podman or docker)."
        ),
    )


sandbox_option = sandbox_choice()
"""``--sandbox auto|bwrap|process|container`` (see docs/harness.md)."""


def source_options(fn: F) -> F:
    """--run-id, --system, --as-attempts and --scorer: how another harness's files are read."""
    for option in reversed(
        (
            click.option(
                "--run-id",
                help="Run id to give the imported run (default: from the file's name; for jsonl/"
                "csv, the run of files whose rows carry none).",
            ),
            click.option("--system", help="System name, where the source does not record one."),
            click.option(
                "--as-attempts",
                type=click.Choice(["files", "runs"]),
                help="Several one-attempt Terminal-Bench runs pooled as one run's attempts: attempt "
                "index from the order the files are given (files, the default) or from each "
                "run's recorded start (runs).",
            ),
            click.option(
                "--scorer",
                help="Inspect: the scorer whose value decides passed, when the log has several (for a "
                "scorer whose value is a dict, the key, e.g. correct).",
            ),
        )
    ):
        fn = option(fn)
    return fn


reward_option = click.option(
    "--reward",
    metavar="KEY",
    help="Harbor: the reward key that decides passed, when the verifier records several (the "
    "other keys become named checks).",
)
"""``--reward KEY`` for commands that read Harbor job folders."""

IMPORT_SOURCES = ("inspect", "tau-bench", "tau2-bench", "terminal-bench", "swe-bench", "harbor")
"""Other harnesses whose files ``import``, ``score`` and ``compare`` read (docs/importers.md)."""

source_option = click.option(
    "--source",
    type=click.Choice(IMPORT_SOURCES),
    help="Read another harness's result files directly (default: a ledger by its suffix, else "
    "the one source that recognises the file).",
)
"""``--source NAME`` for commands that read a ledger."""
