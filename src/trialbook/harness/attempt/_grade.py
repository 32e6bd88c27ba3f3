"""The grader's step of an attempt: a fresh oracle copy, the grader in the tier, its verdict.

The grader runs in the workspace the agent left, with a copy of the oracle made now under a name the
agent could not know, a HOME of its own and the verdict channel (_channel.py); in the
container tier in a fresh container, where a Harbor-style task's verdict is the reward file its
verifier writes (_reward.py).
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import math
import shutil
import tempfile
from pathlib import Path

from trialbook.errors import SuiteError
from trialbook.harness.attempt._channel import VERDICT_VAR, VerdictChannel
from trialbook.harness.attempt._reward import REWARD_DIR, read_reward
from trialbook.harness.attempt._verdict import Verdict, read_verdict
from trialbook.harness.sandbox import (
    TOKEN_VAR,
    Captured,
    ContainerTarget,
    Limits,
    SandboxSpec,
    Tier,
    base_env,
    run_sandboxed,
)
from trialbook.suite import tree_hash

__all__ = ["grade_workspace"]


class _Changed(Exception):
    """A fixture or oracle copy that does not match the digest the run was planned with."""


def _check_copy(folder: Path, kind: str, expected: str) -> None:
    try:
        got = tree_hash(folder, "fixture" if kind == "fixture" else "oracle")
    except SuiteError as exc:
        raise _Changed(f"the {kind} copy cannot be hashed: {exc}") from None
    if got != expected:
        raise _Changed(
            f"the task's {kind} does not match the digest the run was planned with "
            f"({got} != {expected}): the suite changed during the run"
        )


def grade_workspace(
    workspace: Path,
    attempt_dir: Path,
    captured: Captured,
    *,
    task_id: str,
    grader: str,
    oracle: Path,
    grader_timeout_s: float,
    tier: Tier,
    token: str,
    oracle_hash: str | None = None,
    attempt_index: int = 0,
    seed: int = 0,
    hidden: tuple[Path, ...] = (),
    grace_s: float = 2.0,
    memory_mb: int = 8192,
    outcomes: tuple[str, ...] = (),
    container: ContainerTarget | None = None,
) -> Verdict | None:
    """Run ``grader`` in ``workspace`` with a fresh copy of ``oracle`` (checked against
    ``oracle_hash`` when given); ``outcomes`` are the outcome kinds the task declares.

    Returns the verdict (_verdict.py), None when the executor cancelled it. The grader gets
    its own timeout; a grader stopped at it counts as a fail (the workspace did not pass in time).
    """
    if oracle.is_dir() and any(oracle.iterdir()):
        # a fresh copy under a name the agent could not know (it may have planted files in the
        # attempt folder): nothing carries over from one attempt to the next
        copy = Path(tempfile.mkdtemp(prefix="oracle.", dir=attempt_dir)) / "oracle"
        shutil.copytree(oracle, copy, symlinks=False, copy_function=shutil.copy)
    else:
        copy = _empty_folder()  # no oracle: one shared, read-only, empty folder
    if oracle_hash is not None:
        _check_copy(copy, "oracle", oracle_hash)
    # A HOME of its own, made now with a name nobody could guess: files the agent planted in its
    # HOME or in the attempt folder (a user site-packages with usercustomize.py, say) must not reach
    # the grader. In bwrap the attempt folder is not mounted, so HOME does not exist there.
    home = tempfile.mkdtemp(prefix="grader-home.", dir=attempt_dir)
    channel = VerdictChannel(attempt_dir)  # _channel.py: no process it runs can hold it
    try:
        return _grade(workspace, attempt_dir, captured, channel, copy, home, task_id=task_id,
                      grader=grader, grader_timeout_s=grader_timeout_s, tier=tier, token=token,
                      attempt_index=attempt_index, seed=seed, hidden=hidden, grace_s=grace_s,
                      memory_mb=memory_mb, outcomes=outcomes, container=container)  # fmt: skip
    finally:
        channel.close()


def _grade(
    workspace: Path,
    attempt_dir: Path,
    captured: Captured,
    channel: VerdictChannel,
    copy: Path,
    home: str,
    *,
    task_id: str,
    grader: str,
    grader_timeout_s: float,
    tier: Tier,
    token: str,
    attempt_index: int,
    seed: int,
    hidden: tuple[Path, ...],
    grace_s: float,
    memory_mb: int,
    outcomes: tuple[str, ...],
    container: ContainerTarget | None,
) -> Verdict | None:
    env = base_env(
        {
            "HOME": home,
            "TMPDIR": "/tmp" if tier != "process" else str(attempt_dir),
            "TRIALBOOK_ORACLE_DIR": str(copy),
            "TRIALBOOK_TASK_ID": task_id,
            "TRIALBOOK_ATTEMPT": str(attempt_index),
            "TRIALBOOK_SEED": str(seed),
            VERDICT_VAR: str(channel.path),
            TOKEN_VAR: token,
        }
    )
    binds: dict[Path, str] = {}
    logs: Path | None = None
    if container is not None:
        if container.workdir is not None:
            binds[workspace] = container.workdir
        if container.oracle_dir is not None:
            binds[copy] = container.oracle_dir
        if container.reward:  # the verifier's reward folder, read by the harness afterwards
            logs = Path(tempfile.mkdtemp(prefix="verifier.", dir=attempt_dir))
            binds[logs] = REWARD_DIR
    sandbox = SandboxSpec(
        workspace=workspace,
        writable=() if logs is None else (logs,),
        readonly=(copy, channel.folder),
        hidden=hidden,
        container=container,
        binds=binds,
    )
    limits = Limits(cpu_s=math.ceil(grader_timeout_s) + 10, memory_mb=memory_mb)
    outcome = run_sandboxed(
        "grader",
        grader,
        tier=tier,
        sandbox=sandbox,
        env=env,
        limits=limits,
        timeout_s=grader_timeout_s,
        captured=captured,
        token=token,
        grace_s=grace_s,
    )
    if outcome.cancelled:
        return None
    if outcome.timed_out:
        stopped = f"grader stopped at its {grader_timeout_s:g} s timeout (counted as a fail)"
        return Verdict(passed=False, notes=(stopped,))
    if why := outcome.not_started:
        return Verdict(passed=False, notes=(f"{_GRADER_MISSING} could not be started ({why})",))
    said, others = channel.take()
    if logs is not None:
        verdict = read_reward(logs)
    else:
        stdout = captured.text("grader.stdout")
        verdict = read_verdict(stdout, outcome.exit_code == 0, outcomes, said)
    if others:
        ignored = f"{others} later connection(s) to the verdict channel ignored"
        return dataclasses.replace(verdict, notes=(*verdict.notes, ignored))
    return verdict


_GRADER_MISSING = "harness error: the grader's command"
"""How the note of a grader that could not be started begins (the attempt is an infra error)."""


@functools.cache
def _empty_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="trialbook-empty-"))
    folder.chmod(0o555)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
