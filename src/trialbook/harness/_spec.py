"""What travels between the driver and a worker: the attempt spec out, the attempt result back.

Both are frozen and picklable and name nothing of the driver's machine but the suite's fixture and
oracle folders, which travel with their content digests (the worker checks its copies against them).
The prompt travels as text; the ledger and the transcript folder do not travel at all: the driver
alone writes the row and the raw output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trialbook.harness._container import ContainerTarget
from trialbook.harness._sandbox import Tier

__all__ = ["AttemptResult", "AttemptSpec", "Budget"]


@dataclass(frozen=True)
class Budget:
    """What one attempt is given, from the frozen suite."""

    timeout_s: float
    """Wall-clock limit of the agent (TERM, grace, KILL when it is reached)."""
    grader_timeout_s: float
    """Wall-clock limit of the grader."""
    seed: int
    """The seed of this attempt index (the same for every system run on the suite)."""
    temperature: float | None
    """Sampling temperature given to the agent; None when the suite sets none."""
    network: bool = False
    """Whether the agent may reach the network (bwrap tier; the task opts in)."""
    grade_after_timeout: bool = False
    """Grade the workspace even when the agent hit its timeout (the suite opts in)."""
    scratch_mb: int = 4096
    """Size of the attempt's own scratch (workspace and io folder), MiB, where it can be bounded."""
    scratch_inodes: int = 1_000_000
    """Files and folders that scratch may hold, where it can be bounded."""


@dataclass(frozen=True)
class AttemptSpec:
    """One attempt, complete: a worker on any machine with the suite's folders can run it."""

    run_id: str
    """The run this attempt belongs to."""
    start_id: int
    """The id of the start marker the driver wrote (unique per start, so a re-run has its own)."""
    task_id: str
    """The task attempted."""
    attempt_index: int
    """0 .. k-1."""
    agent: str
    """The agent's command, run through ``/bin/sh -c`` in the workspace."""
    prompt: str
    """The prompt text (the worker writes it to the file the agent is told of)."""
    fixture: Path
    """The task's fixture folder, copied into the fresh workspace."""
    fixture_hash: str
    """Content digest of the fixture (``trialbook.suite.fixture_hash``); the copy must match it."""
    oracle: Path
    """The task's oracle folder (may be absent: an empty oracle), copied for the grader only."""
    oracle_hash: str
    """Content digest of the oracle (``trialbook.suite.oracle_hash``); the copy must match it."""
    grader: str
    """The grader's shell command, run in the workspace after the agent; exit 0 = pass."""
    budget: Budget
    """Timeouts, seed, temperature, network."""
    tier: Tier
    """Sandbox tier of the agent and the grader."""
    container: ContainerTarget | None = None
    """The container tier: the engine and the task's image (prepared before the run)."""
    gateway: tuple[str, int] | None = None
    """The container tier, an agent reaching the model: the gateway's unix socket (or its node's
    relay) and the port its forwarder listens on in the agent's network namespace."""
    memory_mb: int = 8192
    """Address-space limit of every process of the attempt."""
    grace_s: float = 2.0
    """Seconds between SIGTERM and SIGKILL when the attempt is stopped."""
    hidden: tuple[Path, ...] = ()
    """Folders the sandbox hides (bwrap tier): suite, ledger folder, transcripts, other attempts."""
    scratch: Path | None = None
    """Folder for the throwaway attempt folder; None: the system's temporary folder."""
    pass_env: Mapping[str, str] = field(default_factory=dict)
    """The only variables of the caller's environment the agent gets (allow-listed by name)."""
    outcomes: tuple[str, ...] = ()
    """The outcome kinds the task declares its grader reports (protection, task, stop_reason)."""
    row_fields: Mapping[str, object] = field(default_factory=dict)
    """Fields the row carries as given (system, dataset_id, k_budget, versions, sandbox, stratum,
    weight)."""
    feedback: str | None = None
    """A repair round's view of the task's previous round (JSON, ``_feedback``): written to a
    read-only file the agent finds through ``TRIALBOOK_FEEDBACK``; None: no previous round, or an
    independent run."""
    feedback_level: str = "checks"
    """What this task's next repair round is told of this one (``trialbook.suite.FEEDBACK``)."""
    harness: str = ""
    """The stamp of the harness running the run (``trialbook.harness._stamp``): start ids are per
    ledger, so two harnesses running one run id on two ledgers (or the same run twice) would
    otherwise share tokens, and each would sweep the other's processes as its own."""

    run_key: str = ""
    """The run's part of the token (``trialbook.harness._sweep.run_key``, made by the driver)."""
    start_key: str = ""
    """The attempt's part of the token (``trialbook.harness._sweep.start_key``, made by the
    driver)."""

    @property
    def token(self) -> str:
        """The sandbox token every process of the agent carries (``RUN_KEY/HARNESS/START_KEY``):
        neither part says which run it is or when it started, so a race's two sides look alike."""
        return f"{self.run_key}/{self.harness}/{self.start_key}"


@dataclass(frozen=True)
class AttemptResult:
    """What a worker hands back to the driver."""

    row: Mapping[str, object] | None
    """The attempt's ledger row without ``transcript`` (the driver sets it when it keeps the output);
    None when the executor cancelled the attempt: it is then cut off, not finished."""
    output: Mapping[str, bytes] = field(default_factory=dict)
    """Raw output by file name (``agent.stdout``, ``agent.stderr``, ``grader.stdout``,
    ``grader.stderr``); only the streams that are not empty."""

    @property
    def cancelled(self) -> bool:
        """The attempt was stopped by its executor and has no row."""
        return self.row is None
