"""What counting re-runs costs (issue 18): ``score`` of a ledger where 1% of the attempts were lost
and re-run (their infra_error rows kept, superseded by a ``retry`` 1 row) beside ``score`` of the
same attempts without any re-run, in the same run, on each read path:

1. JSONL (read whole, ``Ledger.superseded`` in numpy);
2. ``.db`` from the kept columns (``trialbook import``: the store's own blobs);
3. ``.db`` tallied by SQLite (rows inserted with plain sqlite3: the ``GROUP BY`` with the rows that
   count chosen by ``NOT EXISTS`` a higher retry).

The baseline of each pair holds the rows that count only (one per attempt), so the ratio is the
price of the superseded rows and of leaving them out. Prints JSON: medians of REPEATS, the two
sides alternating, in-process, wall and CPU seconds (CPU: steadier on a shared machine).

    python benchmarks/bench_reruns.py [--tasks 2000] [--attempts 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from trialbook.analysis import ScoreOptions, score_file
from trialbook.ledger import LedgerStore, RunRecord, import_files, read_ledger
from trialbook.ledger.store._writer import COLUMNS


def _rows(tasks: int, attempts: int, share: float, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for t in range(tasks):
        for a in range(attempts):
            passed = rng.random() < 0.4
            row: dict[str, Any] = {
                "run_id": "r", "task_id": f"task-{t:05d}", "attempt_index": a,
                "k_budget": attempts, "timeout_s": 60.0, "elapsed_s": rng.uniform(1, 90),
                "passed": passed, "timed_out": False, "helper_calls": 0, "oracle_leak": False,
                "status": "passed" if passed else "failed",
            }  # fmt: skip
            if rng.random() < share:
                lost = {**row, "passed": False, "status": "infra_error", "lost": True}
                out.append(lost)
                row["retry"] = 1
            out.append(row)
    return out


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _plain_db(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A store whose rows another tool inserted: no kept columns, so SQLite tallies it."""
    with LedgerStore(path) as store:
        store.create_run(RunRecord(run_id="r"))
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            f"INSERT INTO attempts ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
            [
                [int(v) if isinstance(v, bool) else v for v in (r.get(c) for c in COLUMNS)]
                for r in rows
            ],
        )
    conn.close()
    return path


def _time(paths: tuple[Path, Path], repeats: int) -> list[tuple[float, float]]:
    """Median (wall, CPU) seconds of ``score_file`` of each path, the two alternating so that a
    busy machine weighs on both alike."""
    options = ScoreOptions(resamples=1000)
    seconds: list[list[tuple[float, float]]] = [[], []]
    for _ in range(repeats):
        for j, path in enumerate(paths):
            wall, cpu = time.perf_counter(), time.process_time()
            score_file(path, options=options)
            seconds[j].append((time.perf_counter() - wall, time.process_time() - cpu))
    return [
        (statistics.median(w for w, _ in s), statistics.median(c for _, c in s)) for s in seconds
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--attempts", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with_reruns = _rows(args.tasks, args.attempts, 0.01)
    counting = [dict(r) for r in with_reruns if r["status"] != "infra_error"]
    for r in counting:
        r.pop("retry", None)
    result: dict[str, Any] = {
        "attempts": len(counting),
        "rows_with_reruns": len(with_reruns),
        "reruns": len(with_reruns) - len(counting),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, make in (
            ("jsonl", lambda p, rows: _jsonl(p.with_suffix(".jsonl"), rows)),
            ("db_kept_columns", lambda p, rows: _kept(p, rows)),
            ("db_sql_tally", lambda p, rows: _plain_db(p.with_suffix(".db"), rows)),
        ):
            ours = make(root / f"{name}-reruns", with_reruns)
            base = make(root / f"{name}-plain", counting)
            (a_wall, a_cpu), (b_wall, b_cpu) = _time((ours, base), args.repeats)
            # the same figures: the superseded rows count nowhere
            assert score_file(ours).runs[0].metrics == score_file(base).runs[0].metrics
            result[name] = {
                "reruns_wall_s": round(a_wall, 4),
                "baseline_wall_s": round(b_wall, 4),
                "ratio_wall": round(a_wall / b_wall, 3),
                "reruns_cpu_s": round(a_cpu, 4),
                "baseline_cpu_s": round(b_cpu, 4),
                "ratio_cpu": round(a_cpu / b_cpu, 3),
            }
    print(json.dumps(result, indent=2))


def _kept(path: Path, rows: list[dict[str, Any]]) -> Path:
    jsonl = _jsonl(path.with_suffix(".jsonl"), rows)
    db = path.with_suffix(".db")
    import_files(db, [read_ledger(jsonl)])
    return db


if __name__ == "__main__":
    main()
