"""The in-memory ledger: columns of typed arrays, and the questions the rest of trialbook asks of it.

Nothing outside ``trialbook.ledger`` needs to know how a ledger is encoded (text as codes into
labels, -1 or NaN for "not recorded"): it asks :class:`Ledger` (``run``, ``where``, ``column``,
``has_status``, ``distinct``, ``first``, ``recorded``, ``tasks``) and gets plain arrays and values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trialbook.errors import ArgumentError
from trialbook.ledger._fields import FIELD_BY_NAME, NOT_RECORDABLE, STATUSES
from trialbook.ledger._provenance import Completion, Provenance

__all__ = [
    "DTYPE",
    "Ledger",
    "TaskGroups",
    "TaskTable",
    "factorize",
    "once",
    "per_row",
    "per_task",
    "unrecorded",
]

DTYPE = {"int": np.int64, "float": np.float64, "bool": np.bool_}
"""The array type of a required number or flag (optional ones are float64, NaN = not recorded)."""


@dataclass(frozen=True)
class Ledger:
    """Validated attempts, column-wise.

    Text fields are stored as codes into ``labels`` (-1 = not recorded): a million rows of task ids
    cost a million small integers, not a million Python strings. Required numbers and flags are int64,
    float64 or bool arrays; optional numbers and flags are float64 arrays in which NaN means "not
    recorded" (a NaN in the input itself is rejected, so the two cannot be confused).

    ``values``, ``codes`` and ``labels`` are the encoding; outside ``trialbook.ledger`` use the
    query methods instead (the attributes stay readable while the callers move over).
    """

    source: str
    """Where the rows came from (a file path)."""
    lines: NDArray[np.int64]
    """Line of each row in the source file, for messages."""
    values: Mapping[str, NDArray[Any]]
    """Numeric and boolean fields."""
    codes: Mapping[str, NDArray[np.int64]]
    """Text and timestamp fields, as indices into ``labels``."""
    labels: Mapping[str, tuple[str, ...]] = field(repr=False)
    """The values each text field may take (a subset keeps the labels of the whole ledger)."""
    provenance: Mapping[str, Provenance] = field(default_factory=dict, repr=False)
    """Per imported run id, where it came from (empty for our own runs and plain ledger files)."""
    completion: Mapping[str, Completion] = field(default_factory=dict, repr=False)
    """Per run of our own harness in a SQLite ledger, how far it got (empty for plain files)."""

    def __len__(self) -> int:
        return int(self.lines.size)

    # ------------------------------------------------------------------ choosing rows

    def subset(self, index: NDArray[np.int64] | NDArray[np.bool_]) -> Ledger:
        """The rows at ``index`` (positions or a mask), labels kept."""
        if index.dtype == np.bool_ and index.all():
            return self  # the common case: one run, nothing quarantined; no copy of every column
        return Ledger(
            source=self.source,
            lines=self.lines[index],
            values={k: v[index] for k, v in self.values.items()},
            codes={k: v[index] for k, v in self.codes.items()},
            labels=self.labels,
            provenance=self.provenance,
            completion=self.completion,
        )

    def where(self, mask: NDArray[np.bool_]) -> Ledger:
        """The rows where ``mask`` (one bool per row) is true, in their order.

        Returns this ledger itself when every row is kept (no copy).
        """
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (len(self),):
            raise ArgumentError(
                f"mask must be {len(self)} booleans, one per row, got dtype {mask.dtype} "
                f"and shape {mask.shape}",
                argument="mask",
            )
        return self.subset(mask)

    @property
    def run_ids(self) -> tuple[str, ...]:
        """Runs in order of first appearance."""
        codes = self.codes["run_id"]
        _, first = np.unique(codes, return_index=True)
        ordered = codes[np.sort(first)]
        return tuple(self.labels["run_id"][c] for c in ordered if c >= 0)

    def run(self, run_id: str, *, superseded: bool = False) -> Ledger:
        """The rows of one run that count: of an attempt run again (``retry``), only its highest
        retry; with ``superseded``, every row (the earlier runs of a re-run attempt too).

        Raises :class:`ArgumentError` (``argument="run"``) naming the runs present when the ledger
        holds no row of ``run_id``.
        """
        mask = self._run_mask(run_id)
        return self.where(mask if superseded else mask & ~self.superseded())

    def runs(self, run_ids: Sequence[str], *, superseded: bool = False) -> Ledger:
        """The rows of several runs, run by run in the order given (each run's rows in their order);
        only those that count unless ``superseded`` (as :meth:`run`).

        Raises :class:`ArgumentError` (``argument="run"``) for a run the ledger does not hold.
        """
        later = None if superseded else self.superseded()
        masks = [
            self._run_mask(r) if later is None else self._run_mask(r) & ~later for r in run_ids
        ]
        if len(masks) == 1:
            return self.where(masks[0])
        index = np.concatenate([np.flatnonzero(m) for m in masks]) if masks else np.arange(0)
        return self.subset(index.astype(np.int64))

    def superseded(self) -> NDArray[np.bool_]:
        """Per row, whether a row of a higher ``retry`` of the same attempt (run, task,
        attempt_index) follows it: a lost attempt's infra_error row, replaced by its re-run. Such a
        row stays in the ledger (append-only) and counts in no figure.

        Linear in the rows, plus a dict of the few re-run attempts: no sort of the whole ledger."""
        retry = self.values["retry"]
        again = np.flatnonzero(retry > 0)  # NaN (not recorded, = 0) compares false
        if not again.size:
            return np.zeros(len(self), dtype=bool)
        key = np.zeros(len(self), dtype=np.int64)
        for part in (
            np.maximum(self.codes["run_id"], 0),
            self.codes["task_id"],
            self.values["attempt_index"].astype(np.int64),
        ):
            key = key * (int(part.max()) + 2) + (part + 1)
        highest: dict[int, float] = {}
        for k, r in zip(key[again].tolist(), retry[again].tolist(), strict=True):
            highest[k] = max(r, highest.get(k, 0.0))
        rows = np.flatnonzero(np.isin(key, np.fromiter(highest, dtype=np.int64)))
        level = np.nan_to_num(retry[rows], nan=0.0)
        top = np.array([highest[k] for k in key[rows].tolist()], dtype=np.float64)
        later = np.zeros(len(self), dtype=bool)
        later[rows[level < top]] = True
        return later

    def latest(self) -> Ledger:
        """The rows that count: every row but those a re-run superseded (:meth:`superseded`)."""
        return self.where(~self.superseded())

    def reruns(self) -> int:
        """How many attempts were run again: rows that count and carry a ``retry`` above 0."""
        retry = self.values["retry"]
        return int(((retry > 0) & ~self.superseded()).sum())

    def _run_mask(self, run_id: str) -> NDArray[np.bool_]:
        labels = self.labels["run_id"]
        present = self.run_ids
        if run_id not in present:
            known = ", ".join(repr(r) for r in present)
            raise ArgumentError(
                f"run {run_id!r} is not in {self.source} (runs: {known})", argument="run"
            )
        mask: NDArray[np.bool_] = self.codes["run_id"] == labels.index(run_id)
        return mask

    # ------------------------------------------------------------------ reading fields

    def column(self, name: str) -> NDArray[Any]:
        """One field for every row.

        Required numbers and flags come as their int64, float64 or bool arrays; optional ones as
        float64 with NaN where the row did not record the field; text and timestamps as an object
        array of str with None where not recorded (materialises strings: use sparingly).
        """
        if name in self.values:
            return self.values[name]
        return self.text(self._field(name))

    def text(self, name: str) -> NDArray[np.object_]:
        """A text field as an object array (None = not recorded). Materialises strings: use sparingly."""
        table = np.array([*self.labels[name], None], dtype=object)
        return table[self.codes[name]]  # code -1 picks the trailing None

    def has_status(self, status: str) -> NDArray[np.bool_]:
        """Per row, whether its recorded ``status`` is ``status`` (False where none is recorded)."""
        if status not in STATUSES:
            raise ArgumentError(
                f"status must be one of {', '.join(STATUSES)}, got {status!r}", argument="status"
            )
        labels = self.labels["status"]
        if status not in labels:
            return np.zeros(len(self), dtype=bool)
        mask: NDArray[np.bool_] = self.codes["status"] == labels.index(status)
        return mask

    def distinct(self, name: str) -> tuple[str, ...]:
        """The recorded values of a text field, each once, in order of first appearance."""
        codes = self.codes[self._field(name, text=True)]
        labels = self.labels[name]
        if codes.size == 0:
            return ()
        if codes.strides == (0,):  # one code for every row (a field nobody recorded)
            return () if codes[0] < 0 else (labels[int(codes[0])],)
        # each code's first row in linear time (no sort of the rows): assigned in reverse, the
        # first occurrence writes last; codes are -1 (not recorded) or index the labels
        shifted = codes + 1
        first = np.full(int(shifted.max()) + 1, codes.size, dtype=np.int64)
        first[shifted[::-1]] = np.arange(codes.size - 1, -1, -1)
        present = np.flatnonzero(first < codes.size)
        ordered = present[np.argsort(first[present], kind="stable")] - 1
        return tuple(labels[c] for c in ordered.tolist() if c >= 0)

    def first(self, name: str) -> str | float | None:
        """The field's value on the first row (a number as float), None when it is not recorded
        there or the ledger is empty."""
        self._field(name)
        if len(self) == 0:
            return None
        if name in self.values:
            value = float(self.values[name][0])
            return None if value != value else value  # NaN: not recorded
        code = int(self.codes[name][0])
        return None if code < 0 else self.labels[name][code]

    def recorded(self, name: str) -> bool:
        """Whether any row records the field."""
        self._field(name)
        if name in self.values:
            col = self.values[name]
            return bool(col.size) and (col.dtype.kind != "f" or not np.isnan(col).all())
        return bool((self.codes[name] >= 0).any())

    def _field(self, name: str, *, text: bool = False) -> str:
        """``name`` if it is a ledger field (a text field when ``text``), else ArgumentError."""
        f = FIELD_BY_NAME.get(name)
        if f is None:
            raise ArgumentError(f"name must be a ledger field, got {name!r}", argument="name")
        if text and f.kind not in ("str", "time"):
            raise ArgumentError(
                f"name must be a text field, got {name!r} ({f.kind})", argument="name"
            )
        return name

    def unrecorded_mask(self, name: str) -> NDArray[np.bool_]:
        """Per row, whether its source did not record the required field ``name`` (an imported run
        that names it in ``not_recorded``); all False for a field every row must record."""
        self._field(name)
        lacking = np.zeros(len(self), dtype=bool)
        if name not in NOT_RECORDABLE:
            return lacking
        codes, labels = self.codes["not_recorded"], self.labels["not_recorded"]
        hit = [j for j, text in enumerate(labels) if name in {p.strip() for p in text.split(",")}]
        if hit:
            lacking = np.isin(codes, hit)
        return lacking

    def not_recorded(self) -> tuple[str, ...]:
        """The required fields some row's source did not record, in the order of the fields."""
        named = {p.strip() for text in self.distinct("not_recorded") for p in text.split(",")}
        return tuple(n for n in NOT_RECORDABLE if n in named)

    def completion_of(self, run_id: str) -> Completion | None:
        """How far a run of our own harness got (None: not known, e.g. a JSONL file)."""
        return self.completion.get(run_id)

    def source_of(self, run_id: str) -> Provenance | None:
        """Where an imported run came from, or None (our own run, or a plain ledger file)."""
        return self.provenance.get(run_id)

    # ------------------------------------------------------------------ tasks

    def tasks(self) -> TaskTable:
        """The rows grouped by task: what every per-task statistic starts from.

        Linear time, no sort: task codes are small integers (0 .. labels-1), so the tasks present are
        a bincount away, and each task's lowest attempt_index a ``minimum.at`` away. Tasks come in
        code order (first appearance in the file the ledger was read from).
        """
        all_labels = self.labels["task_id"]
        codes = self.codes["task_id"]
        present = np.bincount(codes, minlength=len(all_labels)) > 0
        if present.all():
            kept, task = np.arange(present.size), codes
        else:  # a subset (one run of several, quarantine): number the tasks present 0..t-1
            kept, task = np.flatnonzero(present), (np.cumsum(present) - 1)[codes]
        t = kept.size
        attempt = self.values["attempt_index"]
        lowest = np.full(t, np.iinfo(np.int64).max)
        np.minimum.at(lowest, task, attempt)
        first = np.flatnonzero(attempt == lowest[task])
        first_row = np.empty(t, dtype=np.intp)
        first_row[task[first[::-1]]] = first[::-1]  # (task, attempt_index) is unique once validated
        passed = self.values["passed"]
        strata = self.labels["stratum"]
        return TaskTable(
            task_ids=tuple(all_labels[i] for i in kept.tolist()),
            task=task,
            attempts=np.bincount(task, minlength=t),
            passes=np.bincount(task, weights=passed, minlength=t).astype(np.int64),
            first_row=first_row,
            first_passed=np.asarray(passed[first_row], dtype=bool),
            stratum=tuple(
                None if c < 0 else strata[c] for c in self.codes["stratum"][first_row].tolist()
            ),
            weight=np.asarray(self.values["weight"][first_row], dtype=np.float64),
        )


@dataclass(frozen=True, eq=False)  # arrays have no one truth value: compare fields, not tables
class TaskTable:
    """The rows of a ledger grouped by task (see :meth:`Ledger.tasks`)."""

    task_ids: tuple[str, ...]
    """The tasks present, in code order."""
    task: NDArray[np.intp]
    """For each row, the position of its task in ``task_ids``."""
    attempts: NDArray[np.int64]
    """n per task."""
    passes: NDArray[np.int64]
    """c per task."""
    first_row: NDArray[np.intp]
    """Per task, the row of its lowest attempt_index."""
    first_passed: NDArray[np.bool_]
    """Per task, whether its first attempt (lowest attempt_index) passed."""
    stratum: tuple[str | None, ...]
    """Per task, the stratum on its first row (None = not recorded)."""
    weight: NDArray[np.float64]
    """Per task, the weight on its first row (NaN = not declared)."""

    @property
    def labels(self) -> list[str]:
        """``task_ids`` as a list (the older name)."""
        return list(self.task_ids)

    def __len__(self) -> int:
        return len(self.task_ids)

    def in_row_order(self) -> NDArray[np.intp]:
        """Positions in ``task_ids`` ordered by each task's first row: the order of first
        appearance, the same however the file's labels were coded (a report lists tasks so)."""
        first = np.full(len(self.task_ids), self.task.size, dtype=np.intp)
        np.minimum.at(first, self.task, np.arange(self.task.size, dtype=np.intp))
        return np.argsort(first, kind="stable").astype(np.intp)

    def count(self, mask: NDArray[np.bool_]) -> NDArray[np.int64]:
        """Per task, how many of its rows ``mask`` (one bool per row) marks, e.g. timeouts."""
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != self.task.shape:
            raise ArgumentError(
                f"mask must be {self.task.size} booleans, one per row, got dtype {mask.dtype} "
                f"and shape {mask.shape}",
                argument="mask",
            )
        return np.bincount(self.task[mask], minlength=len(self.task_ids)).astype(np.int64)


TaskGroups = TaskTable
"""The older name of :class:`TaskTable`."""


def per_task(rows: Ledger) -> TaskTable:
    """``rows.tasks()``: the rows grouped by task (the older spelling)."""
    return rows.tasks()


def unrecorded(rows: int, fill: float) -> NDArray[Any]:
    """A column nobody recorded (codes -1, or NaN): one value seen ``rows`` times, read-only, with
    no memory per row (filling 18 absent columns of a million rows costs 0.25 s in page faults)."""
    return np.broadcast_to(np.array(fill, dtype=np.int64 if fill == -1 else np.float64), (rows,))


def once(col: NDArray[Any]) -> NDArray[Any]:
    """A column of one value seen many times (stride 0: not recorded, or kept once by the store)
    as that one value, else the column itself: a test of every row then runs once."""
    return col[:1] if col.size > 1 and col.strides == (0,) else col


def per_row(result: NDArray[Any], col: NDArray[Any]) -> NDArray[Any]:
    """A per-row result worked out on ``once(col)``, seen once per row of ``col`` (read-only when
    it was worked out once)."""
    return result if result.shape == col.shape else np.broadcast_to(result, col.shape)


def factorize(items: Sequence[str | None]) -> tuple[NDArray[np.int64], tuple[str, ...]]:
    """Codes and distinct labels (in order of first appearance) of optional strings (None -> -1).

    Every step runs in C (dict.fromkeys, map over a dict lookup): 4x quicker than a Python loop.
    """
    labels = tuple(s for s in dict.fromkeys(items) if s is not None)
    code: dict[str | None, int] = {s: i for i, s in enumerate(labels)}
    code[None] = -1
    return np.fromiter(map(code.__getitem__, items), dtype=np.int64, count=len(items)), labels
