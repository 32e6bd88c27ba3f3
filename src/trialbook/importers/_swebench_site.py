"""SWE-bench's leaderboard file: ``data/leaderboards.json`` of the swe-bench.github.io repository.

The file holds several leaderboards (``Verified``, ``bash-only``, ``Lite``, ...), each a list of
submissions::

    {"leaderboards": [{"name": "Verified", "results": [
        {"name": "...", "folder": "20250802_mini-v1.0.0_claude-4-opus-20250514", "date": "...",
         "resolved": 67.6,
         "per_instance_details": {"astropy__astropy-12907": {"resolved": true, "cost": 0.41,
                                                             "api_calls": 37}, ...}}, ...]}]}

Each submission with ``per_instance_details`` is one run (its ``folder`` the run id, its ``name``
the system), one attempt per instance: ``resolved`` decides passed, ``cost`` is the attempt's cost
(absent or null: not measured). ``api_calls`` (model calls) has no ledger field: its mean is said in
a note. Submissions without per-instance details are not read, and a note counts them. The
layout above is the one this project's documentation states for the file (docs/importers.md); no
copy of the file is kept here, and the tests read small files made to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from trialbook.errors import ArgumentError, Problem
from trialbook.importers._base import ImportedRun, ImportOptions
from trialbook.importers._common import Record, attempt_row, raise_problems, source_file

__all__ = ["is_site_file", "site_runs"]

_UNRECORDED = (
    "SWE-bench's leaderboard records no time limit, duration, agent timeout, hidden-helper calls "
    "or oracle leaks: not recorded by the source"
)


def is_site_file(doc: object) -> bool:
    """Whether a parsed JSON document is the leaderboard file (an object with ``leaderboards``)."""
    return isinstance(doc, Mapping) and isinstance(doc.get("leaderboards"), list)


def _pick(path: Path, boards: list[Any], wanted: str | None) -> Mapping[str, Any]:
    named = {b.get("name"): b for b in boards if isinstance(b, Mapping)}
    names = ", ".join(repr(n) for n in named if isinstance(n, str))
    if wanted is None:
        if len(named) == 1:
            return next(iter(named.values()))
        raise ArgumentError(
            f"{path}: the file holds {len(named)} leaderboards ({names}): name one with --board",
            argument="board",
        )
    for name, board in named.items():
        if isinstance(name, str) and name.casefold() == wanted.casefold():
            return board
    raise ArgumentError(
        f"{path}: no leaderboard {wanted!r} (leaderboards: {names})", argument="board"
    )


def site_runs(path: Path, doc: Mapping[str, Any], options: ImportOptions) -> list[ImportedRun]:
    """One run per submission of the chosen leaderboard that lists its instances."""
    board = _pick(path, doc["leaderboards"], options.board)
    problems: list[Problem] = []
    top = Record(board, path, f"leaderboard {board.get('name')!r}", problems)
    title = top.text("name") or "?"
    results = top.items("results") or []
    raise_problems(problems)
    digest = source_file(path)
    runs: list[ImportedRun] = []
    skipped = 0
    for i, entry in enumerate(results, 1):
        rec = Record(entry, path, f"leaderboard {title!r}: result {i}", problems)
        details = rec.obj("per_instance_details", required=False)
        if details is None:
            skipped += rec.ok
            continue
        run_id = rec.text("folder")
        system = rec.text("name", required=False)
        reported = rec.number("resolved", required=False)
        if run_id is None:
            continue
        rows: list[dict[str, object]] = []
        calls: list[int] = []
        for iid in details.data:
            one = details.obj(iid)
            if one is None:
                continue
            resolved = one.flag("resolved")
            cost = one.number("cost", required=False, low=0)
            api_calls = one.integer("api_calls", required=False, low=0)
            if api_calls is not None:
                calls.append(api_calls)
            if resolved is None:
                continue
            rows.append(
                attempt_row(
                    run_id=run_id,
                    system=options.system or system or run_id,
                    task_id=iid,
                    attempt_index=0,
                    k_budget=1,
                    passed=resolved,
                    status="passed" if resolved else "failed",
                    cost=cost,
                )
            )
        if not rows:
            rec.problem("per_instance_details lists no instance", "per_instance_details")
            continue
        notes = [_UNRECORDED]
        priced = sum("cost" in r for r in rows)
        if priced < len(rows):
            notes.append(
                f"cost recorded for {priced} of {len(rows)} instances (the rest: not measured)"
            )
        if calls:
            notes.append(
                f"api_calls (model calls) recorded for {len(calls)} instances, mean "
                f"{sum(calls) / len(calls):.1f}: no ledger field holds them"
            )
        if reported is not None:
            solved = sum(bool(r["passed"]) for r in rows)
            notes.append(
                f"the leaderboard reports {reported:g}% resolved; its instances give "
                f"{solved}/{len(rows)} = {100 * solved / len(rows):.4g}% (the instances are scored)"
            )
        runs.append(
            ImportedRun(
                run_id=run_id,
                source="swe-bench",
                source_version=f"leaderboards.json, leaderboard {title}",
                files=(digest,),
                rows=rows,
                notes=tuple(notes),
            )
        )
    raise_problems(problems)
    if skipped:
        note = f"{skipped} submission(s) of leaderboard {title!r} list no per-instance details: not read"
        runs = [replace(r, notes=(*r.notes, note)) for r in runs]
    if not runs:
        raise ArgumentError(
            f"{path}: leaderboard {title!r} has no submission with per_instance_details"
        )
    return runs
