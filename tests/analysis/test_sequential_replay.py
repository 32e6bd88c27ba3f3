"""The replay of a sequence in a fixed task order: its stopping rules and the prefix it takes."""

from __future__ import annotations

import pytest

from trialbook.analysis import SequenceReplay, SequentialOptions, task_differences
from trialbook.errors import ArgumentError

ORDER = tuple(f"t{i:03d}" for i in range(300))


def test_no_difference_stops_on_the_min_effect_rule() -> None:
    replay = SequenceReplay(ORDER, SequentialOptions(min_effect=0.3))
    replay.advance(dict.fromkeys(ORDER, 0.0))
    assert replay.stopped_because == "min-effect"
    assert replay.look.decision == "no meaningful difference"
    assert replay.look.ci_low is not None
    assert -0.3 < replay.look.ci_low <= 0 <= replay.look.ci_high < 0.3  # type: ignore[operator]
    assert replay.used < len(ORDER)
    assert replay.next_tasks(4) == ()  # a stopped sequence asks for nothing more


def test_the_task_limit_and_the_suite_end_are_reasons_of_their_own() -> None:
    tied = dict.fromkeys(ORDER[:40], 0.0)
    limited = SequenceReplay(ORDER[:40], SequentialOptions(max_tasks=25))
    limited.advance(tied)
    assert (limited.used, limited.stopped_because) == (25, "max-tasks")
    spent = SequenceReplay(ORDER[:40], SequentialOptions())
    spent.advance(tied)
    assert (spent.used, spent.stopped_because) == (40, "suite-spent")
    assert spent.look.decision == "undecided"


def test_a_clear_difference_excludes_zero_and_the_suite_form_too() -> None:
    for method in ("spending", "betting-population", "betting-suite", "discordant"):
        replay = SequenceReplay(ORDER, SequentialOptions(method=method))  # type: ignore[arg-type]
        replay.advance(dict.fromkeys(ORDER, 1.0))
        assert replay.stopped_because == "excludes-zero", method
        assert replay.look.decision == "improvement", method


def test_the_sequence_takes_a_prefix_and_waits_at_the_first_missing_task() -> None:
    replay = SequenceReplay(ORDER, SequentialOptions())
    known = dict.fromkeys(ORDER[:10], 0.0) | dict.fromkeys(ORDER[11:30], 0.0)
    assert len(replay.advance(known)) == 10
    assert replay.next_tasks(3) == ORDER[10:13]
    assert len(replay.advance({**known, ORDER[10]: 0.0})) == 20  # the rest follows at once


def test_a_task_counts_once_both_runs_have_all_its_attempts() -> None:
    base = {"a": (3, 1), "b": (2, 2), "c": (3, 0)}
    cand = {"a": (3, 3), "b": (3, 0), "d": (3, 3)}
    assert task_differences(base, cand, attempts=3) == {"a": pytest.approx(2 / 3)}
    assert task_differences(base, cand) == {"a": pytest.approx(2 / 3), "b": -1.0}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (SequentialOptions(method="nope"), "method must be one of"),  # type: ignore[arg-type]
        (SequentialOptions(max_tasks=0), "max_tasks must be >= 1"),
        (SequentialOptions(method="discordant", min_effect=0.1), "needs an interval"),
        (SequentialOptions(alpha=0.0), "alpha must be in"),
    ],
)
def test_bad_options_name_the_argument(options: SequentialOptions, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        SequenceReplay(ORDER, options)
