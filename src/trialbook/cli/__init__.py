"""The command line: parse -> call one library function -> render -> exit code.

Exit codes: 0 success; 1 a gate failed; 2 bad input or usage, one line per problem, no traceback
(``trialbook.cli._options``). Each command lives in a module of its own and imports numpy, scipy,
pyarrow and rich inside its body, so that ``trialbook --help`` is quick.
"""

from __future__ import annotations

import sys

import click

from trialbook.cli.board import board
from trialbook.cli.budget import budget
from trialbook.cli.compare import compare
from trialbook.cli.demo import demo
from trialbook.cli.grader_check import grader_check
from trialbook.cli.import_ import import_
from trialbook.cli.io import export
from trialbook.cli.passk import passk
from trialbook.cli.plan import plan
from trialbook.cli.race import race
from trialbook.cli.report import report
from trialbook.cli.run import run
from trialbook.cli.runs import runs
from trialbook.cli.score import score
from trialbook.cli.suite import suite

__all__ = ["entry", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="trialbook")
def main() -> None:
    """trialbook: agent scores you can defend.

    Run an agent on a frozen suite (k sandboxed attempts per task, one ledger row each), score a
    ledger (pass@k and pass^k with intervals that resample tasks, the effort and cost behind them),
    compare two runs, plan a design, or work pass@k out by hand. Ledgers are .db (SQLite), .jsonl or
    .csv, one row per attempt; see docs/ledger.md.
    """


for _command in (
    score,
    compare,
    board,
    budget,
    report,
    plan,
    passk,
    suite,
    grader_check,
    run,
    runs,
    race,
    import_,
    export,
    demo,
):
    main.add_command(_command)


def entry() -> None:
    """The console script: ``main`` in a process of its own.

    pyarrow imports pandas (0.4 s) on its first call whenever pandas is installed, only to check
    whether its arguments are pandas objects; a trialbook command never passes one, so the command
    line process refuses the import. (Library users and in-process callers of ``main`` are not
    affected.)
    """
    if "pandas" not in sys.modules:
        sys.meta_path.insert(0, _NoPandas())
    _reuse_freed_memory()
    main()


def _reuse_freed_memory() -> None:
    """Keep the memory a command frees for its next arrays instead of handing it back (glibc only).

    By default glibc returns a freed block of more than 128 KB to the kernel at once, and trims the
    heap once its free top passes twice the largest block freed, so a command that makes and drops
    arrays of a million rows asks the kernel for new pages again and again; each new page costs a
    fault and zeroing (on a VM whose host takes back guest memory, a host fault too: 2.7 ms per MB
    measured on the benchmark machine, a third of ``score big.db``'s time; docs/ledger.md). The
    console process is short-lived, so blocks up to 32 MB come from the heap and a free top of up to
    512 MB stays, and the thread that draws the task bootstrap (``trialbook.background``) takes its
    arrays from that heap too instead of an arena of new pages of its own.
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter already loaded
    except (OSError, AttributeError):  # not glibc: its allocator keeps its own policy
        return
    m_trim_threshold, m_mmap_threshold, m_arena_max = -1, -3, -8  # <malloc.h>
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 512 << 20)
    mallopt(m_arena_max, 1)  # a second thread's arrays come from the same heap, not new pages


class _NoPandas:
    """An import finder that refuses pandas (pyarrow then skips its pandas integration)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("the trialbook command line does not use pandas")
