"""The two sides of a comparison, read: a run named ``LEDGER`` or ``LEDGER:RUN_ID``, its tasks after
quarantine and fault cases, and each task's value of the compared metric."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._faults import fault_task_mask
from trialbook.analysis._protocol import METRIC, protocol_columns
from trialbook.errors import ArgumentError, InsufficientAttemptsError, TrialbookError
from trialbook.ledger import Ledger
from trialbook.stats import pass_k_matrix

__all__: list[str] = []


def _split_spec(spec: str) -> tuple[Path, str | None]:
    """LEDGER[:RUN_ID] as a path and a run id. A run id may hold colons (``org:model:v2``), and so
    may a file name: the ledger is the longest part before a colon that exists; where none does,
    the part before the last colon (so that the error names the missing file)."""
    path = Path(spec)
    if path.exists():
        return path, None
    cuts = [i for i, ch in enumerate(spec) if ch == ":" and 0 < i < len(spec) - 1]
    for i in reversed(cuts):
        if Path(spec[:i]).exists():
            return Path(spec[:i]), spec[i + 1 :]
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail:
        return Path(head), tail
    return path, None


def _pick_run(ledger: Ledger, run: str | None, spec: str) -> str:
    runs = ledger.run_ids
    if run is None:
        if len(runs) != 1:
            shown = ", ".join(repr(r) for r in runs[:10])
            raise ArgumentError(
                f"{spec}: the ledger holds {len(runs)} runs ({shown}); name one as LEDGER:RUN_ID"
            )
        return runs[0]
    if run not in runs:
        shown = ", ".join(repr(r) for r in runs[:10])
        more = f" and {len(runs) - 10} more" if len(runs) > 10 else ""
        raise ArgumentError(f"{spec}: run {run!r} is not in {ledger.source} (runs: {shown}{more})")
    return run


@dataclass(frozen=True)
class _Run:
    run_id: str
    task_ids: list[str]
    n: NDArray[np.int64]
    c: NDArray[np.int64]
    first: NDArray[np.bool_]
    strata: list[str | None]
    meta: dict[str, set[str]]
    earlier: int
    incomplete: str = ""
    """``INTERRUPTED: 12 of 24 attempts`` for a run of our own harness that did not finish."""
    fault_tasks: int = 0
    """Fault-case tasks left out."""
    protocol: str | None = None
    first_pass_rank: NDArray[np.int64] | None = None
    """Per task, attempts before its first pass (-1: none; ``_protocol.protocol_columns``)."""
    delivered: NDArray[np.float64] | None = None
    rows: Ledger | None = None
    """The attempts compared (after quarantine and fault cases), for the per-check moves."""


def _load(spec: str, read: Callable[[Path], Ledger]) -> _Run:
    path, run = _split_spec(spec)
    ledger = read(path)
    return _load_run(ledger, _pick_run(ledger, run, spec), spec)


def _load_run(ledger: Ledger, run_id: str, spec: str, *, earlier: bool = True) -> _Run:
    """Run ``run_id`` of ``ledger`` as compare reads it (``spec`` names it in messages): a run
    id may hold a ``:``, so a caller that already knows the run passes it, not a spec to split.
    ``earlier``: count the other runs of its system on its suite (compare says so; a board,
    whose every run is a system, does not ask)."""
    run_rows = ledger.run(run_id)
    # a task with any leaked attempt is quarantined whole, as in score
    leaked = run_rows.where(run_rows.column("oracle_leak")).distinct("task_id")
    rows = run_rows.where(~np.isin(run_rows.column("task_id"), leaked)) if leaked else run_rows
    groups = rows.tasks()
    faulty = fault_task_mask(groups)  # fault cases never enter the headline difference
    if faulty.any():
        rows = rows.where(~faulty[groups.task])
        groups = rows.tasks() if len(rows) else groups
    if len(rows) == 0:
        raise TrialbookError(f"{spec}: no attempts to compare after quarantine and fault cases")
    meta = {
        name: set(rows.distinct(name))
        for name in (
            "system",
            "dataset_id",
            "model_version",
            "grader_version",
            "harness_version",
            "sandbox",
        )
    }
    # runs of the same system on the same suite in this ledger, other than this one; a run that
    # records no system cannot be matched to others (unknown is not "the same")
    count = 0
    system = rows.first("system")
    if earlier and system is not None:
        same = (ledger.column("system") == system) & (
            ledger.column("dataset_id") == rows.first("dataset_id")
        )
        count = len(set(ledger.where(same).run_ids) - {run_id})
    protocol = rows.first("protocol")
    protocol = protocol if isinstance(protocol, str) else None
    rank, delivered = protocol_columns(rows, groups, protocol, f"{spec}: run {run_id!r}")
    return _Run(
        protocol=protocol,
        first_pass_rank=rank,
        delivered=delivered,
        run_id=run_id,
        task_ids=list(groups.task_ids),
        n=groups.attempts,
        c=groups.passes,
        first=groups.first_passed,
        strata=list(groups.stratum),
        meta=meta,
        earlier=count,
        incomplete=completion.label if (completion := ledger.completion_of(run_id)) else "",
        fault_tasks=int(faulty.sum()),
        rows=rows,
    )


def _metric_values(run: _Run, idx: NDArray[np.intp], metric: str) -> NDArray[np.float64]:
    m = METRIC.match(metric)
    if metric == "delivered":
        assert run.delivered is not None
        return run.delivered[idx]
    assert m is not None
    k = int(m.group(2))
    short = [run.task_ids[i] for i in idx.tolist() if run.n[i] < k]
    if short:
        shown = ", ".join(f"{t!r} (n={int(run.n[run.task_ids.index(t)])})" for t in short[:10])
        more = f" and {len(short) - 10} more" if len(short) > 10 else ""
        raise InsufficientAttemptsError(
            f"run {run.run_id!r}: {metric}: k={k} exceeds the attempts of {len(short)} task(s): "
            f"{shown}{more}"
        )
    if m.group(1) == "within@":
        assert run.first_pass_rank is not None
        rank = run.first_pass_rank[idx]
        return ((rank >= 0) & (rank < k)).astype(np.float64)
    at, hat = pass_k_matrix(run.n[idx], run.c[idx], [k])
    return (at if m.group(1) == "pass@" else hat)[:, 0]
