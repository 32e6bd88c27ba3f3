"""``check_agents``: the pre-flight of ``run_suite`` alone, for callers that start several runs.

``trialbook race`` records a race before its two runs start; it checks both agents (and the
graders) first, so that a missing or hidden program is refused with nothing written, as
``trialbook run`` refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from trialbook.errors import ArgumentError
from trialbook.harness.run._preflight import hidden_reasons, preflight
from trialbook.harness.run._resolve import frozen_suite
from trialbook.harness.run._select import select_tasks
from trialbook.harness.sandbox import base_env, resolve_tier

__all__ = ["check_agents"]


def check_agents(
    suite_dir: Path,
    agents: Sequence[str],
    *,
    ledger: Path,
    sandbox: str | None = None,
    pass_env: Mapping[str, str] | None = None,
) -> None:
    """Refuse (``ArgumentError``, ``SuiteError``) what ``run_suite`` would refuse before its first
    attempt: a stale suite lock, no task to run, an agent or grader program that is missing, not
    executable or hidden by the sandbox. Writes nothing."""
    suite, lock = frozen_suite(suite_dir)
    tasks = list(select_tasks(suite, lock).tasks)
    if not tasks:
        raise ArgumentError("no task to run: every selected task is quarantined", argument="suite")
    tier, _ = resolve_tier(sandbox or "auto")
    transcripts = ledger.parent / f"{ledger.stem}.transcripts"
    reasons = hidden_reasons(suite.root, ledger, transcripts) if tier == "bwrap" else {}
    env = base_env(pass_env or {})
    for agent in agents:
        preflight(agent, tasks, tier, reasons, env)
