"""Full default `score` of a 10,000-task x 5-attempt ledger vs one scipy.stats.bootstrap interval.

Both sides parse the same JSONL with the same reader (parsing included on both). Ours then computes
everything `trialbook score` prints (pass@1..5, pass^1..5, rates, strata, variance, companions; 10,000
resamples). The baseline computes per-task pass@1 and one percentile interval with
scipy.stats.bootstrap (vectorised, 10,000 resamples, batch=1000 to keep its memory bounded).
Alternating, median of --repeats. Target (issue 2): ratio < 0.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))
from _ledgers import write_ledger

from trialbook import read_ledger, score_ledger
from trialbook.report import score_to_dict


def ours(path: Path) -> float:
    t = time.perf_counter()
    score_to_dict(score_ledger(read_ledger(path)))
    return time.perf_counter() - t


def baseline(path: Path) -> float:
    t = time.perf_counter()
    ledger = read_ledger(path)
    _, task = np.unique(ledger.codes["task_id"], return_inverse=True)
    rate = np.bincount(task, weights=ledger.values["passed"]) / np.bincount(task)
    stats.bootstrap(
        (rate,),
        np.mean,
        n_resamples=10_000,
        method="percentile",
        vectorized=True,
        batch=1000,
        rng=0,
    )
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_ledger(Path(tmp) / "l.jsonl", tasks=args.tasks, attempts=args.attempts)
        ours(path)  # warm imports and caches on both sides
        baseline(path)
        a, b = [], []
        for _ in range(args.repeats):
            a.append(ours(path))
            b.append(baseline(path))
    print(
        json.dumps(
            {
                "benchmark": "full_score_vs_scipy_bootstrap_single_interval",
                "rows": args.tasks * args.attempts,
                "ours_s_median": round(statistics.median(a), 4),
                "scipy_s_median": round(statistics.median(b), 4),
                "ratio": round(statistics.median(a) / statistics.median(b), 3),
                "target_ratio_max": 0.5,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
