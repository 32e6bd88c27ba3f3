"""`trialbook budget`'s replay of a 10,000-task x 5-attempt ledger vs a plain per-task replay.

Both sides start from the same validated in-memory ledger (reading it is not timed). Ours is
``budget_replay`` (score's row policy, then the vectorised ``stats.budget_curve`` for b = 1..k).
The baseline is the obvious Python replay: group the attempts by task, sort each task's attempts by
attempt_index, and walk them once per budget, summing the fixed and the stop-at-first-pass cost.
Both must agree on every row (checked). Alternating, median of --repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _ledgers import write_ledger

from trialbook import read_ledger
from trialbook.analysis import budget_replay
from trialbook.ledger import Ledger


def ours(ledger: Ledger) -> tuple[float, list[tuple[float, float | None, float | None]]]:
    t = time.perf_counter()
    (run,) = budget_replay(ledger).runs
    elapsed = time.perf_counter() - t
    return elapsed, [(r.coverage, r.cost, r.cost_stop_at_first_success) for r in run.rows]


def baseline(ledger: Ledger) -> tuple[float, list[tuple[float, float | None, float | None]]]:
    t = time.perf_counter()
    tasks: dict[str, list[tuple[int, bool, float]]] = defaultdict(list)
    for task, index, ok, cost in zip(
        ledger.column("task_id").tolist(),
        ledger.column("attempt_index").tolist(),
        ledger.column("passed").tolist(),
        ledger.column("cost").tolist(),
        strict=True,
    ):
        tasks[task].append((index, ok, cost))
    for attempts in tasks.values():
        attempts.sort()
    k = min(len(a) for a in tasks.values())
    rows = []
    for b in range(1, k + 1):
        covered, fixed, stop = 0, 0.0, 0.0
        for attempts in tasks.values():
            first = next((i for i, (_, ok, _) in enumerate(attempts[:b]) if ok), None)
            covered += first is not None
            fixed += sum(c for _, _, c in attempts[:b])
            stop += sum(c for _, _, c in attempts[: (first + 1 if first is not None else b)])
        rows.append((covered / len(tasks), fixed, stop))
    return time.perf_counter() - t, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = read_ledger(
            write_ledger(Path(tmp) / "l.jsonl", tasks=args.tasks, attempts=args.attempts)
        )
    _, mine = ours(ledger)  # warm imports and caches on both sides
    _, theirs = baseline(ledger)
    for (c1, f1, s1), (c2, f2, s2) in zip(mine, theirs, strict=True):
        assert c1 == c2, (c1, c2)
        assert f1 is not None
        assert s1 is not None
        assert abs(f1 - f2) < 1e-6 * max(1.0, f2)
        assert abs(s1 - s2) < 1e-6 * max(1.0, s2)
    a, b = [], []
    for _ in range(args.repeats):
        a.append(ours(ledger)[0])
        b.append(baseline(ledger)[0])
    print(
        json.dumps(
            {
                "benchmark": "budget_replay_vs_python_replay",
                "rows": args.tasks * args.attempts,
                "ours_s_median": round(statistics.median(a), 4),
                "python_s_median": round(statistics.median(b), 4),
                "ratio": round(statistics.median(a) / statistics.median(b), 3),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
