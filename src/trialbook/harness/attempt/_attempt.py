"""The worker: one attempt, spec to result. Fresh workspace, agent, grader, usage, raw output.

``run_attempt`` needs nothing but its :class:`AttemptSpec` (and the suite's folders the spec names),
so it runs wherever an executor sends it. It never writes the ledger or a transcript: it returns the
row (a dict of ledger fields) and the raw output, and the driver writes both. Whatever the agent does
is data in that row (a crash is a failed attempt, a hang a timed-out one); only the harness's own
failures (a workspace that could not be made, a sandbox that would not start, a fixture or oracle
that no longer matches its digest) become ``infra_error`` rows.
"""

from __future__ import annotations

import math
import os
import shutil
import stat
import tempfile
from pathlib import Path

from trialbook.harness.attempt._feedback import FEEDBACK_VAR
from trialbook.harness.attempt._grade import _GRADER_MISSING, _Changed, _check_copy, grade_workspace
from trialbook.harness.attempt._spec import AttemptResult, AttemptSpec
from trialbook.harness.attempt._usage import USAGE_KEYS, read_usage
from trialbook.harness.sandbox import (
    NOT_STARTED,
    RELEASE_S,
    TOKEN_VAR,
    Captured,
    Free,
    Limits,
    Outcome,
    SandboxSpec,
    agent_filled_the_disk,
    base_env,
    bound_problem,
    cancelled,
    free_space,
    mount_bound,
    remove_tree,
    run_sandboxed,
    seed_workspace,
)
from trialbook.ledger import now

__all__ = [
    "USAGE_KEYS",
    "attempt_fields",
    "read_usage",
    "run_attempt",
]


def _describe_exit(who: str, outcome: Outcome) -> str | None:
    if outcome.exit_code is None or outcome.exit_code == 0:
        return None
    if outcome.exit_code < 0:
        return f"{who} was killed by signal {-outcome.exit_code}"
    if outcome.exit_code == 137:
        return f"{who} exited with 137 (killed, e.g. by a resource limit)"
    return f"{who} exited with {outcome.exit_code}"


def attempt_fields(spec: AttemptSpec) -> dict[str, object]:
    """The fields of the attempt's row known before it starts (``started_at`` is now)."""
    budget = spec.budget
    return {
        **spec.row_fields,
        "run_id": spec.run_id,
        "task_id": spec.task_id,
        "attempt_index": spec.attempt_index,
        "timeout_s": budget.timeout_s,
        "seed": budget.seed,
        "temperature": budget.temperature,
        "fixture_hash": spec.fixture_hash,
        "oracle_leak": False,
        "helper_calls": 0,
        "started_at": now(),
    }


def run_attempt(spec: AttemptSpec) -> AttemptResult:
    """Run one attempt; its row and raw output, or a cancelled result (no row) when the executor
    stopped it."""
    if cancelled():
        return AttemptResult(row=None)
    notes: list[str] = []
    row = attempt_fields(spec)
    attempt_dir: Path | None = None
    free_at_start = Free(0, 0)
    captured = Captured()
    try:
        try:
            attempt_dir = Path(
                tempfile.mkdtemp(prefix=f"{spec.task_id}.{spec.attempt_index}.", dir=spec.scratch)
            ).resolve()
            free_at_start = free_space(attempt_dir)
            passed = _attempt(spec, attempt_dir, captured, row, notes)
        except (OSError, _Changed) as exc:
            filled = (
                attempt_dir is not None
                and "elapsed_s" in row  # the agent has run
                and isinstance(exc, OSError)  # ENOSPC, or a copy's shutil.Error made of them
                and agent_filled_the_disk(attempt_dir, free_at_start)
            )
            timed_out = filled and row.get("timed_out") is True
            row.update(
                passed=False,
                timed_out=timed_out,
                status=("timed_out" if timed_out else "failed") if filled else "infra_error",
                elapsed_s=row.get("elapsed_s", 0.0),
                score=None,
            )
            if filled:
                notes.insert(0, f"the agent filled the disk (not graded): {exc}")
            else:
                notes.insert(0, f"harness error: {exc}")
            passed = False
        finally:
            if attempt_dir is not None and not remove_tree(attempt_dir):
                notes.append(f"the attempt folder could not be removed: {attempt_dir} is left")
        if passed is None:
            return AttemptResult(row=None)
        output, cut = captured.contents()
        notes += cut
    finally:
        captured.close()
    # never before the start (the ledger refuses that as a contradiction), even if the wall clock
    # stepped back during the attempt; one fixed ISO format, so the strings order as the times do
    row["finished_at"] = max(now(), str(row["started_at"]))
    row["error"] = "; ".join(notes) if notes else None
    return AttemptResult(row=row, output=output)


def _attempt(
    spec: AttemptSpec,
    attempt_dir: Path,
    captured: Captured,
    row: dict[str, object],
    notes: list[str],
) -> bool | None:
    """The agent then the grader, filling ``row``; whether it passed, None when cancelled.

    The agent's own part of the attempt folder (``agent/``: its workspace and io folder) is a
    tmpfs of ``scratch_mb`` MiB and ``scratch_inodes`` files where the harness can mount one: a
    hostile agent fills that, never the file system of the prompt, the oracle copy, the grader's
    home, the verdict channel, the other attempts and the ledger (docs/harness.md, "The attempt's
    scratch"). Elsewhere it is a plain folder and a full disk is told after the fact
    (``agent_filled_the_disk``)."""
    budget = spec.budget
    own = attempt_dir / "agent"
    own.mkdir()
    bounded = bound_problem() is None
    if bounded:
        mount_bound(own, budget.scratch_mb, budget.scratch_inodes)
    workspace = own / "workspace"
    io = own / "io"
    try:
        # contents and modes; timestamps and extended attributes are no part of a fixture
        shutil.copytree(spec.fixture, workspace, symlinks=False, copy_function=shutil.copy)
        io.mkdir()
    except OSError as exc:
        if bounded and _full(own):
            raise OSError(
                f"the task's fixture does not fit in the attempt's scratch (scratch_mb = "
                f"{budget.scratch_mb}, scratch_inodes = {budget.scratch_inodes}): {exc}"
            ) from None
        raise
    _check_copy(workspace, "fixture", spec.fixture_hash)
    binds: dict[Path, str] = {}
    if spec.container is not None and spec.container.workdir is not None:
        # the image's files there (fixture/ is empty), copied out once per image into the scratch
        seed_workspace(spec.container, workspace, spec.scratch)
        binds[workspace] = spec.container.workdir
    prompt_dir = attempt_dir / "prompt"
    prompt_dir.mkdir()
    prompt_file = prompt_dir / f"{spec.task_id}.md"
    prompt_file.write_text(spec.prompt, encoding="utf-8")
    prompt_file.chmod(0o444)
    usage_file = io / "usage.jsonl"  # created by the agent if it reports anything
    shown = [prompt_file]
    if spec.feedback is not None:  # a repair round: the previous round's outcome, read-only
        shown.append(prompt_dir / "feedback.json")
        shown[-1].write_text(spec.feedback, encoding="utf-8")
        shown[-1].chmod(0o444)
    env = base_env(
        {
            "HOME": str(io),
            "TMPDIR": "/tmp" if spec.tier != "process" else str(io),
            "TRIALBOOK_PROMPT_FILE": str(prompt_file),
            "TRIALBOOK_TASK_ID": spec.task_id,
            "TRIALBOOK_ATTEMPT": str(spec.attempt_index),
            "TRIALBOOK_SEED": str(budget.seed),
            "TRIALBOOK_TEMPERATURE": "" if budget.temperature is None else repr(budget.temperature),
            "TRIALBOOK_USAGE_FILE": str(usage_file),
            TOKEN_VAR: spec.token,
            **({FEEDBACK_VAR: str(shown[-1])} if spec.feedback is not None else {}),
        }
    )
    env.update(spec.pass_env)
    limits = Limits(cpu_s=math.ceil(budget.timeout_s) + 10, memory_mb=spec.memory_mb)
    sandbox = SandboxSpec(
        workspace=workspace,
        writable=(io,),
        readonly=tuple(shown),
        hidden=spec.hidden,
        network=budget.network,
        container=spec.container,
        binds=binds,
        gateway=spec.gateway,
        tmp_mb=budget.scratch_mb,
    )
    agent = run_sandboxed(
        "agent",
        spec.agent,
        tier=spec.tier,
        sandbox=sandbox,
        env=env,
        limits=limits,
        timeout_s=budget.timeout_s,
        captured=captured,
        token=spec.token,
        grace_s=spec.grace_s,
    )
    if agent.cancelled:
        return None
    row["elapsed_s"] = round(agent.elapsed_s, 6)
    if agent.left_behind:
        notes.append(f"{agent.left_behind} process(es) the agent left behind were killed")
    if agent.unreleased:
        notes.append(
            f"{agent.unreleased} killed process(es) of the agent were not yet reaped after "
            f"{RELEASE_S:g} s: they count against the user's process limit"
        )
    # From here on every path under attempt_dir is the agent's work: what it did to them is its
    # data (a problem in the row), never the harness's error.
    if not _is_dir(attempt_dir):  # the process tier: renamed, a symlink put in its place
        notes.append("the agent moved or replaced its attempt folder: not graded")
        row.update(passed=False, timed_out=agent.timed_out, score=None)
        row["status"] = "timed_out" if agent.timed_out else "failed"
        return False
    _reclaim(attempt_dir, (attempt_dir, own))
    if _is_dir(own):
        _reclaim(own, (own, workspace, io))
    if bounded and _is_dir(own) and _full(own):
        notes.append(
            f"the agent filled its scratch ({budget.scratch_mb} MiB, {budget.scratch_inodes} "
            "files): graded on what it left"
        )
    if _is_dir(io):
        usage, problems = read_usage(usage_file)
    else:
        usage, problems = {}, ["the agent removed or replaced the usage file's folder"]
    notes += problems
    row.update(usage)
    if agent.timed_out:
        row.update(passed=False, timed_out=True, status="timed_out")
        notes.insert(0, f"stopped at the {budget.timeout_s:g} s timeout")
        if not budget.grade_after_timeout:
            return False
    if not agent.timed_out and (why := agent.not_started):
        # the harness's own check found the program missing before the agent's code ran: the
        # set-up's fault; a "not found" the agent printed itself is its own failure
        notes.insert(0, f"{NOT_STARTED} the agent's command could not be started ({why})")
        row.update(passed=False, timed_out=False, status="infra_error", score=None)
        return False
    if not agent.timed_out and (note := _describe_exit("agent", agent)):
        notes.append(note)
    if not _is_dir(workspace):
        notes.append("the agent removed or replaced its workspace folder: not graded")
        row.update(passed=False, timed_out=agent.timed_out, score=None)
        row["status"] = "timed_out" if agent.timed_out else "failed"
        return False
    verdict = grade_workspace(
        workspace,
        attempt_dir,
        captured,
        task_id=spec.task_id,
        grader=spec.grader,
        oracle=spec.oracle,
        oracle_hash=spec.oracle_hash,
        grader_timeout_s=budget.grader_timeout_s,
        tier=spec.tier,
        token=f"{spec.token}/grader",
        attempt_index=spec.attempt_index,
        seed=budget.seed,
        hidden=spec.hidden,
        grace_s=spec.grace_s,
        memory_mb=spec.memory_mb,
        outcomes=spec.outcomes,
        container=spec.container,
    )
    if verdict is None:
        return None
    notes += verdict.notes
    if verdict.notes and verdict.notes[0].startswith(_GRADER_MISSING):
        row.update(passed=False, timed_out=False, status="infra_error", score=None)
        return False
    passed = verdict.passed
    row.update(verdict.fields())  # score, checks and the outcome kinds (attempt/_verdict.py)
    if agent.timed_out:  # graded after the timeout (the suite opted in): a pass after timeout
        row.update(passed=passed, timed_out=True, status="passed" if passed else "timed_out")
        return passed
    row.update(passed=passed, timed_out=False, status="passed" if passed else "failed")
    return passed


def _is_dir(path: Path) -> bool:
    """A real folder, not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _reclaim(top: Path, folders: tuple[Path, ...]) -> None:
    """Give the harness back the folders the agent may have locked (``chmod 000``), once its
    processes are gone; never through a symlink, never outside ``top``."""
    for folder in folders:
        if folder != top and folder.parent != top:
            continue
        try:
            info = os.lstat(folder)
        except OSError:
            continue  # gone: what uses it next says so
        if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o700 == 0o700:
            continue
        # A surviving process may swap the folder for a symlink after the lstat: change the mode
        # without following one (fchmodat with AT_SYMLINK_NOFOLLOW refuses a link). Not through a
        # descriptor: a folder of mode 000 cannot be opened by its owner unless that is root.
        try:
            os.chmod(folder, stat.S_IMODE(info.st_mode) | 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            continue  # a symlink now, or not ours: what uses it next says so


def _full(folder: Path) -> bool:
    """Whether the file system at ``folder`` has (almost) no byte or no inode left: less than a
    hundredth of either, as a writer that stops at the first ENOSPC leaves it."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return False
    return info.f_bavail * 100 < info.f_blocks or info.f_favail * 100 < info.f_files
