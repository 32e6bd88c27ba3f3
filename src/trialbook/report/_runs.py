"""``trialbook runs``: a ledger's runs as a table or versioned JSON. No logic beyond layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness import RunSummary

__all__ = ["RUNS_SCHEMA", "runs_text", "runs_to_dict"]

RUNS_SCHEMA = "trialbook.runs/1"


def runs_to_dict(runs: Sequence[RunSummary]) -> dict[str, Any]:
    """``trialbook.runs/1``: ``{"schema", "runs": [{run_id, system, dataset_id, status,
    attempts, planned, started_at, pass@1, selection, protocol, reruns, superseded, lost}]}``
    (``pass@1`` is null for a
    repair or human-selected run; ``protocol`` null where the run's record does not say)."""
    return {
        "schema": RUNS_SCHEMA,
        "runs": [
            {
                "run_id": r.run_id,
                "system": r.system,
                "dataset_id": r.dataset_id,
                "status": r.status,
                "attempts": r.done,
                "planned": r.planned,
                "started_at": r.started_at,
                "pass@1": r.pass_at_1,
                "selection": r.selection,
                "reruns": r.reruns,
                "superseded": r.superseded,
                "lost": r.lost,
                "protocol": r.protocol,
            }
            for r in runs
        ],
    }


def _dataset(dataset_id: str | None) -> str:
    return "-" if dataset_id is None else dataset_id.removeprefix("sha256:")[:12]


def runs_text(runs: Sequence[RunSummary], *, width: int = 80) -> str:
    """One line per run, to fit ``width`` columns: id, system, status, attempts done of planned,
    start (month-day and time, UTC), pass@1; where ids or systems are too long for that, each
    run's id (and system) on a line of its own with the figures indented below it. The dataset
    above when every run shares it (else on a line below each run), the run's task selection
    below it when it has one, its protocol when its attempts are not independent (its pass@1
    then shows "-"), and its re-runs and lost attempts when it has some."""
    from trialbook.report._printable import printable
    from trialbook.report._wrap import wrap

    if not runs:
        return "no runs in this ledger"
    datasets = {r.dataset_id for r in runs}
    shared = len(datasets) == 1
    header = ("run", "system", "status", "attempts", "started", "pass@1")
    rows = []
    for r in runs:
        planned = "?" if r.planned is None else str(r.planned)
        rows.append(
            (
                printable(r.run_id),
                printable(r.system or "-"),
                printable(r.status),
                f"{r.done}/{planned}",
                printable(r.started_at[5:16].replace("T", " ")),
                "-" if r.pass_at_1 is None else f"{100 * r.pass_at_1:.1f}%",
            )
        )
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    right = {3, 5}
    # too wide: the id and system above, the figures below them (ids are never cut)
    narrow = sum(widths) + 2 * (len(widths) - 1) > width
    first = 2 if narrow else 0
    if narrow:
        widths[:2] = [0, 0]

    def line(cells: Sequence[str]) -> str:
        shown = "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            if i >= first
        )
        return ("  " + shown if narrow else shown).rstrip()

    out = []
    if shared:
        year = printable(runs[0].started_at[:4])
        out.append(f"dataset {printable(_dataset(runs[0].dataset_id))} · started in UTC, {year}")
    if narrow:
        out.append("run (system)")
    out.append(line(header))
    for r, row in zip(runs, rows, strict=True):
        if narrow:
            out.append(row[0] if row[1] == "-" else f"{row[0]} ({row[1]})")
        out.append(line(row))
        if not shared:
            out.append(
                f"  dataset {printable(_dataset(r.dataset_id))}, "
                f"started {printable(r.started_at[:4])}"
            )
        if r.selection:
            out.append(f"  tasks: {printable(r.selection)}")
        if r.reruns or r.lost:
            again = f"{r.reruns} attempt(s) re-run ({r.superseded} superseded row(s) kept)"
            waiting = f"{r.lost} lost attempt(s), a resume runs them again" if r.lost else ""
            out.append("  " + "; ".join(p for p in (again if r.reruns else "", waiting) if p))
        if r.protocol not in (None, "independent"):
            out.append(
                f"  protocol: {printable(r.protocol)} (no pass@1: its attempts are not independent)"
            )
    return wrap("\n".join(out), width)
