"""What a grader says beyond its exit code: the last line of its stdout (docs/harness.md, "The grader
contract").

The line is one JSON object; every key is optional::

    {"checks": {"NAME": true | false | {"passed": bool, "reason": "..."}}, "score": x,
     "protection": bool, "task": bool, "stop_reason": "..."}

``score`` is partial credit in 0..1; ``checks`` the grader's named checks (kept by the ledger's
limits, ``trialbook.ledger.checks_from_grader``); ``protection``, ``task`` and ``stop_reason`` are
read only for a task that declares them (``outcomes`` in its task.toml). Only the grader's own last
non-empty line counts, as for the score: a line the agent's code printed earlier is output, not a
verdict. Whatever is wrong with the line is a note in the row's ``error`` and the part left out is
not recorded; the attempt is graded all the same.

The verdict stays the grader's exit code, with one rule on top: a task that declares a ``task``
outcome passes only when the grader also reports ``"task": true`` (a protective refusal that kept
the permissions safe is not a task success; a task outcome not reported is not one either).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field

from trialbook.ledger import CheckVerdict, checks_from_grader, checks_text

__all__ = ["MAX_LINE", "OUTCOME_KINDS", "Verdict", "read_verdict"]

MAX_LINE = 1 << 16
"""Characters of the grader's last line read at most; a longer one is not read (a note says so)."""
OUTCOME_KINDS = ("protection", "task", "stop_reason")
"""What a task may declare its grader reports (task.toml ``outcomes``)."""
_STOP_REASON_MAX = 500
"""Characters of a stop reason kept (as of a check's reason)."""
_FIELD = {"protection": "protection", "task": "task_outcome", "stop_reason": "stop_reason"}
_KEYS = {"score", "checks", "passed", *OUTCOME_KINDS}


@dataclass(frozen=True)
class Verdict:
    """The grader's verdict on one workspace, as the row records it."""

    passed: bool
    """Exit code 0, and (for a task declaring a ``task`` outcome) ``"task": true`` reported."""
    score: float | None = None
    """Partial credit, None when the grader gave none (or gave a bad one)."""
    checks: dict[str, CheckVerdict] | None = None
    """The named checks kept from the grader's line; None when it gave none."""
    outcomes: dict[str, object] = field(default_factory=dict)
    """Ledger field -> value for the outcome kinds the grader reported (protection, task_outcome,
    stop_reason)."""
    notes: tuple[str, ...] = ()
    """What was wrong with the line, or missing from it, in words (the row's ``error``)."""

    def fields(self) -> dict[str, object]:
        """The row's fields from this verdict (score, checks, and the outcome kinds)."""
        return {
            "score": self.score,
            "checks": None if self.checks is None else checks_text(self.checks),
            **self.outcomes,
        }


def _last_line(stdout: str) -> str | None:
    end = len(stdout.rstrip())
    if end == 0:
        return None
    start = stdout.rfind("\n", 0, end) + 1
    return stdout[start:end].strip()


def _outcomes(
    obj: dict[str, object], declared: tuple[str, ...]
) -> tuple[dict[str, object], list[str]]:
    values: dict[str, object] = {}
    notes: list[str] = []
    for kind in OUTCOME_KINDS:
        value = obj.get(kind)
        if kind not in declared:
            if kind in obj:
                notes.append(
                    f"grader reported {kind!r}, which the task does not declare: not recorded"
                )
            continue
        if kind not in obj:
            notes.append(
                f"grader did not report the task's declared outcome {kind!r}: not recorded"
            )
        elif kind == "stop_reason" and isinstance(value, str):
            clean = "".join("\ufffd" if unicodedata.category(c) == "Cc" else c for c in value)
            values[_FIELD[kind]] = clean[:_STOP_REASON_MAX]
        elif kind != "stop_reason" and isinstance(value, bool):
            values[_FIELD[kind]] = value
        else:
            want = "a string" if kind == "stop_reason" else "true or false"
            notes.append(f"grader's {kind!r} must be {want}, got {value!r}: not recorded")
    return values, notes


def read_verdict(
    stdout: str, exit_passed: bool, declared: tuple[str, ...] = (), channel: str | None = None
) -> Verdict:
    """The verdict from the grader's stdout and whether it exited 0; ``declared`` are the outcome
    kinds the task declares its grader reports. ``channel``: what the grader wrote on the verdict
    channel (_channel.py), None when it never connected; when it did, its last line is the
    verdict line and stdout is output only, whatever was appended to it, and a ``"passed": false``
    there fails the attempt whatever the exit code."""
    line = _last_line(stdout if channel is None else channel)
    obj: object = None
    notes: list[str] = []
    if line is not None and line.startswith("{"):
        if len(line) > MAX_LINE:
            notes.append(
                f"grader's last line is {len(line)} characters, over {MAX_LINE}: its score, "
                "checks and outcomes are not read"
            )
        else:
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                notes.append("grader's last line is not valid JSON")
    if not isinstance(obj, dict):
        obj = {}
    score: float | None = None
    if "score" in obj or (obj and not _KEYS & set(obj)):
        value = obj.get("score")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            notes.append(f"grader's score must be a number in 0..1, got {value!r}")
        else:
            score = float(value)
    checks = None
    if "checks" in obj:
        checks, check_notes = checks_from_grader(obj["checks"])
        notes += check_notes
    outcomes, outcome_notes = _outcomes(obj, declared)
    notes += outcome_notes
    passed = exit_passed
    said = obj.get("passed") if channel is not None else None
    if isinstance(said, bool) and exit_passed and not said:
        # the exit code reaches the harness through the wrapper shell, which code the grader runs
        # can trace (ptrace) and make exit 0; the channel's word is the grader's own
        passed = False
        notes.append("grader's exit code was 0 but its verdict channel said it failed: a failure")
    if "task" in declared and outcomes.get("task_outcome") is not True and exit_passed:
        passed = False
        if outcomes.get("task_outcome") is False:
            held = outcomes.get("protection")
            notes.append(
                "grader exited 0 but reported the task not done"
                + (" (protection held)" if held is True else "")
                + ": a failure"
            )
        else:
            notes.append("grader exited 0 without a task outcome: counted as a failure")
    return Verdict(passed, score, checks, outcomes, tuple(notes))
