"""``board`` against ``score`` of the same runs, in one process (issue: the board of many systems).

50 systems x 500 tasks x 3 attempts in one in-memory ledger (generated, seeded; each system a
pass rate between 20% and 80%, a cost per attempt). Timed, alternating, REPEATS times each:
``score_ledger`` of the 50 runs (score's defaults) and ``board_runs`` of the same ledger (its
defaults: pass@1, cost per task, 10,000 resamples). The board scores every run too (its metric is
score's), then tests the 1,225 pairs with compare's paired test, all at once
(trialbook.stats.paired_p_values: one set of sign patterns for every pair, more drawn only for
the pairs near the level), and draws the cost bootstrap; the ratio says what that costs. Goal:
ratio <= 5. Medians printed as JSON.

    python benchmarks/bench_board.py [--systems 50] [--tasks 500] [--attempts 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from trialbook.analysis import BoardOptions, board_runs, score_ledger
from trialbook.ledger import Ledger, ledger_from_rows


def make_ledger(systems: int, tasks: int, attempts: int, seed: int = 0) -> Ledger:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(systems):
        rate, price = 0.2 + 0.6 * s / max(1, systems - 1), 0.05 + 0.02 * s
        passed = rng.random((tasks, attempts)) < rate
        cost = rng.uniform(0.5, 1.5, (tasks, attempts)) * price
        for t in range(tasks):
            for a in range(attempts):
                ok = bool(passed[t, a])
                rows.append(
                    {
                        "run_id": f"system-{s:02d}",
                        "system": f"system-{s:02d}",
                        "dataset_id": "bench-suite",
                        "task_id": f"task-{t:04d}",
                        "attempt_index": a,
                        "k_budget": attempts,
                        "timeout_s": 60.0,
                        "elapsed_s": 1.0,
                        "passed": ok,
                        "timed_out": False,
                        "helper_calls": 0,
                        "oracle_leak": False,
                        "status": "passed" if ok else "failed",
                        "cost": float(cost[t, a]),
                    }
                )
    return ledger_from_rows(rows, source="bench-board")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ledger = make_ledger(args.systems, args.tasks, args.attempts)
    times: dict[str, list[float]] = {"score": [], "board": []}
    for _ in range(args.repeats):
        start = time.perf_counter()
        scored = score_ledger(ledger)
        times["score"].append(time.perf_counter() - start)
        assert len(scored.runs) == args.systems
        start = time.perf_counter()
        board = board_runs(["bench"], BoardOptions(), read=lambda _: ledger)
        times["board"].append(time.perf_counter() - start)
        assert len(board.pairs) == args.systems * (args.systems - 1) // 2
    score_s, board_s = statistics.median(times["score"]), statistics.median(times["board"])
    print(
        json.dumps(
            {
                "benchmark": "board",
                "systems": args.systems,
                "tasks": args.tasks,
                "attempts": args.attempts,
                "pairs": args.systems * (args.systems - 1) // 2,
                "repeats": args.repeats,
                "score_s": round(score_s, 3),
                "board_s": round(board_s, 3),
                "ratio": round(board_s / score_s, 2),
                "goal_ratio": 5,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
