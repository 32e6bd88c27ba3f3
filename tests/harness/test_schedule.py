"""The driver's rules of pace, alone (harness/run/_schedule.py): a repair run's rounds one task
at a time, and the stop after the first attempts' same harness error."""

from __future__ import annotations

from collections import deque

from trialbook.harness.run._schedule import FirstErrors, next_rounds


def _infra(error: str) -> dict[str, object]:
    return {"status": "infra_error", "error": error}


def test_rounds_take_the_first_queued_attempt_of_each_idle_task() -> None:
    # attempt-major queue (task, attempt): a1 is running, so a's next round waits; b and c each
    # give their first queued round; room 2 stops after b0 and c0
    queue = deque([("a", 2), ("b", 0), ("b", 1), ("c", 0)])
    taken = next_rounds(queue, {"a"}, 2, lambda item: item[0])
    assert taken == [("b", 0), ("c", 0)]
    assert list(queue) == [("a", 2), ("b", 1)]  # the rest, in their order
    # no room: nothing taken, nothing moved
    assert next_rounds(queue, set(), 0, lambda item: item[0]) == []
    assert list(queue) == [("a", 2), ("b", 1)]


def test_the_first_attempts_in_the_same_harness_error_stop_the_run() -> None:
    first = FirstErrors(3)
    # the same words before " (": the same kind of error, whatever task the details name
    assert first.see(_infra("engine gone (task t1); more")) is None
    assert first.see(_infra("engine gone (task t2)")) is None
    assert first.see(_infra("engine gone (task t3)")) == "engine gone (task t1)"
    # past the first three nothing more is looked at
    assert first.see(_infra("engine gone (task t4)")) is None


def test_one_agent_failure_or_another_error_among_the_first_keeps_the_run_going() -> None:
    mixed = FirstErrors(3)
    assert mixed.see(_infra("engine gone")) is None
    assert mixed.see({"status": "failed", "error": None}) is None  # the agent's own failure
    assert mixed.see(_infra("engine gone")) is None
    two_kinds = FirstErrors(2)
    assert two_kinds.see(_infra("engine gone")) is None
    assert two_kinds.see(_infra("disk full")) is None
    assert FirstErrors(0).see(_infra("engine gone")) is None  # a run of one: no pattern
