"""`trialbook score` of a large JSONL (and CSV) ledger, read in chunks, vs DuckDB's GROUP BY.

Issue 17's target: the score of a 10,000,000-attempt JSONL ledger in at most 1 GB of memory and at
most 3x the time of DuckDB's bare ``GROUP BY task_id`` (count and sum of passed) over the same
file. Each side runs as a fresh process (interpreter start and imports included on both sides),
REPEATS times, alternating; medians are reported, and each peak RSS is read with
``getrusage(RUSAGE_CHILDREN)`` by a parent that ran only that one command. ``--whole`` adds the
file read whole (the reader before the chunked one: ``read_ledger`` then the tallies of the
in-memory ledger), the memory the chunked read replaces. ``--csv`` measures the same rows as CSV
(written by DuckDB from the JSONL file). The ledgers are generated into a temporary folder and
removed; the default is 1,000,000 attempts (10,000 tasks x 100), ``--full`` the issue's
10,000,000 (100,000 tasks x 100; some minutes).

    python benchmarks/bench_score_stream.py [--full] [--repeats 3] [--csv] [--whole]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
WHOLE = (
    "import sys; from trialbook.analysis import score_tallies; "
    "from trialbook.ledger import TallyOfLedger, read_ledger; "
    "from trialbook import report; "
    "import json; print(json.dumps(report.score_to_dict(score_tallies(TallyOfLedger(read_ledger(sys.argv[1]))))))"
)
# the parent of one command: its wall time and that child's peak RSS (KiB)
PARENT = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\n"
    "print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def timed(code: str, path: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one fresh interpreter running ``code`` on ``path``."""
    out = subprocess.run(
        [sys.executable, "-c", PARENT, sys.executable, "-c", code, str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), int(out[1])


def compare(path: Path, repeats: int, whole: bool) -> dict[str, object]:
    sides = {"ours": OURS, "duckdb": DUCKDB} | ({"whole_file": WHOLE} if whole else {})
    runs: dict[str, list[tuple[float, int]]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, code in sides.items():
            runs[name].append(timed(code, path))
    med = {name: statistics.median(t for t, _ in r) for name, r in runs.items()}
    peak = {name: max(m for _, m in r) / 1024 for name, r in runs.items()}
    result: dict[str, object] = {
        "format": path.suffix[1:],
        "file_mb": round(os.path.getsize(path) / 2**20, 1),
        "ours_s_median": round(med["ours"], 3),
        "duckdb_s_median": round(med["duckdb"], 3),
        "ratio": round(med["ours"] / med["duckdb"], 2),
        "target_ratio_max": 3.0 if path.suffix == ".jsonl" else None,
        "ours_peak_rss_mb": round(peak["ours"], 1),
        "duckdb_peak_rss_mb": round(peak["duckdb"], 1),
        "target_peak_rss_mb_max": 1024 if path.suffix == ".jsonl" else None,
        "ours_s": [round(t, 3) for t, _ in runs["ours"]],
        "duckdb_s": [round(t, 3) for t, _ in runs["duckdb"]],
    }
    if whole:
        result |= {
            "whole_file_s_median": round(med["whole_file"], 3),
            "whole_file_peak_rss_mb": round(peak["whole_file"], 1),
            "memory_ratio_whole_to_ours": round(peak["whole_file"] / peak["ours"], 2),
        }
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="10,000,000 attempts (some minutes)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--csv", action="store_true", help="also the same rows as CSV")
    ap.add_argument("--whole", action="store_true", help="also the file read whole")
    args = ap.parse_args()
    tasks = 100_000 if args.full else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        path = write_ledger(Path(tmp) / "big.jsonl", tasks=tasks, attempts=100)
        results = [compare(path, args.repeats, args.whole)]
        if args.csv:
            csv_path = path.with_suffix(".csv")  # (DuckDB's progress bar silenced)
            subprocess.run(
                [sys.executable, "-c",
                 "import duckdb, sys; duckdb.sql(f\"COPY (SELECT * FROM read_json_auto("
                 "'{sys.argv[1]}')) TO '{sys.argv[2]}' (HEADER, DELIMITER ',')\")",
                 str(path), str(csv_path)],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            path.unlink()  # one big file at a time in the temporary folder
            results.append(compare(csv_path, args.repeats, args.whole))
    print(
        json.dumps(
            {
                "benchmark": "score_streamed_vs_duckdb_groupby",
                "rows": tasks * 100,
                "tasks": tasks,
                "jsonl_reader": "c" if NATIVE else "arrow",
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
