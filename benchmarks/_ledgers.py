"""Synthetic ledgers for the benchmarks (written fresh into a temp dir; never committed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_ledger(
    path: Path, *, tasks: int, attempts: int, seed: int = 0, run_id: str = "bench", mode: str = "w"
) -> Path:
    """tasks x attempts rows with the nine required fields plus run, status, cost and tokens
    (``mode="a"`` appends another run to the file)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1.0, 1.0, tasks)
    passed = rng.random((tasks, attempts)) < p[:, None]
    timed = (~passed) & (rng.random((tasks, attempts)) < 0.02)
    elapsed = rng.gamma(2.0, 30.0, (tasks, attempts)).round(3)
    with path.open(mode) as fh:
        for t in range(tasks):
            for a in range(attempts):
                ok, to = bool(passed[t, a]), bool(timed[t, a])
                status = "passed" if ok else ("timed_out" if to else "failed")
                fh.write(
                    f'{{"run_id":"{run_id}","system":"bench-agent","task_id":"task-{t:05d}",'
                    f'"attempt_index":{a},"k_budget":{attempts},"timeout_s":600.0,'
                    f'"elapsed_s":{600.0 if to else elapsed[t, a]},"passed":{str(ok).lower()},'
                    f'"timed_out":{str(to).lower()},"helper_calls":0,"oracle_leak":false,'
                    f'"status":"{status}","cost":0.0125,"tokens_in":1200,"tokens_out":240}}\n'
                )
    return path
