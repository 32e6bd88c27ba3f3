"""The Ray executor against the local executor, side by side in one run, on a Ray instance started
here with 2 CPUs (its start-up, 2.5-5 s, is reported apart and not counted).

1. Attempts per second on trivial attempts (agent `true`, grader `true`, process tier, 2 in
   flight): `trialbook run --executor ray` vs `--executor local`, rounds interleaved so drift in the
   machine's load hits both alike. Target: Ray at least 0.5x local.
2. Driver memory (this process's resident set, Ray's core worker included) after 1,000 and after
   10,000 attempts of one 10,000-attempt run, for both executors. The attempts' worker returns its
   row at once (no process started), so the run is all driver: planning, start markers, the Ray
   tasks and their results, rows written, progress. Target: after 10,000 within 1.5x of after 1,000.

Prints one JSON object. ``--quick`` runs fewer attempts (a smoke check, not the figures).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import ray

from trialbook.harness import RunOptions, Tally, run_suite
from trialbook.harness.attempt._attempt import attempt_fields
from trialbook.harness.attempt._spec import AttemptResult, AttemptSpec
from trialbook.harness.executors._executor import Executor, LocalExecutor, Worker
from trialbook.harness.executors._ray import RayExecutor
from trialbook.ledger import now
from trialbook.suite import freeze, load_suite, write_lock

QUICK = "--quick" in sys.argv
JOBS = 2
SPEED_TASKS, SPEED_K, ROUNDS = (20, 2, 2) if QUICK else (60, 5, 5)
MEMORY_TASKS, MEMORY_K = (20, 50) if QUICK else (200, 50)  # 10,000 attempts
EARLY = 100 if QUICK else 1_000


def make_suite(root: Path, tasks: int, k: int) -> Path:
    root.mkdir(parents=True)
    seeds = ", ".join(str(i) for i in range(k))
    (root / "suite.toml").write_text(
        f'name = "ray-bench"\nk = {k}\ntimeout_s = 30\nseeds = [{seeds}]\n'
    )
    for i in range(tasks):
        task = root / "tasks" / f"t{i:04d}"
        (task / "fixture" / "pkg").mkdir(parents=True)
        (task / "task.toml").write_text('prompt = "nothing"\ngrader = "true"\n')
        (task / "fixture" / "main.py").write_text(f"print({i})\n" * 20)
        (task / "fixture" / "pkg" / "util.py").write_text("X = 1\n" * 50)
    suite = load_suite(root)
    write_lock(suite, freeze(suite))
    return root


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def instant(spec: AttemptSpec) -> AttemptResult:
    """A worker whose attempt passes at once (no process): the run then measures the driver."""
    row = attempt_fields(spec)
    row.update(passed=True, timed_out=False, status="passed", elapsed_s=0.0, score=None)
    row.update(finished_at=now(), error=None)
    return AttemptResult(row=row)


class Instant:
    """An executor that sends :func:`instant` instead of the real attempt."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner

    def submit(self, worker: Worker, spec: AttemptSpec, /) -> object:
        return self.inner.submit(instant, spec)

    def capacity(self) -> int:
        return self.inner.capacity()

    def cancel(self) -> None:
        self.inner.cancel()

    def shutdown(self, *, cancel: bool = False) -> None:
        self.inner.shutdown(cancel=cancel)


class Sampler:
    """Progress that samples the resident set after the EARLY-th and the last row."""

    def __init__(self) -> None:
        self.samples: dict[int, float] = {}
        self.n = 0

    def begin(self, run_id: str, total: int, done: Tally, notes: Sequence[str]) -> None:
        self.total = total

    def attempt(self, row: Mapping[str, object]) -> None:
        self.n += 1
        if self.n in (EARLY, self.total):
            self.samples[self.n] = rss_mb()


def timed(suite: Path, ledger: Path, executor: str) -> float:
    began = time.perf_counter()
    result = run_suite(
        RunOptions(
            suite=suite,
            agent="true",
            ledger=ledger,
            jobs=JOBS,
            sandbox="process",
            executor=executor,
        )
    )
    elapsed = time.perf_counter() - began
    assert result.written == SPEED_TASKS * SPEED_K, result
    return elapsed


def memory(suite: Path, ledger: Path, executor: str) -> dict[str, float]:
    sampler = Sampler()

    def factory(jobs: int) -> Executor:
        inner: Executor = RayExecutor(jobs) if executor == "ray" else LocalExecutor(jobs)
        return Instant(inner)  # type: ignore[return-value]

    result = run_suite(
        RunOptions(suite=suite, agent="true", ledger=ledger, jobs=JOBS, sandbox="process"),
        progress=sampler,
        executor_factory=factory,
    )
    assert result.written == MEMORY_TASKS * MEMORY_K, result
    early, last = sampler.samples[EARLY], sampler.samples[result.written]
    return {
        f"rss_mb_after_{EARLY}": round(early, 1),
        f"rss_mb_after_{result.written}": round(last, 1),
        "ratio": round(last / early, 3),
    }


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="tb-bench-ray-", dir="/tmp"))
    os.environ.setdefault("RAY_TMPDIR", str(work))  # Ray's session files: here, not /tmp/ray
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # no token under ~/.ray
    try:
        began = time.perf_counter()
        ray.init(num_cpus=JOBS, include_dashboard=False, log_to_driver=False)
        start_s = time.perf_counter() - began
        speed_suite = make_suite(work / "speed", SPEED_TASKS, SPEED_K)
        timed(speed_suite, work / "warm.db", "ray")  # the workers start once, not in a round
        rounds = []
        for r in range(ROUNDS):
            local = timed(speed_suite, work / f"l{r}.db", "local")
            remote = timed(speed_suite, work / f"r{r}.db", "ray")
            rounds.append((local, remote))
        n = SPEED_TASKS * SPEED_K
        best_local, best_ray = min(r[0] for r in rounds), min(r[1] for r in rounds)
        mem_suite = make_suite(work / "memory", MEMORY_TASKS, MEMORY_K)
        out: dict[str, object] = {
            "benchmark": "ray_executor",
            "ray": ray.__version__,
            "ray_init_s": round(start_s, 2),
            "cpus": JOBS,
            "attempts_per_round": n,
            "rounds": ROUNDS,
            "local_attempts_per_s": round(n / best_local, 1),
            "ray_attempts_per_s": round(n / best_ray, 1),
            "ratio_ray_vs_local": round(best_local / best_ray, 3),
            "ratio_ray_vs_local_median_of_rounds": round(
                statistics.median(lo / ra for lo, ra in rounds), 3
            ),
            "round_ratios": [round(lo / ra, 3) for lo, ra in rounds],
            "target_ratio_min": 0.5,
            "memory_ray": memory(mem_suite, work / "mem-ray.db", "ray"),
            "memory_local": memory(mem_suite, work / "mem-local.db", "local"),
            "memory_target_ratio_max": 1.5,
            "quick": QUICK,
        }
        print(json.dumps(out, indent=2))
    finally:
        ray.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
