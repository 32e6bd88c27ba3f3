"""One attempt, start to row: fresh workspace, agent, grader, usage, transcript. Runs in a worker.

A worker never writes the ledger: it returns the row (a dict of ledger fields) and the driver writes
it. Whatever the agent does is data in that row (a crash is a failed attempt, a hang a timed-out one);
only the harness's own failures (a workspace that could not be made, a sandbox that would not start)
become ``infra_error`` rows.
"""

from __future__ import annotations

import atexit
import functools
import json
import math
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trialbook.harness._process import TOKEN_VAR, Captured, Outcome, run_command
from trialbook.harness._sandbox import Limits, SandboxSpec, Tier, wrap
from trialbook.ledger import now
from trialbook.suite import Task

__all__ = [
    "USAGE_KEYS",
    "AttemptSpec",
    "RunContext",
    "base_env",
    "grade_workspace",
    "read_usage",
    "run_attempt",
]

USAGE_KEYS: Mapping[str, type] = {
    "tokens_in": int,
    "tokens_out": int,
    "cost": float,
    "helper_calls": int,
    "tool_calls": int,
    "cache_hit": bool,
}
"""What an agent may report, one JSON object per line of ``$TRIALBOOK_USAGE_FILE``; lines are summed."""


@dataclass(frozen=True)
class AttemptSpec:
    """Which attempt to run."""

    task: Task
    attempt_index: int
    seed: int
    start_id: int
    """The id of the start marker the driver wrote (unique per start, so a re-run has its own)."""


@dataclass(frozen=True)
class RunContext:
    """What every attempt of one run shares."""

    run_id: str
    agent: str
    tier: Tier
    temperature: float | None
    scratch: Path
    """Folder of the run's throwaway attempt folders."""
    transcripts: Path
    """Folder where each attempt's raw output is kept."""
    transcript_base: Path
    """Row ``transcript`` paths are relative to this folder (the ledger's)."""
    prompts: Path
    """Folder holding each task's prompt file, written once per run, read-only."""
    row_fields: Mapping[str, object]
    """Fields shared by every row of the run (system, dataset_id, versions, sandbox, k_budget)."""
    fixture_hashes: Mapping[str, str]
    hidden: tuple[Path, ...] = ()
    pass_env: Mapping[str, str] = field(default_factory=dict)
    grace_s: float = 2.0
    memory_mb: int = 8192


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fresh environment every sandboxed command starts from (nothing of the harness's own).

    PATH starts with the folder of the Python running trialbook, so ``python`` is that interpreter.
    """
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(extra or {})
    return env


def read_usage(path: Path) -> tuple[dict[str, Any], list[str]]:
    """Sum the usage lines an agent appended; returns (totals, problems). Missing = not reported."""
    totals: dict[str, Any] = {}
    problems: list[str] = []
    if not path.is_file():
        return totals, problems
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            problems.append(f"usage line {lineno}: not JSON")
            continue
        if not isinstance(obj, dict):
            problems.append(f"usage line {lineno}: not a JSON object")
            continue
        for key, value in obj.items():
            kind = USAGE_KEYS.get(key)
            if kind is None:
                problems.append(f"usage line {lineno}: unknown key {key!r}")
                continue
            if kind is bool:
                if not isinstance(value, bool):
                    problems.append(f"usage line {lineno}: {key} must be true or false")
                    continue
                totals[key] = bool(totals.get(key, False) or value)
                continue
            ok_type = (int,) if kind is int else (int, float)
            if (
                isinstance(value, bool)
                or not isinstance(value, ok_type)
                or not math.isfinite(value)
                or value < 0
            ):
                problems.append(f"usage line {lineno}: {key} must be a number >= 0, got {value!r}")
                continue
            totals[key] = totals.get(key, 0) + value
    if "cost" in totals:
        totals["cost"] = float(totals["cost"])
    return totals, problems


def _grader_score(stdout: str) -> tuple[float | None, str | None]:
    """Partial credit from the grader's last stdout line ``{"score": x}``, if it printed one."""
    lines = [x for x in stdout.splitlines() if x.strip()]
    if not lines or not lines[-1].lstrip().startswith("{"):
        return None, None
    try:
        obj = json.loads(lines[-1])
    except ValueError:
        return None, "grader's last line is not valid JSON"
    value = obj.get("score") if isinstance(obj, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        return None, f"grader's score must be a number in 0..1, got {value!r}"
    return float(value), None


def _describe_exit(who: str, outcome: Outcome) -> str | None:
    if outcome.exit_code is None or outcome.exit_code == 0:
        return None
    if outcome.exit_code < 0:
        return f"{who} was killed by signal {-outcome.exit_code}"
    if outcome.exit_code == 137:
        return f"{who} exited with 137 (killed, e.g. by a resource limit)"
    return f"{who} exited with {outcome.exit_code}"


def run_attempt(
    spec: AttemptSpec, ctx: RunContext, cancel: threading.Event
) -> dict[str, object] | None:
    """Run one attempt and return its ledger row; None when the run was interrupted during it."""
    task = spec.task
    started = now()
    notes: list[str] = []
    row: dict[str, object] = {
        **ctx.row_fields,
        "run_id": ctx.run_id,
        "task_id": task.id,
        "attempt_index": spec.attempt_index,
        "timeout_s": task.timeout_s,
        "seed": spec.seed,
        "temperature": ctx.temperature,
        "stratum": task.stratum,
        "weight": task.weight,
        "fixture_hash": ctx.fixture_hashes.get(task.id),
        "oracle_leak": False,
        "helper_calls": 0,
        "started_at": started,
    }
    out_dir = ctx.transcripts / task.id / f"{spec.attempt_index}.{spec.start_id}"
    attempt_dir: Path | None = None
    captured = Captured()
    try:
        attempt_dir = Path(
            tempfile.mkdtemp(prefix=f"{task.id}.{spec.attempt_index}.", dir=ctx.scratch)
        )
        workspace = attempt_dir / "workspace"
        io = attempt_dir / "io"
        # contents and modes; timestamps and extended attributes are no part of a fixture
        shutil.copytree(task.fixture, workspace, symlinks=False, copy_function=shutil.copy)
        io.mkdir()
        prompt_file = ctx.prompts / f"{task.id}.md"
        usage_file = io / "usage.jsonl"  # created by the agent if it reports anything
        token = f"{ctx.run_id}/{spec.start_id}"
        env = base_env(
            {
                "HOME": str(io),
                "TMPDIR": "/tmp" if ctx.tier == "bwrap" else str(io),
                "TRIALBOOK_PROMPT_FILE": str(prompt_file),
                "TRIALBOOK_TASK_ID": task.id,
                "TRIALBOOK_ATTEMPT": str(spec.attempt_index),
                "TRIALBOOK_SEED": str(spec.seed),
                "TRIALBOOK_TEMPERATURE": "" if ctx.temperature is None else repr(ctx.temperature),
                "TRIALBOOK_USAGE_FILE": str(usage_file),
                TOKEN_VAR: token,
            }
        )
        env.update(ctx.pass_env)
        limits = Limits(cpu_s=math.ceil(task.timeout_s) + 10, memory_mb=ctx.memory_mb)
        sandbox = SandboxSpec(
            workspace=workspace,
            writable=(io,),
            readonly=(prompt_file,),
            hidden=ctx.hidden,
            network=task.network,
        )
        agent = _sandboxed(
            "agent",
            ctx.agent,
            tier=ctx.tier,
            sandbox=sandbox,
            env=env,
            limits=limits,
            timeout_s=task.timeout_s,
            captured=captured,
            token=token,
            grace_s=ctx.grace_s,
            cancel=cancel,
        )
        if agent.cancelled:
            return None
        row["elapsed_s"] = round(agent.elapsed_s, 6)
        if agent.left_behind:
            notes.append(f"{agent.left_behind} process(es) the agent left behind were killed")
        usage, problems = read_usage(usage_file)
        notes += problems
        row.update(usage)
        if agent.timed_out:
            row.update(passed=False, timed_out=True, status="timed_out")
            notes.insert(0, f"stopped at the {task.timeout_s:g} s timeout")
        else:
            if note := _describe_exit("agent", agent):
                notes.append(note)
            passed, score, grader_notes = _grade(
                task, spec, ctx, attempt_dir, workspace, cancel, captured
            )
            if passed is None:
                return None
            notes += grader_notes
            row.update(passed=passed, timed_out=False, status="passed" if passed else "failed")
            row["score"] = score
    except OSError as exc:
        row.update(
            passed=False,
            timed_out=False,
            status="infra_error",
            elapsed_s=row.get("elapsed_s", 0.0),
        )
        notes.insert(0, f"harness error: {exc}")
    finally:
        if attempt_dir is not None:
            shutil.rmtree(attempt_dir, ignore_errors=True)
    try:
        if captured.save(out_dir):
            row["transcript"] = out_dir.relative_to(ctx.transcript_base).as_posix()
    except OSError as exc:
        notes.append(f"raw output not kept: {exc}")
    finally:
        captured.close()
    row["finished_at"] = now()
    row["error"] = "; ".join(notes) if notes else None
    return row


def _grade(
    task: Task,
    spec: AttemptSpec,
    ctx: RunContext,
    attempt_dir: Path,
    workspace: Path,
    cancel: threading.Event,
    captured: Captured,
) -> tuple[bool | None, float | None, list[str]]:
    return grade_workspace(
        task,
        workspace,
        attempt_dir,
        captured,
        tier=ctx.tier,
        token=f"{ctx.run_id}/{spec.start_id}/grader",
        attempt_index=spec.attempt_index,
        seed=spec.seed,
        hidden=ctx.hidden,
        grace_s=ctx.grace_s,
        memory_mb=ctx.memory_mb,
        cancel=cancel,
    )


def grade_workspace(
    task: Task,
    workspace: Path,
    attempt_dir: Path,
    captured: Captured,
    *,
    tier: Tier,
    token: str,
    attempt_index: int = 0,
    seed: int = 0,
    hidden: tuple[Path, ...] = (),
    grace_s: float = 2.0,
    memory_mb: int = 8192,
    cancel: threading.Event | None = None,
) -> tuple[bool | None, float | None, list[str]]:
    """Run the task's grader in ``workspace`` with a fresh copy of the oracle.

    Returns (passed, score, notes); passed is None when ``cancel`` stopped it. The grader gets its
    own timeout; a grader stopped at it counts as a fail (the workspace did not pass in time).
    """
    oracle = attempt_dir / "oracle"
    if task.oracle.is_dir() and any(task.oracle.iterdir()):
        # a fresh copy: nothing carries over from one attempt to the next
        shutil.copytree(task.oracle, oracle, symlinks=False, copy_function=shutil.copy)
    else:
        oracle = _empty_folder()  # no oracle: one shared, read-only, empty folder
    # Not the agent's HOME: files the agent planted there (a user site-packages, say) must not
    # reach the grader. In bwrap the attempt folder is not mounted, so HOME does not exist there.
    env = base_env(
        {
            "HOME": str(attempt_dir),
            "TMPDIR": "/tmp" if tier == "bwrap" else str(attempt_dir),
            "TRIALBOOK_ORACLE_DIR": str(oracle),
            "TRIALBOOK_TASK_ID": task.id,
            "TRIALBOOK_ATTEMPT": str(attempt_index),
            "TRIALBOOK_SEED": str(seed),
            TOKEN_VAR: token,
        }
    )
    sandbox = SandboxSpec(workspace=workspace, readonly=(oracle,), hidden=hidden)
    limits = Limits(cpu_s=math.ceil(task.grader_timeout_s) + 10, memory_mb=memory_mb)
    outcome = _sandboxed(
        "grader",
        task.grader,
        tier=tier,
        sandbox=sandbox,
        env=env,
        limits=limits,
        timeout_s=task.grader_timeout_s,
        captured=captured,
        token=token,
        grace_s=grace_s,
        cancel=cancel,
    )
    if outcome.cancelled:
        return None, None, []
    notes: list[str] = []
    if outcome.timed_out:
        notes.append(
            f"grader stopped at its {task.grader_timeout_s:g} s timeout (counted as a fail)"
        )
        return False, None, notes
    score, problem = _grader_score(captured.text("grader.stdout"))
    if problem:
        notes.append(problem)
    return outcome.exit_code == 0, score, notes


def _sandboxed(
    who: str,
    command: str,
    *,
    tier: Tier,
    sandbox: SandboxSpec,
    env: dict[str, str],
    limits: Limits,
    timeout_s: float,
    captured: Captured,
    token: str,
    grace_s: float,
    cancel: threading.Event | None,
) -> Outcome:
    """Run the agent's or the grader's command in the tier; OSError if the sandbox did not start."""
    info = _InfoPipe(tier)
    outcome = run_command(
        wrap(tier, command, sandbox, env, limits, info_fd=info.write_fd),
        pass_fds=info.pass_fds,
        cwd=sandbox.workspace,
        env=env,
        timeout_s=timeout_s,
        stdout=captured.fds[f"{who}.stdout"],
        stderr=captured.fds[f"{who}.stderr"],
        token=token,
        workspace=sandbox.workspace,
        grace_s=grace_s,
        cancel=cancel,
    )
    if not info.started() and not outcome.cancelled:
        raise OSError(f"the {who}'s sandbox did not start: {_last_line(captured, f'{who}.stderr')}")
    return outcome


def _last_line(captured: Captured, name: str) -> str:
    lines = captured.text(name).strip().splitlines()
    return lines[-1] if lines else "no output"


@functools.cache
def _empty_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="trialbook-empty-"))
    folder.chmod(0o555)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


class _InfoPipe:
    """bwrap's --info-fd: it writes the child's pid once the sandbox is set up (bwrap tier only)."""

    def __init__(self, tier: Tier) -> None:
        self.read_fd: int | None = None
        self.write_fd: int | None = None
        if tier == "bwrap":
            self.read_fd, self.write_fd = os.pipe()
            os.set_blocking(self.read_fd, False)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return () if self.write_fd is None else (self.write_fd,)

    def started(self) -> bool:
        """Whether the sandbox came up (always true for the process tier). Closes the pipe."""
        if self.read_fd is None:
            return True
        try:
            data = os.read(self.read_fd, 4096)
        except BlockingIOError:
            data = b""
        finally:
            os.close(self.read_fd)
            self.read_fd = None
        return b"child-pid" in data
