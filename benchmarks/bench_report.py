"""`trialbook report` (HTML, plots, outcome grid, comparison) vs the same numbers without the page:
`trialbook score --format json` of the ledger plus `trialbook compare --format json` of its two runs.

The ratio is what the page costs on top of the statistics it shows (the outcome grid, the figures,
the HTML). Each side runs as fresh processes (interpreter start and imports included), alternating,
`--repeats` times; medians are reported, with the page's size.

    python benchmarks/bench_report.py [--tasks 2000] [--attempts 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_two_runs(path: Path, *, tasks: int, attempts: int, seed: int = 0) -> Path:
    """Two runs (base, cand) of ``tasks`` x ``attempts`` on one dataset_id, cand a little better."""
    rng = np.random.default_rng(seed)
    ease = rng.beta(1.0, 1.0, tasks)
    with path.open("w") as fh:
        for run, lift in (("base", 0.0), ("cand", 0.05)):
            passed = rng.random((tasks, attempts)) < np.minimum(ease + lift, 1.0)[:, None]
            for t in range(tasks):
                for a in range(attempts):
                    ok = bool(passed[t, a])
                    fh.write(
                        f'{{"run_id":"{run}","system":"{run}-agent","dataset_id":"bench-suite",'
                        f'"task_id":"task-{t:05d}","stratum":"s{t % 4}","attempt_index":{a},'
                        f'"k_budget":{attempts},"timeout_s":600.0,"elapsed_s":12.5,'
                        f'"passed":{str(ok).lower()},"timed_out":false,"helper_calls":0,'
                        f'"oracle_leak":false,"status":"{"passed" if ok else "failed"}",'
                        f'"cost":0.0125}}\n'
                    )
    return path


def timed(*commands: list[str]) -> float:
    """Wall seconds of running ``commands`` one after another, each a fresh process."""
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--attempts", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tb = [sys.executable, "-m", "trialbook"]
    with tempfile.TemporaryDirectory() as tmp:
        ledger = write_two_runs(Path(tmp) / "two.jsonl", tasks=args.tasks, attempts=args.attempts)
        page = Path(tmp) / "report.html"
        report = [*tb, "report", str(ledger), "-o", str(page)]
        score = [*tb, "score", str(ledger), "--format", "json"]
        compare = [*tb, "compare", f"{ledger}:base", f"{ledger}:cand", "--format", "json"]
        ours, base = [], []
        for _ in range(args.repeats):
            ours.append(timed(report))
            base.append(timed(score, compare))
        result = {
            "benchmark": "report_html_vs_score_and_compare_json",
            "rows": 2 * args.tasks * args.attempts,
            "report_s_median": round(statistics.median(ours), 3),
            "score_plus_compare_s_median": round(statistics.median(base), 3),
            "ratio": round(statistics.median(ours) / statistics.median(base), 2),
            "page_mb": round(page.stat().st_size / 2**20, 2),
            "report_s": [round(x, 3) for x in ours],
            "score_plus_compare_s": [round(x, 3) for x in base],
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
