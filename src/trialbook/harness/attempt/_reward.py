"""The verdict of a task whose verifier writes a reward file, read exactly as Harbor reads it.

Harbor's verifier (``harbor/verifier/verifier.py``, 0.25) runs the task's ``tests/test.sh``, which
writes ``/logs/verifier/reward.json`` (an object of numbers, or one number) or
``/logs/verifier/reward.txt`` (one number); the JSON file wins where both exist. An empty file, one
that does not parse, a value that is not a number (``true`` and ``false`` count as 1 and 0, as
Python's JSON does) or is not finite, and no file at all are the verifier's errors. Here the harness
reads the file from the host folder it bound at /logs/verifier in the grader's container, after
that container is gone: never through a link (the grader could point one at a host file), never
from anything but a regular file, and never more than 64 KiB of it.

A trial passes when every reward is at least 1 (Terminal-Bench's "resolved"); its score is the
reward, or the mean of a reward object's values, each of which is also a named check.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
from pathlib import Path

from trialbook.harness.attempt._verdict import Verdict
from trialbook.ledger import CheckVerdict, checks_from_grader

__all__ = ["REWARD_DIR", "read_reward"]

REWARD_DIR = "/logs/verifier"
_LIMIT = 64 * 1024


def _read(path: Path) -> bytes | None:
    """The file's bytes (None: no such file). OSError for a link, a fifo, a folder, or too big."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if info.st_size > _LIMIT:
            raise OSError(f"{path.name} is larger than {_LIMIT // 1024} KiB")
        return os.read(fd, _LIMIT + 1)
    finally:
        os.close(fd)


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def _failed(why: str) -> Verdict:
    return Verdict(passed=False, notes=(f"the verifier's reward: {why} (counted as a fail)",))


def read_reward(folder: Path) -> Verdict:
    """The verdict from the reward file in ``folder`` (the host side of /logs/verifier)."""
    try:
        as_json = _read(folder / "reward.json")
        as_text = None if as_json is not None else _read(folder / "reward.txt")
    except OSError as exc:
        return _failed(str(exc))
    if as_json is None and as_text is None:
        return _failed(f"no reward.json or reward.txt in {REWARD_DIR}")
    name = "reward.json" if as_json is not None else "reward.txt"
    data = as_json if as_json is not None else as_text
    assert data is not None
    if not data:
        return _failed(f"{name} is empty")
    text = data.decode("utf-8", errors="replace")
    if as_json is None:
        try:
            value = float(text)
        except ValueError:
            return _failed(f"{name} is not a number")
        if not math.isfinite(value):
            return _failed(f"{name} holds a non-finite reward")
        return _scored(value >= 1, value, None)
    try:
        parsed = json.loads(text)
    except ValueError:
        return _failed(f"{name} is not JSON")
    rewards = parsed if isinstance(parsed, dict) else {"reward": parsed}
    values: dict[str, float] = {}
    for key, raw in rewards.items():
        number = _number(raw)
        if number is None:
            return _failed(f"{name}: reward {str(key)[:60]!r} is not a finite number")
        values[str(key)] = number
    if not values:
        return _failed(f"{name} holds no reward")
    score = sum(values.values()) / len(values)
    checks: dict[str, CheckVerdict] | None = None
    notes: list[str] = []
    if isinstance(parsed, dict):  # each key a named check, held to the ledger's rules for them
        asked = {key: {"passed": v >= 1, "reason": f"reward {v:g}"} for key, v in values.items()}
        checks, notes = checks_from_grader(asked)
    verdict = _scored(all(v >= 1 for v in values.values()), score, checks)
    return dataclasses.replace(verdict, notes=(*verdict.notes, *notes)) if notes else verdict


def _scored(passed: bool, score: float, checks: dict[str, CheckVerdict] | None) -> Verdict:
    """The ledger keeps partial credit in 0..1: a reward outside it passes or fails as it says,
    with no score."""
    if 0 <= score <= 1:
        return Verdict(passed=passed, score=score, checks=checks)
    note = f"the verifier's reward {score:g} is outside 0..1: kept as pass/fail, no score"
    return Verdict(passed=passed, checks=checks, notes=(note,))
