"""``trialbook export``: a ledger out in an interchange format (``import`` is in ``import_``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trialbook.cli._console import echo
from trialbook.cli._options import fail, format_option, user_errors

__all__ = ["export"]


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
        rows = rows.run(run, superseded=True)  # every row: export keeps what re-runs replaced
    if output is None:
        if fmt == "parquet" and sys.stdout.isatty():
            fail(["--format parquet is binary: give -o FILE or redirect standard output"])
        if fmt != "parquet" and sys.stdout.isatty():
            # a terminal reads the text: its values made printable (piped, the bytes are the data)
            import io

            from trialbook.report import json_printable

            buffer = io.BytesIO()
            write_ledger(rows, fmt, buffer)  # type: ignore[arg-type]
            text = buffer.getvalue().decode()
            echo(json_printable(text) if fmt == "jsonl" else text, nl=False)
            return
        write_ledger(rows, fmt, sys.stdout.buffer)  # type: ignore[arg-type]
        sys.stdout.buffer.flush()
        return
    count = write_ledger_file(rows, fmt, output)  # type: ignore[arg-type]
    echo(f"wrote {count} attempts to {output}", err=True)
