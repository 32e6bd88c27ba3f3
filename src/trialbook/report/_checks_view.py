"""The words and cells of the per-check tables (score, report, compare) and of the fault table's
outcome kinds, shared by the terminal, markdown and HTML renderers. Read off the frozen results;
nothing here computes a statistic."""

from __future__ import annotations

from trialbook.analysis import CheckMove, Comparison, RunScore
from trialbook.report._views import pct

__all__ = [
    "CHECK_HEAD",
    "MOVE_HEAD",
    "OUTCOME_HEAD",
    "check_rows",
    "check_title",
    "move_rows",
    "move_title",
    "moved",
    "not_compared_line",
    "outcome_rows",
    "outcome_title",
    "top_reasons",
]

CHECK_HEAD = ("check", "passed", "interval", "attempts", "lacking", "failure reasons")
REASONS_SHOWN = 2


REASON_SHOWN = 48
"""Characters of a reason in a table (JSON has it whole)."""


def _cut(text: str, limit: int | None = REASON_SHOWN) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "\u2026"


def top_reasons(
    reasons: tuple[tuple[str, int], ...],
    other: int,
    shown: int = REASONS_SHOWN,
    *,
    limit: int | None = REASON_SHOWN,
) -> str:
    """``no source (4); timeout (1); 2 more`` — the first ``shown`` reasons (each cut at
    ``limit`` characters; None: whole) and what is left."""
    parts = [f"{_cut(text, limit)} ({count})" for text, count in reasons[:shown]]
    rest = sum(count for _, count in reasons[shown:]) + other
    if rest:
        parts.append(f"{rest} more")
    return "; ".join(parts) or "-"


def check_title(run: RunScore) -> str:
    return (
        f"checks: the grader's {len(run.checks)} named check(s), pass rate over tasks "
        f"({run.bootstrap.confidence:.0%} interval); attempts lacking a check are left out of it; "
        "the most common failure reasons"
    )


def check_rows(run: RunScore) -> list[tuple[str, ...]]:
    """Per check: name, pass rate, interval, passed/attempts recording it, attempts lacking it,
    the most common failure reasons."""
    return [
        (
            c.name,
            pct(c.rate.estimate),
            f"{pct(c.rate.ci_low, 0)}–{pct(c.rate.ci_high, 0)}",
            f"{c.passed}/{c.attempts}",
            str(c.lacking),
            top_reasons(c.reasons, c.other_reasons),
        )
        for c in run.checks
    ]


OUTCOME_HEAD = ("fault case", "protected", "task done", "held, not done", "stop reasons")


def outcome_title(run: RunScore) -> str:
    return (
        "fault cases by outcome kind: protection and task outcome apart (a protected attempt "
        "whose task was not done is a failure); n/r = not recorded"
    )


def _split(counts: dict[str, int], yes: str, no: str) -> str:
    known = counts[yes] + counts[no]
    text = f"{counts[yes]}/{known}"
    return text + (f" +{counts['not recorded']} n/r" if counts["not recorded"] else "")


def outcome_rows(run: RunScore) -> list[tuple[str, ...]]:
    """Per fault type whose attempts record outcome kinds: protection held of those recording
    it, task done of those recording it, protected-but-failed attempts, the stop reasons."""
    if run.faults is None or not run.faults.has_outcomes:
        return []
    return [
        (
            f"{r.kind}:{r.fault_type}",
            _split(r.protection, "held", "not held"),
            _split(r.task_outcome, "done", "not done"),
            str(r.protected_but_failed),
            top_reasons(r.stop_reasons, 0),
        )
        for r in run.faults.rows
        if r.protection
    ]


def _pp(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:+.1f} pp"  # never "-0.0 pp"


MOVE_HEAD = ("check", "tasks", "from", "to", "change (pp)", "interval (pp)", "")


def moved(move: CheckMove) -> str:
    """``rose`` / ``fell`` when the interval excludes 0, else ``-`` (no detectable move)."""
    d = move.difference
    return "rose" if d.ci_low > 0 else "fell" if d.ci_high < 0 else "-"


def move_title(c: Comparison) -> str:
    return (
        f"checks: per-task pass share from baseline to candidate over the tasks both record it "
        f"on ({c.confidence:.0%} paired task-bootstrap interval); rose/fell: it excludes 0"
    )


def not_compared_line(c: Comparison) -> str | None:
    """The checks both runs record on fewer than two shared tasks, which have no interval."""
    if not c.checks_not_compared:
        return None
    names = ", ".join(c.checks_not_compared[:10])
    more = f" and {len(c.checks_not_compared) - 10} more" if len(c.checks_not_compared) > 10 else ""
    return (
        f"{len(c.checks_not_compared)} check(s) on fewer than two shared tasks, not compared: "
        f"{names}{more}"
    )


def move_rows(c: Comparison) -> list[tuple[str, ...]]:
    """Per shared check: name, tasks, baseline and candidate rates, difference, interval, moved."""
    return [
        (
            m.name,
            str(m.difference.tasks),
            pct(m.difference.baseline),
            pct(m.difference.candidate),
            _pp(m.difference.estimate)[:-3],
            f"{_pp(m.difference.ci_low)[:-3]} to {_pp(m.difference.ci_high)[:-3]}",
            moved(m),
        )
        for m in c.checks
    ]
