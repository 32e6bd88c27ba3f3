"""The ``checks`` field: a grader's named checks, one verdict and reason each (docs/ledger.md).

A row's ``checks`` is the canonical JSON text of ``{name: {"passed": bool, "reason": str | null}}``
(sorted keys, no spaces). The same limits hold wherever checks come from: the harness keeps only the
checks of a grader's line that meet them (:func:`checks_from_grader`, the others left out with a
note), and a ledger file whose ``checks`` breaks them is refused (:func:`read_checks`, through the
rules).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "MAX_CHECKS",
    "MAX_NAME",
    "MAX_REASON",
    "CheckVerdict",
    "checks_from_grader",
    "checks_text",
    "read_checks",
]

MAX_CHECKS = 64
"""Checks one row may hold; a grader line naming more records none of them."""
MAX_NAME = 64
"""Characters of a check's name."""
MAX_REASON = 500
"""Characters of a check's reason; a longer one from a grader is cut to this, with a note."""


@dataclass(frozen=True)
class CheckVerdict:
    """One named check of a grader: whether it passed, and why not (or why) in its words."""

    passed: bool
    """The check's own verdict (the attempt's verdict stays the grader's exit code)."""
    reason: str | None
    """The grader's reason, None when it gave none."""


def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


def _name_problem(name: str) -> str | None:
    if not name.strip():
        return "a check name must not be empty"
    if len(name) > MAX_NAME:
        return f"check name {name[:20]!r}...: longer than {MAX_NAME} characters"
    if _has_control(name):
        return f"check name {name!r}: holds a control character"
    return None


def checks_text(checks: Mapping[str, CheckVerdict]) -> str:
    """The canonical JSON text of ``checks`` (sorted keys, no spaces), as a row records it."""
    return json.dumps(
        {n: {"passed": v.passed, "reason": v.reason} for n, v in checks.items()},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def read_checks(text: str) -> dict[str, CheckVerdict]:
    """The checks of a row's ``checks`` text; ValueError naming what is wrong when it breaks the
    contract (not JSON, not an object, a bad name, a value not ``{"passed", "reason"}``)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not valid JSON") from None
    if not isinstance(obj, dict):
        raise ValueError(f"must be a JSON object of named checks, got {type(obj).__name__}")
    if len(obj) > MAX_CHECKS:
        raise ValueError(f"{len(obj)} checks, more than {MAX_CHECKS}")
    out: dict[str, CheckVerdict] = {}
    for name, value in obj.items():
        if problem := _name_problem(name):
            raise ValueError(problem)
        if not isinstance(value, dict) or set(value) != {"passed", "reason"}:
            raise ValueError(f'check {name!r}: must be {{"passed": bool, "reason": str or null}}')
        passed, reason = value["passed"], value["reason"]
        if not isinstance(passed, bool):
            raise ValueError(f"check {name!r}: 'passed' must be true or false, got {passed!r}")
        if reason is not None and (
            not isinstance(reason, str) or len(reason) > MAX_REASON or _has_control(reason)
        ):
            raise ValueError(
                f"check {name!r}: 'reason' must be null or a string of at most {MAX_REASON} "
                "characters without control characters"
            )
        out[name] = CheckVerdict(passed, reason)
    return out


def checks_from_grader(obj: object) -> tuple[dict[str, CheckVerdict] | None, list[str]]:
    """The checks a grader's last line gives (its ``checks`` value), and notes on what was left out.

    Lenient where the ledger is strict: a check whose name or value breaks the contract is left out
    (the others kept) and named in a note; a reason that is too long is cut, control characters in
    it become U+FFFD. Not an object, or more than :data:`MAX_CHECKS` checks: none is kept (None).
    """
    if not isinstance(obj, dict):
        return None, [
            f"grader's 'checks' must be an object, got {type(obj).__name__}: not recorded"
        ]
    if len(obj) > MAX_CHECKS:
        return None, [f"grader reported {len(obj)} checks, more than {MAX_CHECKS}: none recorded"]
    kept: dict[str, CheckVerdict] = {}
    notes: list[str] = []
    for name, value in obj.items():
        if problem := _name_problem(name):
            notes.append(f"grader's {problem}: left out")
            continue
        if isinstance(value, bool):
            kept[name] = CheckVerdict(value, None)
            continue
        passed = value.get("passed") if isinstance(value, dict) else None
        reason = value.get("reason") if isinstance(value, dict) else None
        if (
            not isinstance(value, dict)
            or not isinstance(passed, bool)
            or not set(value) <= {"passed", "reason"}
            or not (reason is None or isinstance(reason, str))
        ):
            notes.append(
                f'grader\'s check {name[:MAX_NAME]!r}: must be true, false or {{"passed": bool, '
                '"reason": str}: left out'
            )
            continue
        if reason is not None:
            clean = "".join("\ufffd" if unicodedata.category(c) == "Cc" else c for c in reason)
            if len(clean) > MAX_REASON:
                notes.append(f"grader's check {name!r}: reason cut to {MAX_REASON} characters")
                clean = clean[: MAX_REASON - 1] + "\u2026"
            elif clean != reason:
                notes.append(f"grader's check {name!r}: control characters in its reason replaced")
            reason = clean
        kept[name] = CheckVerdict(passed, reason)
    return kept, notes
