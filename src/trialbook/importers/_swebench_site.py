"""SWE-bench's leaderboard file: ``data/leaderboards.json`` of the swe-bench.github.io repository.

The file holds several leaderboards (at commit f1176b6 of SWE-bench/swe-bench.github.io,
2025-12-10: ``bash-only``, ``Test``, ``Verified``, ``Lite``, ``Multimodal``; the site's code at
HEAD also names ``multilingual``), each a list of submissions::

    {"leaderboards": [{"name": "Verified", "results": [
        {"name": "...", "folder": "20250802_mini-v1.0.0_claude-4-opus-20250514",
         "date": "...", "resolved": 67.6, "cost": 565.64, "instance_cost": 1.13,
         "instance_calls": 31.1, "tags": [...], "warning": null, ...,
         "per_instance_details": {"astropy__astropy-12907": {"api_calls": 37, "cost": 0.41,
                                                             "resolved": true}, ...}}, ...]}]}

Each submission with ``per_instance_details`` (an object; absent or null on most) is one run (its
``folder`` the run id, its ``name`` the system), one attempt per instance: ``resolved`` decides
passed, ``cost`` is the attempt's cost (absent or null: not measured). ``api_calls`` (model calls)
has no ledger field: its mean is said in a note. The page's own figures of the submission
(``resolved`` in percent, ``cost`` in all, ``instance_cost`` and ``instance_calls`` per instance)
are set beside what its instances give, in notes: the instances are scored, and where the page
says otherwise the note says so (at f1176b6 three submissions' ``resolved`` differ from their
instances', one by 42.6 points). Submissions without per-instance details are not read, and a note
counts them. Checked against the file at f1176b6; the tests read a small file made by hand to its
structure (tests/importers/data/swe-bench-site).
"""

from __future__ import annotations

import math
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


def _same(page: float, ours: float) -> bool:
    """The page's figure is ours, to its own rounding (it prints percents to 2 decimals)."""
    return math.isclose(page, ours, rel_tol=1e-6, abs_tol=0.005)


def _page_notes(
    rec: Record, rows: list[dict[str, object]], calls: list[int], reported: float | None
) -> list[str]:
    """The submission's own figures (``resolved`` in percent, ``cost`` in all, ``instance_cost``
    and ``instance_calls`` per instance) beside what its instances give: the instances are what
    is scored, and a page figure they do not give is said."""
    n = len(rows)
    notes: list[str] = []
    solved = sum(bool(r["passed"]) for r in rows)
    if reported is not None:
        if _same(reported, 100 * solved / n):
            notes.append(f"the leaderboard's {reported:g}% resolved is its instances' {solved}/{n}")
        else:
            notes.append(
                f"the leaderboard reports {reported:g}% resolved, but its per-instance details give "
                f"{solved}/{n} = {100 * solved / n:.4g}%: the instances are scored"
            )
    costs = [float(c) for r in rows if isinstance(c := r.get("cost"), int | float)]
    if len(costs) < n:
        notes.append(f"cost recorded for {len(costs)} of {n} instances (the rest: not measured)")
    total, each = rec.number("cost", required=False), rec.number("instance_cost", required=False)
    if len(costs) == n and (total is not None or each is not None):
        page_total = total if total is not None else (each or 0.0) * n
        ours = sum(costs)
        said = f"${page_total:,.2f} in all (${page_total / n:.4f} per instance)"
        if _same(page_total, ours) and (each is None or _same(each, ours / n)):
            notes.append(f"the leaderboard's cost, {said}, is its instances'")
        else:
            notes.append(
                f"the leaderboard reports a cost of {said}, but its instances' costs give "
                f"${ours:,.2f} (${ours / n:.4f} per instance): the instances' are used"
            )
    if calls:
        mean = sum(calls) / len(calls)
        page = rec.number("instance_calls", required=False)
        which = (
            ""
            if page is None
            else " (the leaderboard's instance_calls)"
            if _same(page, mean)
            else f" (the leaderboard reports {page:g})"
        )
        notes.append(
            f"api_calls (model calls) recorded for {len(calls)} instances, mean {mean:.4g}{which}: "
            "no ledger field holds them"
        )
    return notes


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
        notes = [_UNRECORDED, *_page_notes(rec, rows, calls, reported)]
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
