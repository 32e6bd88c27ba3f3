"""``trialbook import`` and ``trialbook export``: ledgers in and out of the interchange formats."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trialbook.cli._options import fail, format_option, user_errors

__all__ = ["export", "import_"]


@click.command(name="import")
@click.argument("fmt", metavar="jsonl|csv", type=click.Choice(["jsonl", "csv"]))
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--ledger",
    "ledger_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The SQLite ledger (.db) to append to; created if absent.",
)
@click.option(
    "--run-id",
    help="Run id for files whose rows carry none (default: each file's name without suffix).",
)
@user_errors
def import_(fmt: str, files: tuple[Path, ...], ledger_path: Path, run_id: str | None) -> None:
    """Append ledger files to a SQLite ledger: every row validated, all files or none.

    Rows are never overwritten: an attempt already in the ledger, or a k_budget that differs from
    the run's, refuses the whole import. A run the ledger lacks is created from what its rows agree
    on (system, dataset_id, k_budget, versions).
    """
    from trialbook.ledger import import_files, read_ledger

    problems: list[str] = []
    for path in files:
        if path.suffix.lower() != f".{fmt}":
            problems.append(f"{path}: expected a .{fmt} file for 'trialbook import {fmt}'")
    if ledger_path.suffix.lower() != ".db":
        problems.append(f"--ledger: expected a .db file, got {str(ledger_path)!r}")
    if problems:
        fail(problems)
    ledgers = [read_ledger(path, default_run=run_id) for path in files]
    if run_id is not None:
        for path, ledger in zip(files, ledgers, strict=True):
            if ledger.run_ids != (run_id,):
                others = ", ".join(repr(r) for r in ledger.run_ids)
                fail(
                    [
                        f"{path}: its rows name run {others}; --run-id applies only to rows without one"
                    ]
                )
    count = import_files(ledger_path, ledgers)
    runs = sorted({r for ledger in ledgers for r in ledger.run_ids})
    click.echo(
        f"imported {count} attempt{'s' if count != 1 else ''} of run{'s' if len(runs) != 1 else ''} "
        f"{', '.join(runs)} into {ledger_path}"
    )


@click.command()
@click.argument("ledger", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run", "run", help="Export only this run_id (default: every run).")
@format_option(
    "jsonl",
    "csv",
    "parquet",
    required=True,
    help="Interchange format: every field of every row, types kept, unknown as null.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write (default: standard output). Written whole or not at all.",
)
@user_errors
def export(ledger: Path, run: str | None, fmt: str, output: Path | None) -> None:
    """Write a ledger (.db, .jsonl or .csv) as JSONL, CSV or Parquet."""
    from trialbook.ledger import read_ledger, write_ledger, write_ledger_file

    rows = read_ledger(ledger)
    if run is not None:
        rows = rows.run(run)
    if output is None:
        if fmt == "parquet" and sys.stdout.isatty():
            fail(["--format parquet is binary: give -o FILE or redirect standard output"])
        write_ledger(rows, fmt, sys.stdout.buffer)  # type: ignore[arg-type]
        sys.stdout.buffer.flush()
        return
    count = write_ledger_file(rows, fmt, output)  # type: ignore[arg-type]
    click.echo(f"wrote {count} attempts to {output}", err=True)
