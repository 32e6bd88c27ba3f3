"""One run's attempts tallied per task: what a per-run summary reads, with no Python object per row.

:class:`RunTally` is the same whoever computes it: :func:`tally_ledger` from the columns of an
in-memory :class:`Ledger`, or the SQLite store from ``GROUP BY`` queries (``store/_scan``). Counts and
integer sums are exact either way; the few per-attempt floats whose total depends on the order of
addition (``elapsed_s``, ``cost``, ``score``) travel as arrays in row order, so that every float
computed from them is the same to the bit, whichever format the rows came from.

Two things are fixed here, because they are what the fields mean (docs/ledger.md): a task with any
attempt flagged ``oracle_leak`` is quarantined whole (counted, listed, never tallied), and a status
the caller names (``infra_error``) may be dropped from the rows tallied. An attempt run again
(``retry``) is tallied by its highest retry only; the rows it superseded are counted in ``reruns``'s
words, never in a figure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from trialbook.errors import ArgumentError, TrialbookError
from trialbook.ledger._fields import NOT_RECORDABLE
from trialbook.ledger._provenance import Completion, Provenance
from trialbook.ledger._table import Ledger, once

__all__ = ["Known", "RunTally", "Tallies", "TallyOfLedger", "tally_ledger"]


@dataclass(frozen=True)
class Known:
    """A sum over the rows that record a field, and how many rows do."""

    total: int
    """The sum (a count, for a flag)."""
    rows: int
    """How many rows record the field."""


@dataclass(frozen=True, eq=False)  # arrays have no one truth value
class RunTally:
    """One run's attempts per task, after quarantine (and the drop of a status, when asked).

    Per-task arrays are aligned with ``task_ids`` (tasks in order of first appearance in the run).
    """

    run_id: str
    source: str
    """The file the rows came from."""
    provenance: Provenance | None
    completion: Completion | None
    system: str | None
    dataset_id: str | None
    k_budget: int
    """The run's budget (constant within a run)."""

    quarantined: tuple[tuple[str, int], ...]
    """(task_id, attempt_index) of every leaked attempt, sorted."""
    leaked_tasks: tuple[str, ...]
    """The tasks quarantined whole, in task order."""
    status_rows: int
    """Rows of the dropped status (or of ``infra_error`` when nothing is dropped) outside the
    quarantine."""
    kept_rows: int
    """Rows outside the quarantine, before any drop."""
    emptied_tasks: tuple[str, ...]
    """Tasks left with no row by the drop (they had only rows of the dropped status)."""

    task_ids: tuple[str, ...]
    attempts: NDArray[np.int64]
    passes: NDArray[np.int64]
    first_passed: NDArray[np.bool_]
    """Whether the attempt with the lowest attempt_index passed."""
    before_first_pass: NDArray[np.int64]
    """Attempts with an attempt_index below the task's first pass (-1: no pass)."""
    timeouts: NDArray[np.int64]
    """Timed-out attempts among those that record timed_out."""
    timeouts_recorded: NDArray[np.int64]
    """Attempts that record timed_out."""
    infra_errors: NDArray[np.int64]
    stratum: tuple[str | None, ...]
    weight: NDArray[np.float64]
    """NaN: not declared."""
    strata: tuple[str, ...]
    """The strata tallied, in order of first appearance."""

    passes_after_timeout: int
    infra_rows: int
    """Rows tallied whose status is infra_error."""
    helper_calls: Known
    timed_out: Known
    cache_hit: Known
    tool_calls: Known
    tokens_in: Known
    tokens_out: Known
    elapsed_s: NDArray[np.float64]
    """Per tallied row that records it, in row order."""
    cost: NDArray[np.float64]
    """Per tallied row, in row order (NaN: not recorded); empty when no row records it."""
    score: NDArray[np.float64] | None
    """Per task, the sum of ``score`` in row order, when every tallied row records one."""
    score_rows: int
    """Tallied rows that record a score."""
    not_recorded: Mapping[str, int] = field(default_factory=dict)
    """Per required field some tallied rows' source did not record, how many (fields in order)."""
    reruns: int = 0
    """Attempts run again after an infrastructure error (their tallied row has ``retry`` > 0); the
    rows they superseded are never tallied."""
    protocol: str | None = None
    """How the run's attempts were made (independent, repair, human-selected); None: not
    recorded (a ledger older than the field, or a file that does not say)."""
    selected_rows: int = 0
    """Tallied rows that record ``selected`` (whether a selector delivered that candidate)."""
    checks_rows: int = 0
    """Tallied rows that record ``checks`` (the grader's named checks)."""
    failed: Mapping[str, int] = field(default_factory=dict)
    """Tallied rows that did not pass, by outcome: ``infra_error`` (by status), ``timed_out`` (by
    the flag) and ``failed`` (the rest); every key present."""
    failed_errors: tuple[tuple[str, int], ...] = ()
    """The recorded ``error`` texts of the tallied rows that did not pass, each with its count, in
    order of first appearance."""

    @property
    def rows(self) -> int:
        """Attempts tallied."""
        return int(self.attempts.sum())


class Tallies(Protocol):
    """A ledger asked for tallies run by run (an in-memory :class:`Ledger`, or the SQLite store)."""

    @property
    def source(self) -> str:
        """The file the rows come from."""
        ...

    def run_ids(self) -> tuple[str, ...]:
        """Runs in order of first appearance."""
        ...

    def has_run(self, run_id: str) -> bool:
        """Whether some row is of ``run_id``."""
        ...

    def tally(
        self, run_id: str, *, drop_status: str | None = None, set_aside: Collection[str] = ()
    ) -> RunTally:
        """One run tallied (see :class:`RunTally`); ``drop_status`` rows are left out, and so are
        the tasks whose stratum is one of ``set_aside``."""
        ...

    def rows(self, run_id: str) -> Ledger:
        """The validated rows of one run that count (a re-run attempt by its highest retry), in
        order: for a question tallies cannot answer."""
        ...

    def close(self) -> None:
        """Release the file (a store's connection)."""
        ...


class TallyOfLedger:
    """:class:`Tallies` of an in-memory, validated :class:`Ledger`."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    @property
    def source(self) -> str:
        return self.ledger.source

    def run_ids(self) -> tuple[str, ...]:
        return self.ledger.run_ids

    def has_run(self, run_id: str) -> bool:
        return run_id in self.ledger.run_ids

    def tally(
        self, run_id: str, *, drop_status: str | None = None, set_aside: Collection[str] = ()
    ) -> RunTally:
        return tally_ledger(
            self.ledger.run(run_id), run_id, drop_status=drop_status, set_aside=set_aside
        )

    def rows(self, run_id: str) -> Ledger:
        return self.ledger.run(run_id)

    def close(self) -> None:
        """Nothing to release (the rows are in memory)."""

    def __enter__(self) -> TallyOfLedger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _in_run_order(ledger: Ledger) -> tuple[tuple[str, ...], NDArray[np.intp]]:
    """Task ids in order of first appearance in these rows, and each row's position among them."""
    codes = ledger.codes["task_id"]
    labels = ledger.labels["task_id"]
    # each code's first row in linear time: assigned in reverse, the first occurrence writes last
    first = np.full(len(labels), codes.size, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)
    present = np.flatnonzero(first < codes.size)
    ordered = present[np.argsort(first[present], kind="stable")]
    position = np.empty(len(labels), dtype=np.intp)
    position[ordered] = np.arange(ordered.size)
    return tuple(labels[c] for c in ordered.tolist()), position[codes]


def _count(task: NDArray[np.intp], mask: NDArray[np.bool_] | None, t: int) -> NDArray[np.int64]:
    """Rows per task, of every row (``mask`` None: no copy of the positions) or where ``mask``."""
    return np.bincount(task if mask is None else task[mask], minlength=t).astype(np.int64)


def _known(values: NDArray[np.float64] | NDArray[np.int64] | NDArray[np.bool_]) -> Known:
    one = once(values)
    if one.size == 1 < values.size:  # one value per row: its total is a product, exactly
        value = float(one[0])
        if value != value:
            return Known(0, 0)
        if abs(value) * values.size < 2**53:  # every partial sum exact, whatever their order
            return Known(int(value * values.size), int(values.size))
    col = np.asarray(values, dtype=np.float64)
    known = ~np.isnan(col)
    return Known(int(col[known].sum()), int(known.sum()))


def tally_ledger(
    run: Ledger, run_id: str, *, drop_status: str | None = None, set_aside: Collection[str] = ()
) -> RunTally:
    """Tally the rows of one run (``run``: a validated ledger of that run's rows only), leaving
    out the tasks whose stratum (on their first row) is one of ``set_aside``."""
    if drop_status is not None and drop_status != "infra_error":
        raise ArgumentError(
            f"drop_status must be 'infra_error' or None, got {drop_status!r}",
            argument="drop_status",
        )
    if len(run) == 0:
        raise ArgumentError(f"run {run_id!r} has no rows", argument="run")
    run = run.latest()  # a re-run attempt counts once, by its highest retry
    task_ids, task = _in_run_order(run)
    t = len(task_ids)
    leak = run.values["oracle_leak"].astype(bool)
    leaked = run.where(leak)
    quarantined = tuple(
        sorted(
            zip(
                leaked.text("task_id").tolist(),
                leaked.values["attempt_index"].tolist(),
                strict=True,
            )
        )
    )
    leaked_task = _count(task, leak, t) > 0
    keep = ~leaked_task[task]
    if set_aside:
        aside_codes = [i for i, label in enumerate(run.labels["stratum"]) if label in set_aside]
        first_row = np.full(t, task.size, dtype=np.int64)
        first_row[task[::-1]] = np.arange(task.size - 1, -1, -1)
        aside_task = np.isin(run.codes["stratum"][first_row], aside_codes)
        keep &= ~aside_task[task]
    infra = run.has_status("infra_error")
    status_rows = int((infra & keep).sum())
    kept_rows = int(keep.sum())
    emptied: tuple[str, ...] = ()
    if drop_status is not None:
        had = _count(task, keep, t) > 0
        keep = keep & ~infra
        has = _count(task, keep, t) > 0
        emptied = tuple(task_ids[i] for i in np.flatnonzero(had & ~has).tolist())
    if not keep.any():
        raise TrialbookError(
            f"run {run_id!r}: no attempts left to score after quarantine and drops"
        )
    rows = run.where(keep)
    row_task = task if rows is run else task[keep]
    present = _count(row_task, None, t) > 0
    renumber = np.cumsum(present) - 1
    kept_ids = tuple(task_ids[i] for i in np.flatnonzero(present).tolist())
    k = len(kept_ids)
    pos = row_task if k == t else renumber[row_task]  # every task kept: the same positions

    attempt = rows.values["attempt_index"]
    passed = np.asarray(rows.values["passed"], dtype=bool)
    timed_out = np.asarray(rows.values["timed_out"], dtype=bool)
    lacking = {name: rows.unrecorded_mask(name) for name in rows.not_recorded()}
    timed_known = ~lacking.get("timed_out", np.zeros(pos.size, dtype=bool))

    lowest = np.full(k, np.iinfo(np.int64).max)
    np.minimum.at(lowest, pos, attempt)
    first = np.flatnonzero(attempt == lowest[pos])
    first_row = np.empty(k, dtype=np.intp)
    first_row[pos[first[::-1]]] = first[::-1]  # (task, attempt_index) is unique once validated
    big = np.iinfo(np.int64).max
    first_pass = np.full(k, big, dtype=np.int64)
    np.minimum.at(first_pass, pos[passed], attempt[passed])
    before = _count(pos, attempt < first_pass[pos], k)
    before[first_pass == big] = -1

    strata_labels = rows.labels["stratum"]
    stratum_codes = rows.codes["stratum"][first_row].tolist()
    stratum = tuple(None if c < 0 else strata_labels[c] for c in stratum_codes)
    helper = rows.values["helper_calls"]
    elapsed = rows.values["elapsed_s"]
    if "helper_calls" in lacking:
        helper = np.where(lacking["helper_calls"], np.nan, helper.astype(np.float64))
    if "elapsed_s" in lacking:
        elapsed = elapsed[~lacking["elapsed_s"]]
    score_rows = int((~np.isnan(rows.values["score"])).sum())
    score = (
        np.asarray(np.bincount(pos, weights=rows.values["score"], minlength=k), dtype=np.float64)
        if score_rows == len(rows)
        else None
    )
    cost = rows.values["cost"]
    return RunTally(
        run_id=run_id,
        source=run.source,
        provenance=run.source_of(run_id),
        completion=run.completion_of(run_id),
        system=_text(rows.first("system")),
        dataset_id=_text(rows.first("dataset_id")),
        k_budget=int(rows.values["k_budget"][0]),
        quarantined=quarantined,
        leaked_tasks=tuple(task_ids[i] for i in np.flatnonzero(leaked_task).tolist()),
        status_rows=status_rows,
        kept_rows=kept_rows,
        emptied_tasks=emptied,
        task_ids=kept_ids,
        attempts=_count(pos, None, k),
        passes=_count(pos, passed, k),
        first_passed=np.asarray(passed[first_row], dtype=bool),
        before_first_pass=before,
        timeouts=_count(pos, timed_out & timed_known, k),
        timeouts_recorded=_count(pos, timed_known, k),
        infra_errors=_count(pos, rows.has_status("infra_error"), k),
        stratum=stratum,
        weight=np.asarray(rows.values["weight"][first_row], dtype=np.float64),
        strata=rows.distinct("stratum"),
        passes_after_timeout=int((passed & timed_out).sum()),
        infra_rows=int(rows.has_status("infra_error").sum()),
        helper_calls=_known(helper),
        timed_out=Known(int((timed_out & timed_known).sum()), int(timed_known.sum())),
        cache_hit=_known(rows.values["cache_hit"]),
        tool_calls=_known(rows.values["tool_calls"]),
        tokens_in=_known(rows.values["tokens_in"]),
        tokens_out=_known(rows.values["tokens_out"]),
        elapsed_s=np.ascontiguousarray(elapsed, dtype=np.float64),
        # one value per row stays one value (read-only; its sum is the same as a copy's)
        cost=cost
        if cost.strides == (0,)
        else np.ascontiguousarray(cost, dtype=np.float64)
        if rows.recorded("cost")
        else _EMPTY,
        score=score,
        score_rows=score_rows,
        not_recorded={
            name: int(lacking[name].sum())
            for name in NOT_RECORDABLE
            if name in lacking and lacking[name].any()
        },
        protocol=_text(run.first("protocol")),
        selected_rows=int((~np.isnan(rows.values["selected"])).sum()),
        reruns=run.reruns(),
        checks_rows=int((rows.codes["checks"] >= 0).sum()),
        **_failed(rows, passed, timed_out),
    )


def _failed(
    rows: Ledger, passed: NDArray[np.bool_], timed_out: NDArray[np.bool_]
) -> dict[str, Any]:
    """The rows that did not pass, by outcome and by recorded error text (RunTally's fields)."""
    infra = rows.has_status("infra_error") & ~passed
    timed = timed_out & ~passed & ~infra
    failed = ~passed
    codes = rows.codes["error"][failed]
    codes = codes[codes >= 0]
    seen, first = np.unique(codes, return_index=True)
    counts = np.bincount(codes, minlength=len(rows.labels["error"]))
    labels = rows.labels["error"]
    order = seen[np.argsort(first, kind="stable")]
    return {
        "failed": {
            "failed": int((failed & ~timed & ~infra).sum()),
            "timed_out": int(timed.sum()),
            "infra_error": int(infra.sum()),
        },
        "failed_errors": tuple((labels[c], int(counts[c])) for c in order.tolist()),
    }


_EMPTY = np.zeros(0, dtype=np.float64)


def _text(value: str | float | None) -> str | None:
    return value if isinstance(value, str) else None
