"""The SQLite ledger as the fast path (issue 17): each figure beside its baseline, in the same run.

1. ``trialbook score big.db`` vs SQLite's own per-task ``GROUP BY run_id, task_id`` (count and sum
   of passed) over the same file. Target: ratio <= 3, our peak RSS <= 300 MB.
2. ``trialbook score many.db --run R`` (RUNS runs of TASKS x ATTEMPTS) vs ``score one.db`` holding
   only run R. Target: ratio <= 1.5.
3. ``trialbook import jsonl big.jsonl --ledger new.db`` vs a bare ``executemany`` of the same tuples
   into the same schema in one transaction. Target: ratio <= 2.

Every side runs as a fresh process (interpreter start and imports included on both), REPEATS times,
alternating; medians are reported, peak RSS from ``getrusage(RUSAGE_CHILDREN)``. The ledgers are
generated into a temporary folder and removed. By default the sizes are a tenth of the issue's (a
minute or two); ``--full`` runs the issue's: 10,000 tasks x 100 attempts, and 100 runs x 10,000.

    python benchmarks/bench_ledger_db.py [--full] [--repeats 3]
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

SQLITE_GROUP_BY = (
    "import sqlite3, sys\n"
    "conn = sqlite3.connect(sys.argv[1])\n"
    "conn.execute('SELECT run_id, task_id, count(*), sum(passed) FROM attempts '\n"
    "             'GROUP BY run_id, task_id').fetchall()\n"
)
SCORE = (
    "import sys; from trialbook.cli import entry; "
    "sys.argv = ['trialbook', 'score', *sys.argv[1:], '--format', 'json']; entry()"
)
IMPORT = (
    "import sys; from trialbook.cli import entry; "
    "sys.argv = ['trialbook', 'import', 'jsonl', sys.argv[1], '--ledger', sys.argv[2]]; entry()"
)
# the same tuples the store inserts (read and validated as import reads them; not timed), then one
# bare executemany into a fresh file of the same schema, in one transaction (timed from there)
EXECUTEMANY = (
    "import sqlite3, sys, time\n"
    "from trialbook.ledger import read_ledger, ledger_tuples\n"
    "from trialbook.ledger.store import MIGRATIONS\n"
    "from trialbook.ledger.store._schema import statements\n"
    "from trialbook.ledger.store._writer import COLUMNS, INSERT\n"
    "rows = list(ledger_tuples(read_ledger(sys.argv[1]), COLUMNS))\n"
    "start = time.perf_counter()\n"
    "conn = sqlite3.connect(sys.argv[2], isolation_level=None)\n"
    "for _, _, sql in MIGRATIONS:\n"
    "    for s in statements(sql):\n"
    "        conn.execute(s)\n"
    "conn.execute(\"INSERT INTO runs (run_id, started_at) VALUES ('bench', 'x')\")\n"
    "conn.execute('BEGIN')\n"
    "conn.executemany(INSERT, rows)\n"
    "conn.execute('COMMIT')\n"
    "conn.close()\n"
    "sys.stderr.write(f'{time.perf_counter() - start}\\n')\n"
)


def timed(code: str, *args: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB, the child's own getrusage) of one fresh interpreter running
    ``code``; a script that reports its own seconds (the executemany baseline) gives those."""
    wrapper = (
        "import resource, sys, time\n"
        "try:\n"
        f"    exec({code!r})\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "sys.stderr.write(f'RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
    )
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", wrapper, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    lines = proc.stderr.strip().splitlines()
    rss = int(lines[-1].split()[1]) / 1024
    own = [line for line in lines[:-1] if not line.startswith("RSS")]
    return (float(own[-1]) if own else wall), rss


BLAS_THREADS = (
    "import ctypes, numpy\n"
    "libs = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'openblas' in l})\n"
    "names = ('scipy_openblas_get_num_threads64_', 'openblas_get_num_threads64_',\n"
    "         'openblas_get_num_threads')\n"
    "print(next((getattr(ctypes.CDLL(libs[0]), n)() for n in names\n"
    "            if libs and hasattr(ctypes.CDLL(libs[0]), n)), 'unknown'))\n"
)


def blas_threads() -> str:
    """The threads numpy's OpenBLAS uses in a fresh interpreter (the bootstrap's matrix products
    may use them all; SQLite's GROUP BY runs on one): 'unknown' without OpenBLAS or /proc."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", BLAS_THREADS], capture_output=True, text=True, check=True
        )
    except subprocess.CalledProcessError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def compare(
    name: str, ours: list[float], base: list[float], target: float, **extra: object
) -> dict[str, object]:
    return {
        "benchmark": name,
        "ours_s_median": median(ours),
        "baseline_s_median": median(base),
        "ratio": round(statistics.median(ours) / statistics.median(base), 2),
        "target_ratio_max": target,
        **extra,
        "ours_s": [round(x, 3) for x in ours],
        "baseline_s": [round(x, 3) for x in base],
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="the issue's sizes (several minutes)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tasks, attempts = (10_000, 100) if args.full else (1_000, 100)
    runs, per_run_tasks = (100, 100) if args.full else (20, 50)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        big = write_ledger(root / "big.jsonl", tasks=tasks, attempts=attempts)
        subprocess.run(
            [sys.executable, "-m", "trialbook", "import", "jsonl", str(big), "--ledger",
             str(root / "big.db")], check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip

        # 1. score of the .db vs SQLite's per-task GROUP BY over the same file
        ours, base, rss = [], [], []
        for _ in range(args.repeats):
            t, r = timed(SCORE, str(root / "big.db"))
            ours.append(t)
            rss.append(r)
            base.append(timed(SQLITE_GROUP_BY, str(root / "big.db"))[0])
        results.append(
            compare(
                "score_db_vs_sqlite_groupby",
                ours,
                base,
                3.0,
                rows=tasks * attempts,
                ours_peak_rss_mb=round(max(rss), 1),
                target_peak_rss_mb_max=300,
                ours_blas_threads=blas_threads(),
                baseline_threads=1,
                cpus=os.cpu_count(),
            )
        )

        # 2. one run of a store of many vs a store of that run alone
        many = root / "many.jsonl"
        for i in range(runs):
            write_ledger(many, tasks=per_run_tasks, attempts=100, seed=i, run_id=f"run-{i:03d}",
                         mode="a" if i else "w")  # fmt: skip
        one = write_ledger(root / "one.jsonl", tasks=per_run_tasks, attempts=100, seed=runs // 2,
                           run_id=f"run-{runs // 2:03d}")  # fmt: skip
        for src, db in ((many, "many.db"), (one, "one.db")):
            subprocess.run(
                [sys.executable, "-m", "trialbook", "import", "jsonl", str(src), "--ledger",
                 str(root / db)], check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
        ours, base = [], []
        for _ in range(args.repeats):
            ours.append(timed(SCORE, str(root / "many.db"), "--run", f"run-{runs // 2:03d}")[0])
            base.append(timed(SCORE, str(root / "one.db"))[0])
        results.append(
            compare(
                "score_one_run_of_many_vs_store_of_that_run",
                ours,
                base,
                1.5,
                runs=runs,
                rows_per_run=per_run_tasks * 100,
            )
        )

        # 3. import of the JSONL into a new .db vs a bare executemany of the same tuples
        ours, base = [], []
        for i in range(args.repeats):
            ours.append(timed(IMPORT, str(big), str(root / f"new-{i}.db"))[0])
            base.append(timed(EXECUTEMANY, str(big), str(root / f"bare-{i}.db"))[0])
            for name in (f"new-{i}.db", f"bare-{i}.db"):
                (root / name).unlink()
        results.append(
            compare("import_jsonl_vs_bare_executemany", ours, base, 2.0, rows=tasks * attempts)
        )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
