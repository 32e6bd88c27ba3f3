"""`trialbook score` on a 1,000,000-attempt JSONL ledger vs DuckDB's bare GROUP BY over the same file.

Both run as fresh processes (interpreter start and imports included on both sides), three times each,
alternating; the median is reported. Target (issue 2): ratio <= 3 and our peak RSS <= 1 GB.
``--csv`` measures the same rows written as CSV (DuckDB then reads them with read_csv_auto); no
target is set for CSV, the figure is kept honest beside the JSONL one.

    python benchmarks/bench_score_parse.py [--tasks 10000] [--attempts 100] [--repeats 3] [--csv]
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

from trialbook.ledger.formats import NATIVE_JSONL as NATIVE

DUCKDB = (
    "import duckdb, sys\n"
    "path = sys.argv[1]\n"
    "reader = 'read_csv_auto' if path.endswith('.csv') else 'read_json_auto'\n"
    "duckdb.sql(f\"SELECT task_id, count(*), sum(passed::INT) FROM {reader}('{path}') \"\n"
    "           'GROUP BY task_id').fetchall()\n"
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
    ap.add_argument("--csv", action="store_true", help="the same rows as CSV")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_ledger(Path(tmp) / "big.jsonl", tasks=args.tasks, attempts=args.attempts)
        if args.csv:
            csv_path = path.with_suffix(".csv")
            subprocess.run(
                [sys.executable, "-m", "trialbook", "export", str(path), "--format", "csv",
                 "-o", str(csv_path)],
                check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
            path = csv_path
        ours, base, rss = [], [], []
        for _ in range(args.repeats):
            t, r = timed(OURS, path)
            ours.append(t)
            rss.append(r)
            base.append(timed(DUCKDB, path)[0])
        result = {
            "benchmark": f"score_1M_{path.suffix[1:]}_vs_duckdb_groupby",
            "rows": args.tasks * args.attempts,
            "file_mb": round(os.path.getsize(path) / 2**20, 1),
            "ours_s_median": round(statistics.median(ours), 3),
            "duckdb_s_median": round(statistics.median(base), 3),
            "ratio": round(statistics.median(ours) / statistics.median(base), 2),
            "target_ratio_max": 3.0 if path.suffix == ".jsonl" else None,
            "ours_peak_rss_mb": round(max(rss) / 1024, 1),
            "target_peak_rss_mb_max": 1024,
            # "c": the C reader (built at install); "arrow": pyarrow's reader (no compiler there)
            "jsonl_reader": ("c" if NATIVE else "arrow") if path.suffix == ".jsonl" else None,
            "ours_s": [round(x, 3) for x in ours],
            "duckdb_s": [round(x, 3) for x in base],
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
