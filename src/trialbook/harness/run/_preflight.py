"""The run's pre-flight: what the bwrap tier never shows, each with why, and one start of the agent
and of each distinct grader before anything is written (docs/harness.md, "A project")."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from trialbook.harness.run._plan import hidden_paths
from trialbook.harness.sandbox import Tier, base_env, check_agent, check_grader
from trialbook.suite import Task

__all__ = ["hidden_reasons", "preflight"]


def hidden_reasons(suite_root: Path, ledger: Path, transcripts: Path) -> dict[Path, str]:
    """What the bwrap tier never shows, each with why (for the pre-flight's refusals)."""
    suite, *ledger_files = hidden_paths(suite_root, ledger, transcripts, transcripts)[:5]
    reasons = {
        suite: "is inside the suite folder, which the sandbox never shows (it holds the "
        "oracles): move it out of the suite folder",
    }
    for path in ledger_files:
        reasons[path] = "is the ledger, which the sandbox never shows"
    reasons[transcripts.resolve()] = (
        "is inside the ledger's transcripts folder, which the sandbox never shows"
    )
    return reasons


def preflight(
    agent: str, tasks: Sequence[Task], tier: Tier, reasons: dict[Path, str], env: dict[str, str]
) -> None:
    """Refuse, before anything is written, an agent or grader that could not start (see
    ``trialbook.harness.sandbox._programs``)."""
    with tempfile.TemporaryDirectory(prefix="trialbook-preflight-") as scratch:
        where = Path(scratch).resolve()
        fixtures = [t.fixture.resolve() for t in tasks]
        check_agent(agent, fixtures=fixtures, tier=tier, hidden=reasons, env=env, scratch=where)
        seen: set[str] = set()
        for task in tasks:
            if task.grader in seen:
                continue
            seen.add(task.grader)
            check_grader(
                task.grader,
                task_id=task.id,
                tier=tier,
                hidden=reasons,
                env=base_env(),
                scratch=where,
            )
