"""A run's plan: each task's self-contained attempt spec, the attempts still to run, and what the
sandbox hides from them."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from trialbook.harness.attempt import AttemptSpec, Budget
from trialbook.harness.run._driver import Planned
from trialbook.harness.sandbox import LABEL_RUN, ContainerTarget, Tier, run_key, stamp
from trialbook.suite import Task, fixture_hash, oracle_hash

__all__ = ["harness_stamp", "hidden_paths", "plan", "templates"]


def harness_stamp() -> str:
    """This harness's stamp, the middle part of its sandbox tokens."""
    return stamp(os.getpid()) or "unknown"


def hidden_paths(
    suite_root: Path, ledger: Path, transcripts: Path, scratch: Path
) -> tuple[Path, ...]:
    """What the agent and the grader must not see (bwrap tier): the suite (its oracles), the ledger
    file and its journals, the transcripts of every run, the run's scratch folder (other attempts).

    Exactly these, not the folders around them: an agent's script beside the ledger stays visible.
    """
    ledger = ledger.resolve()
    journals = [ledger.with_name(ledger.name + tail) for tail in _JOURNALS]
    return (suite_root.resolve(), ledger, *journals, transcripts.resolve(), scratch.resolve())


_JOURNALS = ("-wal", "-shm", "-journal")
"""SQLite's files beside a ledger (write-ahead log, its index, a rollback journal)."""


def plan(
    templates: Mapping[str, AttemptSpec],
    k: int,
    seeds: Sequence[int],
    done: set[tuple[str, int]],
) -> list[Planned]:
    """Attempts still to run, attempt-major (every task's attempt 0 first), so a partial run is even."""
    return [
        Planned(template, index, seeds[index])
        for index in range(k)
        for task_id, template in templates.items()
        if (task_id, index) not in done
    ]


def templates(
    tasks: Sequence[Task],
    agent: str,
    grace_s: float,
    pass_env: Mapping[str, str],
    *,
    run_id: str,
    tier: Tier,
    temperature: float | None,
    grade_after_timeout: bool = False,
    scratch: Path,
    hidden: tuple[Path, ...],
    run_fields: Mapping[str, object],
    environments: Mapping[str, ContainerTarget] | None = None,
) -> dict[str, AttemptSpec]:
    """Each task's attempt spec, complete but for the attempt index, seed and start marker.
    ``environments``: the container tier's engine and image per task (labelled with the run)."""
    environments = environments or {}
    return {
        task.id: AttemptSpec(
            run_id=run_id,
            start_id=0,
            task_id=task.id,
            attempt_index=0,
            agent=agent,
            prompt=task.prompt,
            fixture=task.fixture.resolve(),
            fixture_hash=fixture_hash(task),
            oracle=task.oracle.resolve(),
            oracle_hash=oracle_hash(task),
            grader=task.grader,
            budget=Budget(
                timeout_s=task.timeout_s,
                grader_timeout_s=task.grader_timeout_s,
                seed=0,
                temperature=temperature,
                network=task.network,
                grade_after_timeout=grade_after_timeout,
                scratch_mb=task.scratch_mb,
                scratch_inodes=task.scratch_inodes,
            ),
            tier=tier,
            container=_labelled(environments.get(task.id), run_id),
            grace_s=grace_s,
            hidden=hidden,
            scratch=scratch,
            pass_env=dict(pass_env),
            outcomes=task.outcomes,
            feedback_level=task.feedback,
            row_fields={**run_fields, "stratum": task.stratum, "weight": task.weight},
            harness=harness_stamp(),
            run_key=run_key(run_id),
        )
        for task in tasks
    }


def _labelled(target: ContainerTarget | None, run_id: str) -> ContainerTarget | None:
    if target is None:
        return None
    return dataclasses.replace(target, labels={**target.labels, LABEL_RUN: run_id})
