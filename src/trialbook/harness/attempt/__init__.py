"""The attempt room: one attempt, spec to result, and what judges it.

The spec that travels to a worker and the result that comes back (``_spec``), the worker itself
(``_attempt``), the grader's step (``_grade``) and what a grader says (``_verdict``, through the
verdict channel ``_channel``, or a reward file ``_reward``), the agent's usage file (``_usage``),
the feedback of a repair round (``_feedback``) and ``grader-check``, the grader's own regression set
(``_gradercheck``).

It imports the sandbox room only. Exports load lazily.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialbook.harness.attempt._attempt import attempt_fields, run_attempt
    from trialbook.harness.attempt._feedback import feedback_json, stored_feedback
    from trialbook.harness.attempt._gradercheck import GraderCase, GraderCheck, grader_check
    from trialbook.harness.attempt._spec import AttemptResult, AttemptSpec, Budget

__all__ = [
    "AttemptResult",
    "AttemptSpec",
    "Budget",
    "GraderCase",
    "GraderCheck",
    "attempt_fields",
    "feedback_json",
    "grader_check",
    "run_attempt",
    "stored_feedback",
]

_LAZY = {
    "attempt_fields": "_attempt",
    "run_attempt": "_attempt",
    "feedback_json": "_feedback",
    "stored_feedback": "_feedback",
    "GraderCase": "_gradercheck",
    "GraderCheck": "_gradercheck",
    "grader_check": "_gradercheck",
    "AttemptResult": "_spec",
    "AttemptSpec": "_spec",
    "Budget": "_spec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trialbook.harness.attempt' has no attribute {name!r}")
    return getattr(import_module(f"trialbook.harness.attempt.{module}"), name)
