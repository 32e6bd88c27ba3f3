"""Fault-injection and regression-set cases: their own table, never part of the headline rate.

Seed 002 ("put fault recovery in its own evaluation matrix"): deliberately built edge cases (exit
before or after a commit, a lost receipt, an artefact changed after approval, a limit lost in
compaction) are organised by fault type and kept apart from natural tasks; mixing them in and
quoting one percentage misstates the real success rate. They make a regression set that guards a
mechanism against sliding back.

The marking is the task's stratum: ``fault:<type>`` marks a fault-injection case and
``regression:<type>`` a case of a mechanism's regression set (``<type>`` names the fault, e.g.
``fault:lost-receipt``). A plain stratum ``regression`` (regression *work*, such as fixing a bug
that came back, seed 004) is an ordinary task and stays in the headline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._failures import OUTCOMES, outcome_masks
from trialbook.ledger import Ledger, TaskTable

__all__ = ["FAULT_KINDS", "FaultKind", "FaultRow", "FaultTable", "fault_kind", "fault_table"]

FaultKind = Literal["fault", "regression"]
FAULT_KINDS: tuple[FaultKind, ...] = ("fault", "regression")


def fault_kind(stratum: str | None) -> tuple[FaultKind, str] | None:
    """(kind, fault type) when ``stratum`` marks a fault case (``fault:<type>`` or
    ``regression:<type>``), else None. An empty type reads as ``unspecified``."""
    if stratum is None:
        return None
    head, sep, tail = stratum.partition(":")
    kind = head.strip().lower()
    if not sep or kind not in FAULT_KINDS:
        return None
    return ("fault" if kind == "fault" else "regression"), (tail.strip() or "unspecified")


def fault_task_mask(groups: TaskTable) -> NDArray[np.bool_]:
    """Per task of ``groups``, whether its stratum marks it as a fault case."""
    return np.array([fault_kind(s) is not None for s in groups.stratum], dtype=bool)


@dataclass(frozen=True)
class FaultRow:
    """One fault type: its tasks and the outcomes of their attempts."""

    kind: FaultKind
    """fault (a fault-injection case) or regression (a case of a mechanism's regression set)."""
    fault_type: str
    """The type after the colon of the stratum, e.g. ``lost-receipt``."""
    tasks: int
    """Tasks of this type."""
    attempts: int
    """Their scored attempts."""
    outcomes: dict[str, int]
    """Attempts per outcome: passed, failed, timed_out, infra_error (every key present)."""
    tasks_always_passed: int
    """Tasks that passed on every attempt (the mechanism held every time)."""
    tasks_never_passed: int
    """Tasks that never passed."""
    task_ids: tuple[str, ...]
    """The tasks, in ledger order."""

    @property
    def pass_rate(self) -> float:
        """Passing attempts / attempts."""
        return self.outcomes["passed"] / self.attempts


@dataclass(frozen=True)
class FaultTable:
    """Fault type x outcome for the fault cases of one run, kept out of its headline rate."""

    rows: tuple[FaultRow, ...]
    """One row per (kind, fault type), in order of first appearance."""
    tasks: int
    """Fault-case tasks in all."""
    attempts: int
    """Their attempts in all."""


def fault_table(rows: Ledger) -> FaultTable | None:
    """The fault table of the fault-case attempts ``rows`` (None when there are none).

    Each attempt's outcome is its recorded ``status``; where none is recorded, passed, timed_out or
    failed from the required flags (a pass after a timeout counts as passed, as in score).
    """
    if len(rows) == 0:
        return None
    groups = rows.tasks()
    per = {name: groups.count(flag) for name, flag in outcome_masks(rows).items()}
    keys: dict[tuple[FaultKind, str], list[int]] = {}
    for i, stratum in enumerate(groups.stratum):
        marked = fault_kind(stratum)
        if marked is not None:
            keys.setdefault(marked, []).append(i)
    out = []
    for (kind, fault_type), members in keys.items():
        idx = np.array(members, dtype=np.intp)
        n, c = groups.attempts[idx], groups.passes[idx]
        out.append(
            FaultRow(
                kind=kind,
                fault_type=fault_type,
                tasks=int(idx.size),
                attempts=int(n.sum()),
                outcomes={name: int(per[name][idx].sum()) for name in OUTCOMES},
                tasks_always_passed=int((c == n).sum()),
                tasks_never_passed=int((c == 0).sum()),
                task_ids=tuple(groups.task_ids[i] for i in members),
            )
        )
    return FaultTable(
        rows=tuple(out), tasks=sum(r.tasks for r in out), attempts=sum(r.attempts for r in out)
    )


def split_faults(
    ledger: Ledger, groups: TaskTable, keep: NDArray[np.bool_], notes: list[str]
) -> tuple[Ledger, NDArray[np.bool_]]:
    """The fault-case attempts among ``keep`` (rows of ``ledger``, grouped by ``groups``), and
    ``keep`` without them; adds a note naming what was kept out of the headline."""
    faulty = fault_task_mask(groups)
    if not faulty.any():
        return ledger.where(np.zeros(len(ledger), dtype=bool)), keep
    row_fault = faulty[groups.task] & keep
    tasks = int((groups.count(row_fault) > 0).sum())
    if tasks:
        notes.append(
            f"{tasks} fault-injection/regression-set task(s) ({int(row_fault.sum())} attempts; "
            "stratum fault:<type> or regression:<type>) kept out of the headline and every rate "
            "below: they have their own fault table"
        )
    return ledger.where(row_fault), keep & ~row_fault
