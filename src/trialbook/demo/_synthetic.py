"""A realistic, seeded, *simulated* ledger: mixed difficulty, three strata, costs, timeouts, one infra error.

Nothing here calls a model. Task difficulty is drawn per stratum from Beta distributions so that, as on
real agent benchmarks, a few tasks are nearly always solved, a long middle is flaky, and some are never
solved; that makes between-task variance dominate, which the scorecard's variance split should show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["synthetic_rows", "write_synthetic_ledger"]

# stratum -> (Beta a, Beta b) of per-task success probability
_STRATA = {"repair": (1.2, 1.0), "greenfield": (0.8, 1.4), "regression": (2.0, 0.9)}
_TIMEOUT_S = 600.0
_PRICE_IN, _PRICE_OUT = 2.5e-6, 1.0e-5  # simulated $ per token


def synthetic_rows(
    *,
    tasks: int = 300,
    attempts: int = 5,
    seed: int = 2026,
    system: str = "simulated-agent",
    lift: float = 0.0,
) -> list[dict[str, Any]]:
    """Ledger rows for ``tasks`` x ``attempts`` simulated attempts (deterministic for a seed).

    Task difficulty depends on ``seed`` only, so two systems simulated with the same seed face the
    same tasks; ``lift`` raises every task's success chance p to p + lift * (1 - p), and the attempt
    outcomes are drawn from a stream of the system's own.
    """
    task_rng = np.random.default_rng(seed)
    rng = np.random.default_rng([seed, sum(system.encode())])
    names = list(_STRATA)
    rows: list[dict[str, Any]] = []
    infra_done = False
    for t in range(tasks):
        stratum = names[t % len(names)]
        a, b = _STRATA[stratum]
        p = float(task_rng.beta(a, b))
        p += lift * (1 - p)
        hang = float(task_rng.uniform(0.0, 0.08))  # chance an attempt runs into the timeout
        size = float(task_rng.lognormal(9.0, 0.6))  # prompt tokens of the task
        for i in range(attempts):
            timed_out = bool(rng.random() < hang)
            passed = (not timed_out) and bool(rng.random() < p)
            status = "timed_out" if timed_out else ("passed" if passed else "failed")
            if not infra_done and t == tasks // 2 and i == attempts - 1:
                passed, timed_out, status, infra_done = False, False, "infra_error", True
            tokens_in = int(size * rng.uniform(0.8, 3.0))
            tokens_out = int(tokens_in * rng.uniform(0.05, 0.2))
            elapsed = _TIMEOUT_S if timed_out else float(rng.gamma(2.0, 40.0))
            row: dict[str, Any] = {
                "run_id": f"{system}-demo",
                "system": system,
                "dataset_id": "simulated-suite-v1",
                "task_id": f"{stratum}-{t:03d}",
                "stratum": stratum,
                "attempt_index": i,
                "k_budget": attempts,
                "timeout_s": _TIMEOUT_S,
                "elapsed_s": round(min(elapsed, _TIMEOUT_S), 3),
                "passed": passed,
                "timed_out": timed_out,
                "status": status,
                "helper_calls": 0,
                "oracle_leak": False,
                "seed": 1000 + i,
                "temperature": 0.7,
                "cache_hit": bool(rng.random() < 0.15),
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "tool_calls": int(rng.poisson(12)),
                "cost": round(tokens_in * _PRICE_IN + tokens_out * _PRICE_OUT, 6),
                "model_version": "simulated-model-2026-11",
                "grader_version": "simulated-grader-1",
                "harness_version": "trialbook-synthetic",
            }
            if status == "infra_error":
                row["error"] = "simulated: workspace could not be created"
            rows.append(row)
    return rows


def write_synthetic_ledger(path: Path, **kwargs: Any) -> int:
    """Write the simulated ledger as JSONL; returns the number of rows."""
    rows = synthetic_rows(**kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")
    tmp.replace(path)
    return len(rows)
