"""What ``trialbook run`` takes (:class:`RunOptions`) and what a run did (:class:`RunResult`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trialbook.harness.run._model import ModelOptions

__all__ = ["RunOptions", "RunResult"]


@dataclass(frozen=True)
class RunOptions:
    """Everything ``trialbook run`` takes."""

    suite: Path | None
    """The suite folder; None to resume a run (its record names it)."""
    agent: str | None
    """The agent's command; None to resume a run with the agent it records."""
    ledger: Path
    system: str | None = None
    run_id: str | None = None
    resume: str | None = None
    """Resume this run: its record gives the suite, agent, sandbox and tasks; any given here must
    be the same."""
    jobs: int | None = None
    """Attempts in flight at once; None: 1 on the local executor, the cluster's CPUs on Ray."""
    sandbox: str | None = None
    """Sandbox tier: ``auto`` (bwrap where it works, else process), ``bwrap`` or ``process``;
    None: ``auto`` for a new run, the run's own for a resume."""
    subset: str | None = None
    """Run only the tasks of this subset named in suite.toml ``[subsets]``, e.g. ``smoke``."""
    tasks: tuple[str, ...] = ()
    """Run only the tasks whose ids match one of these shell globs (``repair-*``)."""
    limit: int | None = None
    """Run only the first this many of the selected tasks (suite order)."""
    executor: str = "local"
    """``local`` (a thread pool here) or ``ray`` (each attempt a task on a Ray cluster)."""
    ray_address: str | None = None
    """The Ray cluster to run on (``ray`` executor); None: ``RAY_ADDRESS``, else a local instance."""
    pass_env: Mapping[str, str] = field(default_factory=dict)
    """Variables of the caller's environment passed to the agent. A resume given none passes the
    ones the run records, read from this process's environment."""
    model_version: str | None = None
    rerun_reason: str | None = None
    grace_s: float = 2.0
    rerun_infra: bool = False
    """With ``resume``: run again every attempt whose row that counts is an ``infra_error``, not
    only those the harness lost (``lost``: a dead worker or node, a foreign cancel, no result in
    time), e.g. after fixing a sandbox that could not start. Each re-run is a new row (retry + 1)."""
    only: tuple[str, ...] = ()
    """Run only the attempts of these tasks of the run, still missing (``trialbook race`` runs its
    task pairs so, a few at a time); the run stays 'interrupted' until all its tasks are done."""
    model: ModelOptions | None = None
    """Reach a model through the run's gateway (docs/gateway.md, "In a run"); None: no gateway."""
    network_model: bool = False
    """Every task as if it declared ``network = "model"`` (the gateway and nothing else, even for
    a task with ``network = true``); needs ``model``."""


@dataclass(frozen=True)
class RunResult:
    """What a finished (or interrupted) run did."""

    run_id: str
    ledger: Path
    tier: str
    planned: int
    written: int
    cut_off: int
    """Attempts found cut off by an earlier crash and run again (resume)."""
    quarantined: tuple[str, ...]
    interrupted: bool
    notes: tuple[str, ...]
    resume_command: tuple[str, ...] = ()
    """The ``trialbook run`` arguments that resume this run (after the program's name)."""
    reruns: int = 0
    """Attempts the harness had lost (infra_error rows marked ``lost``) run again by this resume,
    each as a new row of the next retry."""
    refused_unattributed: int | None = None
    """Calls the run's model gateway refused at the address of no open attempt (a guessed
    address, an attempt that had ended): no row holds them. None: the run had no gateway."""
