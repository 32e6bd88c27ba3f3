"""The usage file: what an agent says it spent, read as the hostile input it is.

The agent names the file (it may make it a symlink, a fifo, a folder, a file it cannot read, or a
gigabyte of lines), so the harness opens it without following a symlink and without blocking, reads
at most :data:`MAX_BYTES` and :data:`MAX_LINES`, and keeps every count within what the ledger
stores exactly (:data:`MAX_COUNT`).
Whatever is wrong with it is the agent's data: a problem in the row's ``error``, never an exception
and never an ``infra_error``. A figure that cannot be trusted is not recorded (unknown is not zero).
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MAX_BYTES", "MAX_COUNT", "MAX_LINES", "USAGE_KEYS", "read_usage"]

USAGE_KEYS: Mapping[str, type] = {
    "tokens_in": int,
    "tokens_out": int,
    "cost": float,
    "helper_calls": int,
    "tool_calls": int,
    "cache_hit": bool,
}
"""What an agent may report, one JSON object per line of ``$TRIALBOOK_USAGE_FILE``; lines are summed."""

MAX_BYTES = 1 << 20
"""The most of a usage file the harness reads (1 MiB); a longer file is not used at all."""
MAX_LINES = 10_000
"""The most lines a usage file may have; a file with more is not used at all."""
MAX_COUNT = 1 << 53
"""The largest count the ledger keeps exactly (an optional whole number, 2**53); a count or a sum
beyond it is not recorded."""


def _read_bounded(path: Path) -> tuple[bytes | None, str | None]:
    """The file's bytes (None when absent), or a problem; never follows a symlink, never blocks."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "usage file is a symlink: usage not recorded"
        return None, f"usage file cannot be opened ({exc.strerror}): usage not recorded"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "usage file is not a regular file: usage not recorded"
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        return None, f"usage file cannot be read ({exc.strerror}): usage not recorded"
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        return None, f"usage file is larger than {MAX_BYTES} bytes: usage not recorded"
    return b"".join(chunks), None


def read_usage(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Sum the usage lines an agent appended; returns (totals, problems). Missing = not reported.

    A line that is not a JSON object, an unknown key or a value of the wrong kind is skipped with a
    problem; a value or a sum beyond 2**53 (or a cost sum that is not finite) drops that figure.
    """
    data, problem = _read_bounded(path)
    if data is None:
        return {}, [problem] if problem else []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if len(lines) > MAX_LINES:
        return {}, [f"usage file has more than {MAX_LINES} lines: usage not recorded"]
    totals: dict[str, Any] = {}
    problems: list[str] = []
    dropped: set[str] = set()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            problems.append(f"usage line {lineno}: not JSON")
            continue
        if not isinstance(obj, dict):
            problems.append(f"usage line {lineno}: not a JSON object")
            continue
        for key, value in obj.items():
            problem = _add(totals, key, value, dropped)
            if problem:
                problems.append(f"usage line {lineno}: {problem}")
    for key in dropped:
        totals.pop(key, None)
    if "cost" in totals:
        totals["cost"] = float(totals["cost"])
    return totals, problems


def _add(totals: dict[str, Any], key: str, value: object, dropped: set[str]) -> str | None:
    """Add one reported figure to ``totals``; a problem, or None."""
    kind = USAGE_KEYS.get(key)
    if kind is None:
        return f"unknown key {key[:80]!r}"
    if kind is bool:
        if not isinstance(value, bool):
            return f"{key} must be true or false"
        totals[key] = bool(totals.get(key, False) or value)
        return None
    ok_type = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, ok_type) or value < 0:
        return f"{key} must be a number >= 0, got {_short(value)}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{key} must be a finite number, got {_short(value)}"
    if key in dropped:
        return None
    if kind is int:
        total = totals.get(key, 0) + value
        if total > MAX_COUNT:
            dropped.add(key)
            return f"{key} is beyond 2**53, the largest count the ledger keeps: {key} not recorded"
        totals[key] = total
        return None
    try:
        cost = float(totals.get(key, 0.0)) + float(value)
    except OverflowError:  # an integer too large for a float
        cost = math.inf
    if not math.isfinite(cost):
        dropped.add(key)
        return f"{key} sums to infinity: {key} not recorded"
    totals[key] = cost
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."
