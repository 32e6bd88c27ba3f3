"""The attempt protocol of a run, and what each figure may claim under it (docs/methodology.md,
"Attempt protocols").

pass@k and pass^k assume k independent attempts of a fixed policy. A ``repair`` run's attempts are
rounds (round i saw round i-1's outcome): its figure is success within k rounds, and pass^k has
no meaning there. A ``human-selected`` run's figure is the delivered success of the attempt a
person picked. A run that records no protocol (a ledger from before the field, or a file that
does not say) is read as independent, and every report says so.
"""

from __future__ import annotations

from trialbook.errors import ArgumentError

__all__ = [
    "NOT_RECORDED_NOTE",
    "independent",
    "protocol_label",
    "protocol_notes",
    "refuse_dependent",
]

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
