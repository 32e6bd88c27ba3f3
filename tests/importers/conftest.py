"""Small source files of each kind, written the way their producers write them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from trialbook.cli import main


def tau_bench(outcomes: dict[int, Sequence[float]]) -> list[dict[str, Any]]:
    """tau-bench's results list: {task_id: [reward per trial]}."""
    return [
        {"task_id": t, "trial": i, "reward": r, "info": {"source": "user"}, "traj": []}
        for t, rewards in outcomes.items()
        for i, r in enumerate(rewards)
    ]


def terminal_bench(outcomes: dict[str, Sequence[bool | None]], **extra: Any) -> dict[str, Any]:
    """A Terminal-Bench results.json: {task: [is_resolved per trial]}."""
    results = []
    for task, seq in outcomes.items():
        for i, resolved in enumerate(seq, 1):
            results.append(
                {
                    "trial_name": f"{task}.{i}-of-{len(seq)}",
                    "task_id": task,
                    "is_resolved": resolved,
                    "failure_mode": "unset" if resolved is not None else "parse_error",
                    "total_input_tokens": 100,
                    "total_output_tokens": 10,
                    **extra,
                }
            )
    return {"results": results, "accuracy": None}


def swe_report(resolved: list[str], unresolved: list[str], **lists: list[str]) -> dict[str, Any]:
    """A SWE-bench run report (schema 2)."""
    total = len(resolved) + len(unresolved) + sum(len(v) for v in lists.values())
    return {
        "total_instances": total,
        "resolved_ids": resolved,
        "unresolved_ids": unresolved,
        "error_ids": [],
        "empty_patch_ids": [],
        "schema_version": 2,
        **lists,
    }


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


def need_inspect(module: str = "inspect_ai") -> Any:
    """inspect-ai (the ``inspect`` extra): skipped where it is not installed, except in CI, which
    installs it and must run these tests."""
    import importlib
    import os

    import pytest

    if os.environ.get("CI"):
        return importlib.import_module(module)  # an ImportError fails the test, as it should
    return pytest.importorskip(module, reason="needs the inspect extra (make installs it)")


def tau2_results(sims: list[tuple[str, int, float | None, str]], trials: int = 2) -> dict[str, Any]:
    """tau2-bench's Results: (task_id, trial, reward or None, termination_reason) per simulation."""
    return {
        "timestamp": "2025-06-01T10:00:00",
        "info": {
            "git_commit": "abc123",
            "num_trials": trials,
            "max_steps": 100,
            "max_errors": 10,
            "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
            "agent_info": {"implementation": "llm_agent", "llm": "claude-x"},
            "environment_info": {"domain_name": "airline"},
            "seed": 300,
        },
        "tasks": [],
        "simulations": [
            {
                "id": f"sim-{i}",
                "task_id": task,
                "start_time": "2025-06-01T10:00:00",
                "end_time": "2025-06-01T10:01:00",
                "duration": 60.0 + i,
                "termination_reason": reason,
                "agent_cost": 0.01,
                "user_cost": 0.002,
                "reward_info": None if reward is None else {"reward": reward},
                "trial": trial,
                "seed": 300 + trial,
            }
            for i, (task, trial, reward, reason) in enumerate(sims)
        ],
    }


def run(*args: str) -> Any:
    """``trialbook ARGS...`` through click's runner (exceptions propagate: a traceback fails)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)
