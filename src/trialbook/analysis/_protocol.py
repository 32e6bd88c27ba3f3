"""The attempt protocol of a run, and what each figure may claim under it (docs/methodology.md,
"Attempt protocols").

pass@k and pass^k assume k independent attempts of a fixed policy. A ``repair`` run's attempts are
rounds (round i saw round i-1's outcome): its figure is success within k rounds, and pass^k has
no meaning there. A ``human-selected`` run's figure is the delivered success of the attempt a
person picked. A run that records no protocol (a ledger from before the field, or a file that
does not say) is read as independent, and every report says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from trialbook.errors import ArgumentError
from trialbook.ledger import Ledger, TaskTable
from trialbook.stats import pass_k_matrix

__all__ = [
    "METRIC",
    "NOT_RECORDED_NOTE",
    "independent",
    "protocol_columns",
    "protocol_label",
    "protocol_metrics",
    "protocol_names",
    "protocol_notes",
    "refuse_dependent",
    "side_metric",
]

METRIC = re.compile(r"^(pass@|pass\^|within@)(\d+)$")
"""The figures a paired comparison compares: pass@K, pass^K, or within@K (repair rounds)."""

NOT_RECORDED_NOTE = (
    "attempt protocol not recorded (a ledger from before the field, or a file that does not say): "
    "read as independent attempts, which pass@k and pass^k assume"
)


def independent(protocol: str | None) -> bool:
    """Whether the run is read as independent attempts (its own word, or none recorded)."""
    return protocol in (None, "independent")


def protocol_label(protocol: str | None) -> str:
    """The protocol as printed: its name, or ``not recorded (read as independent)``."""
    return protocol or "not recorded (read as independent)"


def protocol_notes(protocol: str | None) -> list[str]:
    """What a scorecard says about the run's protocol (nothing for a declared independent run)."""
    if protocol is None:
        return [NOT_RECORDED_NOTE]
    if protocol == "repair":
        return [
            "repair protocol: attempt i saw attempt i-1's outcome, so the attempts are rounds, "
            "not independent trials: the figure is success within k rounds (within@k); an "
            "all-k-pass figure has no meaning here"
        ]
    if protocol == "human-selected":
        return [
            "human-selected protocol: a person picked the attempt that counts; the figure is the "
            "delivered success of the picked attempts, not a rate over independent attempts"
        ]
    return []


def refuse_dependent(protocol: str | None, run_id: str, what: str, argument: str) -> None:
    """Refuse, naming the run, a figure ``what`` that assumes independent attempts."""
    if independent(protocol):
        return
    raise ArgumentError(
        f"run {run_id!r} is a {protocol} run: {what} assumes independent attempts",
        argument=argument,
    )


def side_metric(protocol: str | None, run_id: str, metric: str) -> str:
    """The figure ``metric`` stands for on this run: its own protocol's (a repair run's pass@K
    is within@K; a human-selected run's is its delivered success)."""
    m = METRIC.match(metric)
    if not m:
        raise ArgumentError(
            "--metric must be pass@K, pass^K or within@K (e.g. pass@1, pass^3, within@2), "
            f"got {metric!r}"
        )
    kind, k = m.group(1), m.group(2)
    if protocol == "human-selected":
        return "delivered"
    if protocol == "repair":
        if kind == "pass^":
            raise ArgumentError(
                f"run {run_id!r} is a repair run: {metric} (all of k independent attempts "
                "pass) has no meaning for rounds of repair; compare within@K"
            )
        return f"within@{k}"
    if kind == "within@":
        raise ArgumentError(
            f"run {run_id!r} is not a repair run: {metric} (success within K rounds) "
            "needs rounds of repair; compare pass@K or pass^K"
        )
    return metric


def protocol_columns(
    rows: Ledger, groups: TaskTable, protocol: str | None, where: str
) -> tuple[NDArray[np.int64], NDArray[np.float64] | None]:
    """Per task of ``groups``: the attempts recorded before its first pass (-1: none passed),
    whence success within K rounds; and for a human-selected run, whether the attempt marked
    ``selected`` passed (every task must mark one: else its delivered success is not known)."""
    attempt, passed = rows.column("attempt_index"), rows.column("passed").astype(bool)
    big = np.iinfo(np.int64).max
    first_pass = np.full(len(groups.task_ids), big, dtype=np.int64)
    np.minimum.at(first_pass, groups.task[passed], attempt[passed])
    rank = groups.count(attempt < first_pass[groups.task])
    rank[first_pass == big] = -1
    if protocol != "human-selected":
        return rank, None
    selected = rows.column("selected")
    marked = groups.count(~np.isnan(selected)) > 0
    if not marked.all():
        raise ArgumentError(
            f"{where} is human-selected, but {int((~marked).sum())} task(s) record no "
            "'selected' attempt: its delivered success is not known"
        )
    return rank, (groups.count((selected == 1) & passed) > 0).astype(np.float64)


def protocol_names(protocol: str | None, ks: Sequence[int]) -> list[str]:
    """The per-task figures the run's protocol gives meaning to: pass@k and pass^k of independent
    attempts; success within k rounds of a repair run (a pass among the task's first k rounds;
    pass^k has no meaning there); none for a human-selected run (its one figure is the delivered
    success of the picked attempts, from the selection view)."""
    if protocol == "repair":
        return [f"within@{k}" for k in ks]
    if protocol == "human-selected":
        return []
    return [f"pass@{k}" for k in ks] + [f"pass^{k}" for k in ks]


def protocol_metrics(
    protocol: str | None,
    ks: Sequence[int],
    n: NDArray[np.int64],
    c: NDArray[np.int64],
    before_first_pass: NDArray[np.int64],
    out: NDArray[np.float64],
) -> None:
    """Write each task's :func:`protocol_names` figures into ``out`` (tasks x figures, a view of
    the scorecard's matrix: no matrix of them is made beside it)."""
    if protocol == "repair":
        for j, k in enumerate(ks):
            out[:, j] = (before_first_pass >= 0) & (before_first_pass < k)
    elif protocol != "human-selected":
        pass_k_matrix(n, c, ks, out=(out[:, : len(ks)], out[:, len(ks) :]))
