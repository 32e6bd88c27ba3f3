"""What a scorecard's reader should know about the rows scored: completion, source, what was kept
out (leaks, fault cases, infrastructure errors, re-runs). Part of the score policy
(trialbook.analysis._score), kept here so that module stays one screenful of policy."""

from __future__ import annotations

from pathlib import Path

from trialbook.analysis._faults import fault_note
from trialbook.ledger import Ledger, RunTally

__all__ = ["policy_notes"]


def policy_notes(
    tally: RunTally, fault_rows: Ledger | None, *, drop_infra_errors: bool
) -> list[str]:
    """What the reader should know about the rows scored: completion, source, what was kept out."""
    provenance = tally.provenance
    completion = tally.completion
    notes: list[str] = []
    if completion is not None and not completion.complete:
        notes.append(
            f"this run is {completion.label}: its figures are of the attempts made so far, "
            "not of the run it set out to be (resume it to finish)"
        )
    if provenance is not None:
        version = f" ({provenance.source_version})" if provenance.source_version else ""
        notes.append(
            f"imported from {provenance.source}{version}: "
            + ", ".join(Path(f.path).name for f in provenance.files[:5])
            + (f" and {len(provenance.files) - 5} more" if len(provenance.files) > 5 else "")
        )
        notes.extend(provenance.notes)
    if fault_rows is not None and len(fault_rows):
        notes.append(fault_note(fault_rows))
    # a task with any leaked attempt is quarantined whole: its other attempts saw the same suite
    quarantined, leaked_tasks = tally.quarantined, tally.leaked_tasks
    infra_count = tally.status_rows
    if infra_count:
        kept_attempts = tally.kept_rows
        share = f"{infra_count} of {kept_attempts} attempts ({infra_count / kept_attempts:.1%})"
        if drop_infra_errors:
            notes.append(
                f"infrastructure errors: {share}, dropped from the denominator as asked (the "
                "rates below are over the remaining attempts)"
            )
            gone = tally.emptied_tasks
            if gone:
                shown = ", ".join(repr(g) for g in sorted(gone)[:10])
                more = f" and {len(gone) - 10} more" if len(gone) > 10 else ""
                notes.append(
                    f"{len(gone)} task(s) had only infrastructure errors and are not scored: "
                    f"{shown}{more}"
                )
    if tally.reruns:  # each counts once, by its re-run (the rows superseded count nowhere)
        notes.append(f"{tally.reruns} attempt(s) re-run after an infrastructure error (retry)")
    if leaked_tasks:
        shown = ", ".join(repr(tid) for tid in leaked_tasks[:10])
        more = f" and {len(leaked_tasks) - 10} more" if len(leaked_tasks) > 10 else ""
        notes.append(
            f"{len(leaked_tasks)} task(s) quarantined whole for an oracle leak "
            f"({len(quarantined)} leaked attempt(s)): {shown}{more}; not scored"
        )
    return notes
