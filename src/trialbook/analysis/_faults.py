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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import numpy as np
from numpy.typing import NDArray

from trialbook.analysis._failures import OUTCOMES, outcome_masks
from trialbook.ledger import Ledger, TaskTable

__all__ = [
    "FAULT_KINDS",
    "FaultKind",
    "FaultRow",
    "FaultTable",
    "fault_kind",
    "fault_note",
    "fault_strata",
    "fault_table",
    "fault_task_mask",
]

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
    protection: dict[str, int] = field(default_factory=dict)
    """Attempts per protection outcome (tasks declaring outcome kinds): ``held``, ``not held``,
    ``not recorded`` (every key present once some attempt of the table records outcome kinds)."""
    task_outcome: dict[str, int] = field(default_factory=dict)
    """Attempts per task outcome: ``done``, ``not done``, ``not recorded``; an attempt whose
    task was not done never counts as passed, whatever its protection outcome."""
    protected_but_failed: int = 0
    """Attempts whose protection held but whose task was not done (failures, counted apart)."""
    stop_reasons: tuple[tuple[str, int], ...] = ()
    """The recorded stop reasons with their counts, most common first."""

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

    @property
    def has_outcomes(self) -> bool:
        """Whether some attempt records an outcome kind (protection, task outcome, stop reason)."""
        return any(r.protection for r in self.rows)


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
    for i in groups.in_row_order().tolist():  # first appearance, however the file coded them
        marked = fault_kind(groups.stratum[i])
        if marked is not None:
            keys.setdefault(marked, []).append(i)
    outcomes = _outcome_columns(rows)
    out = []
    for (kind, fault_type), members in keys.items():
        idx = np.array(members, dtype=np.intp)
        n, c = groups.attempts[idx], groups.passes[idx]
        mine = np.isin(groups.task, idx)
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
                **(_no_outcomes() if outcomes is None else _outcome_counts(outcomes, mine)),
            )
        )
    return FaultTable(
        rows=tuple(out), tasks=sum(r.tasks for r in out), attempts=sum(r.attempts for r in out)
    )


_Outcomes = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.object_]]


def _outcome_columns(rows: Ledger) -> _Outcomes | None:
    """protection, task_outcome (NaN: not recorded) and stop_reason per row; None when no row
    records any of them."""
    if not any(rows.recorded(n) for n in ("protection", "task_outcome", "stop_reason")):
        return None
    return rows.column("protection"), rows.column("task_outcome"), rows.column("stop_reason")


class _OutcomeCounts(TypedDict):
    protection: dict[str, int]
    task_outcome: dict[str, int]
    protected_but_failed: int
    stop_reasons: tuple[tuple[str, int], ...]


def _no_outcomes() -> _OutcomeCounts:
    return {"protection": {}, "task_outcome": {}, "protected_but_failed": 0, "stop_reasons": ()}


def _outcome_counts(columns: _Outcomes, mine: NDArray[np.bool_]) -> _OutcomeCounts:
    protection, task, stop = columns[0][mine], columns[1][mine], columns[2][mine]
    reasons = Counter(r for r in stop.tolist() if r is not None)
    return {
        "protection": {
            "held": int((protection == 1).sum()),
            "not held": int((protection == 0).sum()),
            "not recorded": int(np.isnan(protection).sum()),
        },
        "task_outcome": {
            "done": int((task == 1).sum()),
            "not done": int((task == 0).sum()),
            "not recorded": int(np.isnan(task).sum()),
        },
        "protected_but_failed": int(((protection == 1) & (task == 0)).sum()),
        "stop_reasons": tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def fault_strata(strata: Sequence[str]) -> tuple[str, ...]:
    """The strata among ``strata`` that mark fault cases."""
    return tuple(s for s in strata if fault_kind(s) is not None)


def fault_note(fault_rows: Ledger) -> str:
    """The scorecard's note on the fault cases kept out of the headline."""
    tasks = len(fault_rows.tasks().task_ids)
    return (
        f"{tasks} fault-injection/regression-set task(s) ({len(fault_rows)} attempts; "
        "stratum fault:<type> or regression:<type>) kept out of the headline and every rate "
        "below: they have their own fault table"
    )
