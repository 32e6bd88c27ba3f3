"""``trialbook import``: other harnesses' result files, or our own JSONL/CSV, into a SQLite ledger."""

from __future__ import annotations

from pathlib import Path

import click

from trialbook.cli._console import echo
from trialbook.cli._options import (
    IMPORT_SOURCES,
    fail,
    reward_option,
    source_options,
    user_errors,
)

__all__ = ["import_"]

SOURCES = (*IMPORT_SOURCES, "jsonl", "csv")
"""What ``trialbook import SOURCE`` reads (docs/importers.md)."""


@click.command(name="import")
@click.argument("source", metavar="SOURCE", type=click.Choice(SOURCES))
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--ledger",
    "ledger_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The SQLite ledger (.db) to append to; created if absent.",
)
@click.option(
    "--protocol",
    type=click.Choice(["independent", "repair", "human-selected"]),
    help="How the source's attempts were made, recorded on every row. Default: independent "
    "for other harnesses' files (they run independent trials); a jsonl/csv file keeps what its "
    "rows record (this fills rows that record none).",
)
@click.option(
    "--board",
    "leaderboard",
    metavar="NAME",
    help="swe-bench: the leaderboard of a leaderboards.json file to read (Verified, bash-only, ...).",
)
@click.option(
    "--max-source-mib",
    type=click.IntRange(min=1),
    default=64,  # importers.MAX_SOURCE_BYTES (not imported here: the CLI starts without numpy)
    show_default=True,
    help="The most MiB one source file may hold, or one member of an Inspect .eval inflate to "
    "(a JSON file is parsed whole, about 17 bytes of memory per byte): past it, not read.",
)
@source_options
@reward_option
@user_errors
def import_(
    source: str,
    paths: tuple[Path, ...],
    ledger_path: Path,
    run_id: str | None,
    system: str | None,
    as_attempts: str | None,
    scorer: str | None,
    protocol: str | None,
    leaderboard: str | None,
    reward: str | None,
    max_source_mib: int,
) -> None:
    """Append SOURCE files to a SQLite ledger: every row validated, all files or none.

    SOURCE is a harness whose results are read as its producer documents them (inspect,
    tau-bench, tau2-bench, terminal-bench, swe-bench, harbor; see docs/importers.md), or our own
    jsonl / csv ledger files. A folder stands for its files (tau2-bench: its directory format;
    harbor: a job folder). Nothing is invented: a field the source does not record
    is stored as not recorded, and the run records the source, its version, the files and their
    hashes, and what the source dropped. Rows are never overwritten: an attempt already in the
    ledger refuses the whole import.
    """
    from trialbook.errors import LedgerError, Problem
    from trialbook.importers import ImportOptions, read_source
    from trialbook.ledger import Ledger, import_files

    if ledger_path.suffix.lower() != ".db":
        fail([f"--ledger: expected a .db file, got {str(ledger_path)!r}"])
    if source in ("jsonl", "csv"):
        for flag, value in (
            ("--system", system),
            ("--as-attempts", as_attempts),
            ("--scorer", scorer),
            ("--board", leaderboard),
            ("--reward", reward),
        ):
            if value is not None:
                fail([f"{flag} applies to other harnesses' files, not to {source} ledgers"])
        bad = [p for p in paths if p.suffix.lower() != f".{source}"]
        if bad:
            fail([f"{p}: expected a .{source} file for 'trialbook import {source}'" for p in bad])
        ledgers: list[Ledger] = []
        problems: list[Problem] = []
        for p in paths:  # every file is read, so the count of problems covers them all
            try:
                ledgers.append(
                    read_source([p], source, ImportOptions(run_id=run_id, protocol=protocol))
                )
            except LedgerError as exc:
                problems.extend(exc.details)
        if problems:
            raise LedgerError(problems)
        if run_id is not None:
            for path, ledger in zip(paths, ledgers, strict=True):
                if ledger.run_ids != (run_id,):
                    others = ", ".join(repr(r) for r in ledger.run_ids)
                    fail(
                        [
                            f"{path}: its rows name run {others}; --run-id applies only to rows without one"
                        ]
                    )
    else:
        options = ImportOptions(
            max_bytes=max_source_mib * 1024**2,
            run_id=run_id,
            system=system,
            as_attempts=as_attempts,
            scorer=scorer,
            protocol=protocol,
            board=leaderboard,
            reward=reward,
        )
        ledgers = [read_source(list(paths), source, options)]
    count = import_files(ledger_path, ledgers)
    runs = sorted({r for ledger in ledgers for r in ledger.run_ids})
    stated = sorted({p for ledger in ledgers for p in ledger.distinct("protocol")})
    unstated = any(
        not ledger.run(r).recorded("protocol") for ledger in ledgers for r in ledger.run_ids
    )
    said = ", ".join(stated + (["not recorded (read as independent)"] if unstated else []))
    echo(
        f"imported {count} attempt{'s' if count != 1 else ''} of run{'s' if len(runs) != 1 else ''} "
        f"{', '.join(runs)} into {ledger_path} (protocol: {said})"
    )
