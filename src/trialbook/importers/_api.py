"""From source files to a validated :class:`Ledger`: what ``trialbook import`` and ``score --source``
call. All or nothing: every file is read and every row validated before anything is returned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from trialbook.errors import ArgumentError, LedgerError, Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._registry import detect_source, get_importer, importer_names
from trialbook.ledger import (
    PROTOCOLS,
    Ledger,
    Provenance,
    ledger_from_rows,
    ledger_rows,
    read_ledger,
)
from trialbook.ledger.formats import format_of

__all__ = ["LEDGER_SOURCES", "imported_ledger", "read_runs", "read_source", "source_for"]

LEDGER_SOURCES = ("jsonl", "csv")
"""Our own interchange formats, read by :mod:`trialbook.ledger` (not importers)."""


def read_runs(source: str, paths: Sequence[Path], options: ImportOptions) -> list[ImportedRun]:
    """Every run the importer ``source`` reads from ``paths`` (raises on the first bad file)."""
    if not paths:
        raise ArgumentError("paths: give at least one file", argument="paths")
    try:
        runs = list(get_importer(source).read(paths, options))
    except LedgerError as exc:
        looked = [
            f
            for p in paths
            for f in (sorted(x for x in p.iterdir() if x.is_file()) if p.is_dir() else [p])
        ]
        hints = [Problem(0, hint, str(p)) for p in looked if (hint := _looks_like(p, source))]
        if not hints:
            raise
        raise LedgerError([*exc.details, *hints]) from None
    seen: set[str] = set()
    for run in runs:
        if run.run_id in seen:
            raise ArgumentError(
                f"two runs read from {source} files are both called {run.run_id!r}: import them "
                "separately, or name them with --run-id one at a time",
                argument="run_id",
            )
        seen.add(run.run_id)
    return runs


def imported_ledger(
    runs: Sequence[ImportedRun], source: str, protocol: str = "independent"
) -> Ledger:
    """The rows of imported runs validated as one ledger (every rule of a ledger file), each run
    carrying its provenance and every row ``protocol`` (the foreign harnesses run independent
    trials; an import may say otherwise). ``source`` names the ledger in messages."""
    check_protocol(protocol)
    rows = [{**row, "protocol": protocol} for run in runs for row in run.rows]
    if not rows:
        raise ArgumentError("the files hold no attempt", argument="paths")
    ledger = ledger_from_rows(rows, source)
    return replace(
        ledger,
        provenance={
            run.run_id: Provenance(run.source, run.source_version, run.files, run.notes)
            for run in runs
        },
    )


def _claims(name: str, path: Path) -> bool:
    """Whether the importer ``name`` recognises ``path`` (a peek; one that fails claims nothing)."""
    try:
        return bool(get_importer(name).detect(path))
    except (OSError, ValueError):
        return False


def _looks_like(path: Path, source: str) -> str | None:
    """What ``path`` looks like when the importer ``source`` could not read it: the other sources
    that recognise it, or a ledger file's format; None when nothing does."""
    if format_of(path) is not None:
        return f"read as {source}, but this is a ledger file: leave out --source"
    claims = [n for n in importer_names() if n != source and _claims(n, path)]
    if not claims:
        return None
    return f"read as {source}, but it looks like {' or '.join(claims)}: try --source {claims[0]}"


def _expand(paths: Sequence[Path], source: str | None) -> list[Path]:
    """With the source to be detected (``source`` None), ``paths`` with each folder no importer
    reads whole (tau2-bench's results folder is one) replaced by the files in it that may be a
    ledger or a source's (.db, .jsonl, .csv, .json, .eval, or one an importer recognises; others,
    a README say, and hidden ones left out): a folder stands for its files. A named source's
    importer reads a folder itself."""
    if source is not None:
        return list(paths)
    out: list[Path] = []
    for path in paths:
        if not path.is_dir() or detect_source(path) is not None:
            out.append(path)
            continue
        files = sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith("."))
        known = [
            f
            for f in files
            if format_of(f) is not None
            or f.suffix.lower() in (".json", ".eval")
            or detect_source(f) is not None
        ]
        if not known:
            raise ArgumentError(
                f"{path}: no file in this folder is a ledger (.db, .jsonl, .csv) or another "
                "harness's result file (a folder stands for its files); name the file, or its "
                "source with --source",
                argument="paths",
            )
        out += known
    return out


def source_for(path: Path, source: str | None) -> str | None:
    """The importer to read ``path`` with: ``source`` if given (a ledger format name means none);
    else None for a ledger file (.db, .jsonl, .csv), else the one importer that recognises it.
    A .json or .eval file nothing recognises is an ArgumentError asking for the source; any other
    is left to the ledger reader (which names the suffixes it reads)."""
    if source is not None:
        return None if source in LEDGER_SOURCES else get_importer(source).name
    if format_of(path) is not None:
        return None
    if not path.exists():
        raise LedgerError([Problem(0, "no such file", str(path))])
    found = detect_source(path)
    if found is None and path.suffix.lower() not in (".json", ".eval"):
        return None  # read as a ledger, whose reader names the suffixes it reads
    if found is None:
        raise ArgumentError(
            f"{path}: not a ledger (.db, .jsonl, .csv) and no importer recognises it; name its "
            "source with --source",
            argument="source",
        )
    return found.name


def read_source(
    paths: Sequence[Path], source: str | None = None, options: ImportOptions | None = None
) -> Ledger:
    """A ledger from ``paths``: a ledger file read as it is, or source files through their
    importer (named, or detected where the format is unambiguous)."""
    options = options or ImportOptions()
    if not paths:
        raise ArgumentError("paths: give at least one file", argument="paths")
    paths = _expand(paths, source)
    names = {source_for(p, source) for p in paths}
    if len(names) > 1:
        raise ArgumentError(
            "the files are of different kinds: give files of one source", argument="source"
        )
    name = names.pop()
    if name is None:
        for option in ("system", "as_attempts", "scorer", "reward"):
            if getattr(options, option) is not None:
                raise ArgumentError(
                    f"{option} applies to other harnesses' files, not to a ledger", argument=option
                )
        if len(paths) > 1:
            raise ArgumentError("give one ledger file at a time", argument="paths")
        ledger = read_ledger(paths[0], default_run=options.run_id)
        return ledger if options.protocol is None else with_protocol(ledger, options.protocol)
    label = str(paths[0]) if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1})"
    runs = read_runs(name, paths, options)
    return imported_ledger(runs, label, options.protocol or "independent")


def check_protocol(protocol: str) -> None:
    """Refuse a protocol that is none of the ledger's."""
    if protocol not in PROTOCOLS:
        raise ArgumentError(
            f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}",
            argument="protocol",
        )


def with_protocol(ledger: Ledger, protocol: str) -> Ledger:
    """A ledger file's rows stating ``protocol`` where they record none; a row that records
    another is refused (a file's own word is never overwritten)."""
    check_protocol(protocol)
    other = sorted(set(ledger.distinct("protocol")) - {protocol})
    if other:
        raise ArgumentError(
            f"{ledger.source}: its rows record protocol {', '.join(other)}; --protocol "
            f"{protocol} applies only to rows that record none",
            argument="protocol",
        )
    rows = [{**row, "protocol": protocol} for row in ledger_rows(ledger)]
    stated = ledger_from_rows(rows, ledger.source)
    return replace(stated, provenance=ledger.provenance, completion=ledger.completion)
