"""The spec / worker / driver split: a spec that travels, a worker that needs nothing else, an
executor that owns cancellation, and the public names of the harness."""

from __future__ import annotations

import dataclasses
import pickle
import time
from pathlib import Path

from tests.conftest import make_suite
from tests.harness.test_run import alive_with, unique_run_id, unique_seconds
from trialbook.harness import AttemptSpec, Budget, LocalExecutor, run_attempt
from trialbook.suite import fixture_hash, load_suite, oracle_hash


def spec_for(tmp_path: Path, agent: str, **task: object) -> AttemptSpec:
    root = make_suite(
        tmp_path / "suite",
        {"t": {"grader": "test -f done.txt", "fixture": {"a.txt": "A\n"}, **task}},
        freeze=False,
    )
    t = load_suite(root).task("t")
    return AttemptSpec(
        run_id=unique_run_id(),
        start_id=1,
        task_id=t.id,
        attempt_index=0,
        agent=agent,
        prompt="the prompt text",
        fixture=t.fixture,
        fixture_hash=fixture_hash(t),
        oracle=t.oracle,
        oracle_hash=oracle_hash(t),
        grader=t.grader,
        budget=Budget(timeout_s=10, grader_timeout_s=10, seed=7, temperature=None),
        tier="process",
        grace_s=0.5,
        row_fields={"k_budget": 1, "sandbox": "process"},
    )


def test_a_spec_travels_and_the_worker_needs_nothing_else(tmp_path: Path) -> None:
    """The spec pickles (as it would to a cluster worker); the worker returns the row and the raw
    output as bytes and writes nothing beside any ledger."""
    spec = spec_for(
        tmp_path, 'cat "$TRIALBOOK_PROMPT_FILE"; echo " seed=$TRIALBOOK_SEED"; touch done.txt'
    )
    travelled = pickle.loads(pickle.dumps(spec))
    assert travelled == spec
    result = pickle.loads(pickle.dumps(run_attempt(travelled)))
    assert result.row is not None
    assert result.row["passed"] is True
    assert result.row["seed"] == 7
    assert result.row["fixture_hash"] == spec.fixture_hash
    assert "transcript" not in result.row  # the driver sets it when it keeps the output
    assert result.output == {"agent.stdout": b"the prompt text seed=7\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]


def test_a_fixture_that_no_longer_matches_its_digest_is_an_infra_error(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "touch done.txt")
    (spec.fixture / "a.txt").write_text("changed after the run was planned\n")
    result = run_attempt(spec)
    assert result.row is not None
    assert result.row["status"] == "infra_error"
    assert "fixture does not match the digest" in str(result.row["error"])


def test_an_oracle_that_no_longer_matches_its_digest_is_an_infra_error(tmp_path: Path) -> None:
    spec = spec_for(tmp_path, "touch done.txt", oracle={"o.txt": "expected\n"})
    (spec.oracle / "o.txt").write_text("swapped\n")
    result = run_attempt(spec)
    assert result.row is not None
    assert result.row["status"] == "infra_error"
    assert "oracle does not match the digest" in str(result.row["error"])


def test_the_executor_cancels_a_running_attempt(tmp_path: Path) -> None:
    """Cancelling is the executor's: the worker gets no flag, its agent is killed, and it comes back
    cancelled (no row); an attempt submitted after the cancel does not start."""
    hang = unique_seconds()
    spec = spec_for(tmp_path, f"sleep {hang}")
    executor = LocalExecutor(2)
    try:
        running = executor.submit(run_attempt, spec)
        while not alive_with(hang) and not running.done():
            time.sleep(0.02)
        assert alive_with(hang)
        executor.cancel()
        assert running.result(timeout=60).cancelled  # a hang guard, not a timing check
        assert not alive_with(hang)
        later = executor.submit(run_attempt, dataclasses.replace(spec, start_id=2))
        assert later.result().cancelled
    finally:
        executor.shutdown(cancel=True)
