"""Repair rounds: what attempt i of a ``repair`` suite is told of attempt i-1 (docs/harness.md,
"Attempt protocols").

The feedback is agent-visible, so it holds only what the row records of the previous attempt and
the tail of what its grader chose to print on stdout: never the oracle, never the grader's stderr
or the agent's own output. A repair suite's grader must therefore not print oracle content.
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


def feedback_json(row: Mapping[str, object], grader_stdout: bytes | None) -> str:
    """The feedback of one finished attempt: its index, outcome, score and grader stdout tail."""
    data = grader_stdout or b""
    tail = data[-STDOUT_TAIL:]
    score = row.get("score")
    return json.dumps(
        {
            "attempt_index": row["attempt_index"],
            "passed": bool(row["passed"]),
            "status": row.get("status"),
            "timed_out": bool(row["timed_out"]),
            "score": None if not isinstance(score, float | int) or math.isnan(score) else score,
            "grader_stdout": tail.decode("utf-8", errors="replace"),
            "grader_stdout_truncated": len(data) > STDOUT_TAIL,
        },
        indent=2,
    )


def stored_feedback(rows: Ledger, transcript_base: Path) -> dict[tuple[str, int], str]:
    """The feedback each finished attempt of a run (``rows``, read from the ledger) hands its next
    round: what a resume of a repair run passes to the rounds it runs (the grader's stdout read
    back from the kept raw output; none when the output was empty or is gone)."""
    out: dict[tuple[str, int], str] = {}
    status = rows.text("status").tolist()
    transcript = rows.text("transcript").tolist()
    index = rows.column("attempt_index").tolist()
    passed, timed_out = rows.column("passed").tolist(), rows.column("timed_out").tolist()
    score = rows.column("score").tolist()
    for i, task in enumerate(rows.text("task_id").tolist()):
        stdout: bytes | None = None
        if transcript[i] is not None:
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
        }
        out[(str(task), int(index[i]))] = feedback_json(row, stdout)
    return out
