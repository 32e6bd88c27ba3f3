"""Repair rounds: what attempt i of a ``repair`` suite is told of attempt i-1 (docs/harness.md,
"Attempt protocols").

The feedback is agent-visible, so it holds what the suite author chose to reveal (the task's
``feedback``, ``trialbook.suite.FEEDBACK``): the previous round's outcome; by default also its named
checks by name, passed or not; each check's reason only where the task allows ``reasons``; the tail
of the grader's stdout only where it allows ``grader-stdout``. Never the oracle itself, the
grader's stderr or the agent's own output. A reason and the grader's stdout can carry the oracle
(``AssertionError: 0 != 42``; a runner relaying what the agent's code printed of the oracle
folder), so neither is passed on unless asked for, and ``suite freeze`` warns when they are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from trialbook.ledger import Ledger

__all__ = ["FEEDBACK_VAR", "STDOUT_TAIL", "feedback_json", "stored_feedback"]

FEEDBACK_VAR = "TRIALBOOK_FEEDBACK"
"""The variable naming the feedback file (read-only JSON); unset on a task's first round."""
STDOUT_TAIL = 4096
"""Bytes of the previous grader's stdout passed on, its last ones (a longer output is cut)."""


def feedback_json(
    row: Mapping[str, object], grader_stdout: bytes | None, level: str = "checks"
) -> str:
    """The feedback of one finished attempt at ``level`` (``trialbook.suite.FEEDBACK``): its index
    and outcome; from ``checks`` on its named checks (``{NAME: passed}``), from ``reasons`` on with
    their reasons (``{NAME: {"passed": bool, "reason": str or null}}``), and at ``grader-stdout``
    the tail of the grader's stdout too."""
    score = row.get("score")
    out: dict[str, object] = {
        "feedback": level,
        "attempt_index": row["attempt_index"],
        "passed": bool(row["passed"]),
        "status": row.get("status"),
        "timed_out": bool(row["timed_out"]),
        "score": None if not isinstance(score, float | int) or math.isnan(score) else score,
    }
    if level != "outcome":
        checks = _checks(row.get("checks"))
        if level == "checks":
            out["checks"] = None if checks is None else {n: c["passed"] for n, c in checks.items()}
        else:
            out["checks"] = checks
    if level == "grader-stdout":
        data = grader_stdout or b""
        out["grader_stdout"] = data[-STDOUT_TAIL:].decode("utf-8", errors="replace")
        out["grader_stdout_truncated"] = len(data) > STDOUT_TAIL
    return json.dumps(out, indent=2)


def _checks(text: object) -> dict[str, dict[str, object]] | None:
    """The row's ``checks`` (canonical JSON text, docs/ledger.md) as an object; None: none."""
    if not isinstance(text, str):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    return {
        str(name): {"passed": bool(c.get("passed")), "reason": c.get("reason")}
        for name, c in parsed.items()
        if isinstance(c, dict)
    }


def stored_feedback(
    rows: Ledger, transcript_base: Path, levels: Mapping[str, str] | None = None
) -> dict[tuple[str, int], str]:
    """The feedback each finished attempt of a run (``rows``, read from the ledger) hands its next
    round: what a resume of a repair run passes to the rounds it runs, at each task's level
    (``levels``, task id -> ``trialbook.suite.FEEDBACK``; default ``checks``), the checks read from
    the row, the grader's stdout (``grader-stdout`` only) read back from the kept raw output (none
    when the output was empty or is gone)."""
    levels = levels or {}
    out: dict[tuple[str, int], str] = {}
    status = rows.text("status").tolist()
    transcript = rows.text("transcript").tolist()
    index = rows.column("attempt_index").tolist()
    passed, timed_out = rows.column("passed").tolist(), rows.column("timed_out").tolist()
    score = rows.column("score").tolist()
    checks = rows.text("checks").tolist()
    for i, task in enumerate(rows.text("task_id").tolist()):
        level = levels.get(str(task), "checks")
        stdout: bytes | None = None
        if transcript[i] is not None and level == "grader-stdout":
            try:
                stdout = (transcript_base / str(transcript[i]) / "grader.stdout").read_bytes()
            except OSError:
                stdout = None  # an empty stdout is not kept; a deleted one is no feedback either
        row = {
            "attempt_index": int(index[i]),
            "passed": bool(passed[i]),
            "status": status[i],
            "timed_out": bool(timed_out[i]),
            "score": score[i],
            "checks": checks[i],
        }
        out[(str(task), int(index[i]))] = feedback_json(row, stdout, level)
    return out
