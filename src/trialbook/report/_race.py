"""A race and a sequential comparison -> terminal text and JSON (``trialbook.race/1``,
``trialbook.sequential/1``). Computes no statistics: every number comes from the results."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from trialbook.report._json import json_safe

if TYPE_CHECKING:
    from trialbook.analysis import SequentialComparison
    from trialbook.race import RaceResult
    from trialbook.stats import SequenceLook

__all__ = [
    "RACE_SCHEMA",
    "SEQUENTIAL_SCHEMA",
    "race_look_line",
    "race_text",
    "race_to_dict",
    "sequential_text",
    "sequential_to_dict",
]

RACE_SCHEMA = "trialbook.race/1"
SEQUENTIAL_SCHEMA = "trialbook.sequential/1"

_BECAUSE = {
    "excludes-zero": "the sequence excludes 0",
    "min-effect": "the sequence excludes every difference of at least {min_effect}",
    "suite-spent": "every task of the suite was used",
    "max-tasks": "the task limit was reached",
}


def _pp(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{round(100 * x, 1) + 0.0:+.1f} pp"


def _interval(look: SequenceLook) -> str:
    if look.ci_low is None or look.ci_high is None:
        return "no interval (the discordant test decides only)"
    return f"[{_pp(look.ci_low)}, {_pp(look.ci_high)}]"


def _because(reason: str | None, min_effect: float | None) -> str:
    if reason is None:
        return "not stopped yet (interrupted)"
    return _BECAUSE[reason].format(min_effect=_pp(min_effect).lstrip("+"))


def _points(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:+.1f}"


def race_look_line(look: SequenceLook, tasks_total: int, attempts: int, full: int) -> str:
    """One progress line after a task pair (fits 80 columns until the decision is added)."""
    if look.ci_low is None or look.ci_high is None:
        interval = "(no interval)"
    else:
        interval = f"[{_points(look.ci_low)}, {_points(look.ci_high)}]"
    line = (
        f"pair {look.tasks}/{tasks_total}  {_points(look.estimate)} {interval} pp  "
        f"attempts {attempts}/{full} ({full - attempts} saved)"
    )
    return line if look.decision == "undecided" else f"{line}  {look.decision}"


def race_to_dict(r: RaceResult) -> dict[str, Any]:
    """The ``trialbook.race/1`` document."""
    doc = {
        "schema": RACE_SCHEMA,
        "decision": r.decision,
        "stopped_because": r.stopped_because,
        "tasks_used": r.tasks_used,
        "tasks_total": r.tasks_total,
        "attempts_used": r.attempts_used,
        "baseline": {"run_id": r.baseline_run},
        "candidate": {"run_id": r.candidate_run},
        "difference": {
            "estimate": r.look.estimate,
            "ci_low": r.look.ci_low,
            "ci_high": r.look.ci_high,
        },
        "method": r.method,
        "alpha": r.alpha,
    }
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def race_text(r: RaceResult, *, program: str = "trialbook") -> str:
    """The race's summary for the terminal."""
    look = r.look
    lines = [
        f"race {r.race_id}: {r.decision}",
        f"  baseline  {r.baseline_run}",
        f"  candidate {r.candidate_run}",
        f"  difference {_pp(look.estimate)}, anytime-valid {1 - r.alpha:.0%} interval "
        f"{_interval(look)}",
        f"  ({r.method}; order seed {r.order_seed})",
        f"  stopped: {_because(r.stopped_because, r.min_effect)}",
        f"  tasks used {r.tasks_used} of {r.tasks_total}; attempts {r.attempts_used} of "
        f"{r.attempts_full} ({r.attempts_full - r.attempts_used} saved)",
    ]
    if r.interrupted:
        lines.append(f"  continue with: {program} {' '.join(r.resume_command)}")
    return "\n".join(lines) + "\n"


def sequential_to_dict(c: SequentialComparison) -> dict[str, Any]:
    """The ``trialbook.sequential/1`` document (``compare`` on a race's runs, or --sequential)."""
    o = c.options
    doc = {
        "schema": SEQUENTIAL_SCHEMA,
        "source": c.source,
        "race_id": c.race_id,
        "decision": _decision(c),
        "stopped_because": c.stopped_because,
        "tasks_used": c.tasks_used,
        "tasks_total": c.tasks_total,
        "tasks_paired": c.tasks_paired,
        "baseline": {"run_id": c.baseline_run, "estimate": c.baseline_estimate},
        "candidate": {"run_id": c.candidate_run, "estimate": c.candidate_estimate},
        "difference": {
            "estimate": c.look.estimate,
            "ci_low": c.look.ci_low,
            "ci_high": c.look.ci_high,
        },
        "method": o.method,
        "alpha": o.alpha,
        "order_seed": o.order_seed,
        "min_effect": o.min_effect,
        "max_tasks": o.max_tasks,
    }
    cleaned: dict[str, Any] = json_safe(doc)
    return cleaned


def _decision(c: SequentialComparison) -> str:
    if c.look.decision != "undecided":
        return c.look.decision
    if c.race_id is not None and c.stopped_because is None:
        return "undecided"
    return "no detectable difference"


def sequential_text(c: SequentialComparison) -> str:
    """``compare``'s report of a sequential comparison."""
    look = c.look
    o = c.options
    if c.race_id is not None:
        head = f"trialbook compare — race {c.race_id}, {c.tasks_used} of {c.tasks_total} tasks used"
        why = (
            "These runs are a race that stopped on its own data: a fixed-design interval over "
            "the tasks used would be biased by that stopping, so only the race's anytime-valid "
            "interval is shown."
        )
    else:
        head = f"trialbook compare --sequential — {c.tasks_used} of {c.tasks_total} tasks in order"
        why = (
            "Anytime-valid: this interval holds at every look at once. The tasks are taken in "
            f"a random order (seed {o.order_seed}) while both runs have them, so looking again "
            "after more tasks ran continues the same sequence and keeps the error rate."
        )
        if c.tasks_used < c.tasks_paired:
            why += (
                f" {c.tasks_paired - c.tasks_used} paired task(s) lie past the first task only "
                "one run has, and wait for it."
            )
    lines = [
        head,
        "",
        f"baseline  {c.baseline_run}: {100 * c.baseline_estimate:.1f}%",
        f"candidate {c.candidate_run}: {100 * c.candidate_estimate:.1f}%",
        f"difference {_pp(look.estimate)}, anytime-valid {1 - o.alpha:.0%} interval "
        f"{_interval(look)}",
        f"decision: {_decision(c)} ({o.method})",
    ]
    if c.race_id is not None:
        lines.append(f"stopped: {_because(c.stopped_because, o.min_effect)}")
        if c.tasks_paired > c.tasks_used:
            lines.append(
                f"{c.tasks_paired - c.tasks_used} pair(s) past the stop ran in its batch; "
                "the sequence never looked at them"
            )
    lines += ["", *textwrap.wrap(why, 79)]
    return "\n".join(lines) + "\n"
