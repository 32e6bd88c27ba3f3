"""Harness cost per attempt against an earlier commit, side by side in the same run: what a change
to the harness costs (the sandbox hardening was asked to cost at most 10% of the overhead).

``python benchmarks/bench_harness_vs_ref.py REF [--tier process|bwrap] [--rounds N]`` checks REF out
in a temporary git worktree, then runs the overhead benchmark's 300 trivial attempts (agent `true`,
grader `true`, 2 jobs; benchmarks/bench_harness_overhead.py) through ``run_suite`` of REF and of the
working tree in turn, each side in a fresh Python process, interleaved so that drift in machine load
hits both alike. It prints JSON: per side the wall time of each round and the median CPU time per
attempt (the harness process and all its children: user + system), which other load on a shared
machine disturbs less than wall time; and the ratios REF / this tree (1.0: as fast; 0.9: this tree
needs 11% more).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

ONE_SIDE = r"""
import resource, sys, time
from pathlib import Path
from trialbook.harness import RunOptions, run_suite
before = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
start = time.perf_counter()
result = run_suite(RunOptions(suite=Path(sys.argv[1]), agent="true", ledger=Path(sys.argv[2]),
                              jobs=2, sandbox=sys.argv[3]))
wall = time.perf_counter() - start
after = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
cpu = sum(a.ru_utime - b.ru_utime + a.ru_stime - b.ru_stime for a, b in zip(after, before))
print(wall, cpu, result.written)
"""


def _side(src: Path, suite: Path, ledger: Path, tier: str) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(
        [sys.executable, "-c", ONE_SIDE, str(suite), str(ledger), tier],
        env=env,
        cwd=ledger.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu, written = done.stdout.split()
    if int(written) != 300:
        raise SystemExit(f"{src}: {written} of 300 attempts written")
    return float(wall), float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="the earlier commit (anything git rev-parse takes)")
    parser.add_argument("--tier", choices=("process", "bwrap"), default="process")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from bench_harness_overhead import TASKS, K, make_suite

    work = Path(tempfile.mkdtemp(prefix="tb-bench-ref-"))
    ref_tree = work / "ref"
    try:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(ref_tree), args.ref],
            capture_output=True,
            check=True,
        )
        suite = make_suite(work / "suite")
        sides = {"ref": ref_tree / "src", "this": ROOT / "src"}
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for i in range(args.rounds):
            for name, src in sides.items():
                rounds[name].append(_side(src, suite, work / f"{name}{i}.db", args.tier))
        n = TASKS * K
        cpu = {name: statistics.median(c for _, c in r) for name, r in rounds.items()}
        out = {
            "benchmark": "harness_vs_ref",
            "ref": args.ref,
            "tier": args.tier,
            "attempts": n,
            "rounds": args.rounds,
            "wall_s": {name: [round(w, 3) for w, _ in r] for name, r in rounds.items()},
            "cpu_ms_per_attempt": {name: round(c / n * 1000, 2) for name, c in cpu.items()},
            "ratio_cpu_ref_vs_this": round(cpu["ref"] / cpu["this"], 3),
            "ratio_throughput_ref_vs_this_median_of_rounds": round(
                statistics.median(
                    r[0] / t[0] for r, t in zip(rounds["ref"], rounds["this"], strict=True)
                ),
                3,
            ),
            "python": sys.version.split()[0],
        }
        print(json.dumps(out, indent=2))
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref_tree)],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
