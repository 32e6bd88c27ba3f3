"""The reward file of a Harbor-style verifier, read as Harbor 0.25 reads it
(harbor/verifier/verifier.py: reward.json first, else reward.txt; empty, unparsable, non-numeric
and non-finite values are the verifier's errors), and safely: never through a link, never a fifo,
never more than 64 KiB."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trialbook.harness.attempt._reward import read_reward


@pytest.mark.parametrize(
    ("files", "passed", "score"),
    [
        ({"reward.txt": "1\n"}, True, 1.0),
        ({"reward.txt": "0"}, False, 0.0),
        ({"reward.txt": "0.25"}, False, 0.25),
        ({"reward.json": '{"a": 1, "b": 1}'}, True, 1.0),
        ({"reward.json": '{"a": 1, "b": 0}'}, False, 0.5),
        ({"reward.json": "1"}, True, 1.0),  # a bare number, as Harbor allows
        ({"reward.json": '{"a": true}'}, True, 1.0),  # Python's JSON: true is 1
        ({"reward.json": '{"a": 0}', "reward.txt": "1"}, False, 0.0),  # JSON wins
        ({"reward.txt": "3"}, True, None),  # outside 0..1: pass/fail only
    ],
)
def test_a_reward_gives_the_verdict_harbor_would(
    tmp_path: Path, files: dict[str, str], passed: bool, score: float | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    verdict = read_reward(tmp_path)
    assert (verdict.passed, verdict.score) == (passed, score)


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({}, "no reward.json or reward.txt"),
        ({"reward.txt": ""}, "reward.txt is empty"),
        ({"reward.txt": "one"}, "reward.txt is not a number"),
        ({"reward.txt": "nan"}, "non-finite"),
        ({"reward.txt": "inf"}, "non-finite"),
        ({"reward.json": "{"}, "not JSON"),
        ({"reward.json": '{"a": "1"}'}, "is not a finite number"),
        ({"reward.json": '{"a": NaN}'}, "is not a finite number"),
        ({"reward.json": "{}"}, "holds no reward"),
        ({"reward.txt": "1" * 70_000}, "larger than 64 KiB"),
    ],
)
def test_a_verifier_error_is_a_fail_that_says_why(
    tmp_path: Path, files: dict[str, str], why: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    verdict = read_reward(tmp_path)
    assert not verdict.passed
    assert verdict.score is None
    assert why in verdict.notes[0]


def test_a_link_or_a_fifo_is_never_followed_or_waited_on(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret"
    secret.write_text("1")
    verifier = tmp_path / "logs"
    verifier.mkdir()
    (verifier / "reward.txt").symlink_to(secret)
    assert not read_reward(verifier).passed
    os.remove(verifier / "reward.txt")
    os.mkfifo(verifier / "reward.txt")  # opened for reading, a fifo would block forever
    verdict = read_reward(verifier)
    assert not verdict.passed
    assert "not a regular file" in verdict.notes[0]


def test_reward_keys_are_held_to_the_ledgers_rules_for_check_names(tmp_path: Path) -> None:
    # the verifier runs where the agent's code ran: its keys are hostile text (an escape
    # sequence for the terminal, too many to keep); the verdict stands, the bad names do not
    (tmp_path / "reward.json").write_text('{"ok": 1, "\\u001b]52;c;eA==\\u0007": 1}')
    verdict = read_reward(tmp_path)
    assert verdict.passed
    assert verdict.checks is not None
    assert set(verdict.checks) == {"ok"}
    assert "left out" in verdict.notes[0]
    many = ",".join(f'"k{i}": 1' for i in range(5000))
    (tmp_path / "reward.json").write_text("{" + many + "}")
    verdict = read_reward(tmp_path)
    assert verdict.passed
    assert verdict.checks is None
    assert "none recorded" in verdict.notes[0]
