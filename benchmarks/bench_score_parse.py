"""`trialbook score` on a 1,000,000-attempt JSONL ledger vs DuckDB's bare GROUP BY over the same file.

Both run as fresh processes (interpreter start and imports included on both sides), three times each,
alternating; the median is reported. Target (issue 2): ratio <= 3 and our peak RSS <= 1 GB.

    python benchmarks/bench_score_parse.py [--tasks 10000] [--attempts 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _ledgers import write_ledger

from trialbook.ledger._read import NATIVE

DUCKDB = (
    'import duckdb, sys; duckdb.sql("SELECT task_id, count(*), sum(passed::INT) FROM '
    'read_json_auto(\'" + sys.argv[1] + "\') GROUP BY task_id").fetchall()'
)
OURS = (
    "import sys; from trialbook.cli import entry; "
    "sys.argv = ['trialbook', 'score', sys.argv[1], '--format', 'json']; entry()"
)


def timed(code: str, path: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one fresh interpreter running ``code``."""
    wrapper = (
        "import resource, runpy, sys, time\n"
        "t = time.perf_counter()\n"
        "try:\n"
        f"    exec({code!r})\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "sys.stderr.write(f'{time.perf_counter() - t} "
        "{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
    )
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    _, rss = proc.stderr.strip().splitlines()[-1].split()
    return wall, int(rss)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--attempts", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_ledger(Path(tmp) / "big.jsonl", tasks=args.tasks, attempts=args.attempts)
        ours, base, rss = [], [], []
        for _ in range(args.repeats):
            t, r = timed(OURS, path)
            ours.append(t)
            rss.append(r)
            base.append(timed(DUCKDB, path)[0])
        result = {
            "benchmark": "score_1M_jsonl_vs_duckdb_groupby",
            "rows": args.tasks * args.attempts,
            "file_mb": round(os.path.getsize(path) / 2**20, 1),
            "ours_s_median": round(statistics.median(ours), 3),
            "duckdb_s_median": round(statistics.median(base), 3),
            "ratio": round(statistics.median(ours) / statistics.median(base), 2),
            "target_ratio_max": 3.0,
            "ours_peak_rss_mb": round(max(rss) / 1024, 1),
            "target_peak_rss_mb_max": 1024,
            # "c": the C reader (built at install); "arrow": pyarrow's reader (no compiler there)
            "jsonl_reader": "c" if NATIVE else "arrow",
            "ours_s": [round(x, 3) for x in ours],
            "duckdb_s": [round(x, 3) for x in base],
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
