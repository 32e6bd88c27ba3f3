"""Why attempts failed: the failed attempts of a run by outcome and by recorded error text."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trialbook.ledger import Ledger

__all__ = ["OUTCOMES", "Failures", "failure_breakdown", "outcome_masks"]

OUTCOMES = ("passed", "failed", "timed_out", "infra_error")
"""Every attempt has exactly one outcome."""

SHOWN_ERRORS = 10
"""The most frequent error texts kept; the rest are counted together."""


def outcome_masks(rows: Ledger) -> dict[str, NDArray[np.bool_]]:
    """Per outcome, which rows have it: passed; infra_error by its recorded status; timed_out by
    the harness's flag (a pass after a timeout is a pass); failed for the rest."""
    passed = rows.column("passed")
    infra = rows.has_status("infra_error") & ~passed
    timed = rows.column("timed_out") & ~passed & ~infra
    return {
        "passed": passed,
        "failed": ~passed & ~timed & ~infra,
        "timed_out": timed,
        "infra_error": infra,
    }


@dataclass(frozen=True)
class Failures:
    """The failed attempts of one run (everything that did not pass), broken down."""

    attempts: int
    """Attempts that did not pass."""
    by_outcome: dict[str, int]
    """Of them: failed (the grader said no), timed_out, infra_error (every key present)."""
    by_error: tuple[tuple[str, int], ...]
    """The most frequent recorded ``error`` texts of failed attempts, with their counts, most
    frequent first (ties in order of first appearance)."""
    other_errors: int
    """Failed attempts with a recorded error beyond those shown."""
    no_error: int
    """Failed attempts that record no error text."""


def failure_breakdown(rows: Ledger) -> Failures:
    """The breakdown of ``rows``' attempts that did not pass."""
    masks = outcome_masks(rows)
    failed = ~masks["passed"]
    attempts = int(failed.sum())
    counts: Counter[str] = Counter()
    if rows.recorded("error"):
        # the text of the failed rows only; where() would copy every column first
        counts.update(e for e in rows.column("error")[failed].tolist() if e is not None)
    top = tuple(counts.most_common(SHOWN_ERRORS))
    known = sum(counts.values())
    return Failures(
        attempts=attempts,
        by_outcome={name: int(masks[name].sum()) for name in OUTCOMES[1:]},
        by_error=top,
        other_errors=known - sum(n for _, n in top),
        no_error=attempts - known,
    )
