"""A run's record: its provenance, pinned before the first attempt, and the checks a resume makes
against it (the same agent, sandbox and suite, or a refusal that says which differs)."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from trialbook.errors import ArgumentError, SuiteError
from trialbook.ledger import RunRecord

__all__ = ["Resumed", "agent_digest", "check_resume", "new_record", "resumed"]


def agent_digest(agent: str, words: Sequence[str], search_path: str) -> str | None:
    """``sha256:HEX PATH`` of the agent's program file: the first absolute path among its words
    that is a file (``sh /p/agent.sh`` digests the script), else its program found on the PATH."""
    candidates = [w for w in words if w.startswith("/")]
    if words and "/" not in words[0] and (found := shutil.which(words[0], path=search_path)):
        candidates.append(found)
    for candidate in candidates:
        path = Path(candidate)
        if path.is_file():
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                return None
            return f"sha256:{digest} {candidate}"
    return None


def new_record(
    *,
    run_id: str | None,
    system: str | None,
    fields: Mapping[str, object],
) -> RunRecord:
    """A new run's record. The default id, ``SYSTEM-YYYYMMDDTHHMMSSZ-XXXXXX``, ends in 24 random
    bits: two runs of one system started in the same second never share it (and a clash would be
    refused by the store, never merged)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return RunRecord(
        run_id=run_id or f"{system or 'run'}-{stamp}-{os.urandom(3).hex()}",
        system=system,
        python_version=platform.python_version(),
        host=socket.gethostname(),
        origin="trialbook run",
        **fields,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class Resumed:
    """What a resume takes from the run's record where the caller gave nothing."""

    suite: Path
    agent: str
    sandbox: str
    pass_env: tuple[str, ...]


def resumed(
    record: RunRecord,
    *,
    suite: Path | None,
    agent: str | None,
    sandbox: str | None,
    pass_env: Sequence[str],
) -> Resumed:
    """The suite, agent, sandbox and pass-env names of a resume: the record's, checked against any
    the caller gave (an ArgumentError names the one that differs)."""
    run = record.run_id
    if agent is not None and record.agent is not None and agent != record.agent:
        raise ArgumentError(
            f"run {run!r} was made with the agent {record.agent!r}, not {agent!r}: resume it with "
            "its own agent (leave --agent out), or start a new run",
            argument="agent",
        )
    if agent is None and record.agent is None:
        raise ArgumentError(
            f"run {run!r} does not record its agent (an older ledger): give it with --agent",
            argument="agent",
        )
    if sandbox not in (None, "auto") and record.sandbox not in (None, sandbox):
        raise ArgumentError(
            f"run {run!r} used the {record.sandbox} sandbox, not {sandbox}: resume it with its "
            "own sandbox (leave --sandbox out), or start a new run",
            argument="sandbox",
        )
    if suite is None and record.suite_path is None:
        raise ArgumentError(f"run {run!r} does not record its suite: give it", argument="suite")
    names = tuple(record.pass_env)
    if pass_env and record.pass_env and tuple(sorted(pass_env)) != tuple(sorted(names)):
        raise ArgumentError(
            f"run {run!r} passed {', '.join(names) or 'no variable'} to its agent, not "
            f"{', '.join(pass_env)}: leave --pass-env out to pass the run's own",
            argument="pass_env",
        )
    return Resumed(
        suite=suite if suite is not None else Path(str(record.suite_path)),
        agent=agent if agent is not None else str(record.agent),
        sandbox=sandbox if sandbox not in (None, "auto") else (record.sandbox or "auto"),
        pass_env=names or tuple(pass_env),
    )


def check_resume(record: RunRecord, *, dataset_id: str, tier: str, digest: str | None) -> None:
    """Refuse to resume a run on another suite, in another tier or with a changed agent program."""
    run = record.run_id
    if record.dataset_id != dataset_id:
        raise SuiteError(
            f"run {run!r}, to resume, was made on dataset {record.dataset_id}, "
            f"the suite is now {dataset_id}: start a new run"
        )
    if record.sandbox is not None and record.sandbox != tier:
        raise ArgumentError(
            f"run {run!r} used the {record.sandbox} sandbox, this would use "
            f"{tier}: resume it with the {record.sandbox} sandbox",
            argument="sandbox",
        )
    if record.agent_digest is not None and digest != record.agent_digest:
        raise ArgumentError(
            f"run {run!r}: the agent's program file changed since the run started "
            f"({record.agent_digest} then, {digest or 'no file'} now): start a new run",
            argument="agent",
        )
