"""The container tier's cost: trivial attempts through the harness against bare engine runs.

An attempt in the container tier is two containers (the agent's, then the grader's), so the
baseline is a bare loop of two ``podman run --rm IMAGE true`` per attempt, with the same flags the
tier needs on this machine and nothing else: the engine's start time is the floor, and the ratio
says what the harness adds to it (the sandbox's flags, the start check, the copies of the fixture
and the oracle, the row in the ledger). Both run in this process, one after the other, ``rounds``
times alternated; the medians are compared (the machine is noisy: the ratio, not the seconds).

Beside it, the start of a workspace that is the image's files (a task's ``workdir``): copied out of
the image for every attempt, against once per image and then from the run's scratch.

Prints JSON. ``python benchmarks/bench_container.py [--quick]``. Needs podman (or docker) and
``localhost/trialbook-base:bookworm`` (``make base-image``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from trialbook.harness import RunOptions, run_suite
from trialbook.harness.sandbox._container import ContainerTarget, engine_for, seed_workspace
from trialbook.suite import freeze, load_suite, write_lock

QUICK = "--quick" in sys.argv
IMAGE = "localhost/trialbook-base:bookworm"
ATTEMPTS, ROUNDS = (4, 2) if QUICK else (10, 3)


def _suite(root: Path) -> Path:
    suite = root / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "suite.toml").write_text(
        f'name = "bench-container"\nk = 1\ntimeout_s = 60\nimage = "{IMAGE}"\n'
    )
    for i in range(ATTEMPTS):
        task = suite / "tasks" / f"t{i:02d}"
        (task / "fixture").mkdir(parents=True)
        (task / "task.toml").write_text('prompt = "nothing"\ngrader = "true"\n')
    loaded = load_suite(suite)
    write_lock(loaded, freeze(loaded))
    return suite


def _bare_s() -> float:
    """Seconds per attempt of a bare loop: two containers, the tier's flags only."""
    engine = engine_for(None, IMAGE)
    argv = engine.command("run", "--rm", "--network=none", *engine.run_args, IMAGE, "true")
    t0 = time.perf_counter()
    for _ in range(2 * ATTEMPTS):
        subprocess.run(argv, check=True, capture_output=True)
    return (time.perf_counter() - t0) / ATTEMPTS


def _tier_s(root: Path, suite: Path, n: int) -> float:
    ledger = root / f"l{n}.db"
    t0 = time.perf_counter()
    result = run_suite(RunOptions(suite=suite, agent="true", ledger=ledger, sandbox="container"))
    elapsed = time.perf_counter() - t0
    assert result.written == ATTEMPTS, result
    return elapsed / ATTEMPTS


def _seed_s(root: Path, cache: Path | None) -> float:
    """Seconds to start one workspace as the image's /etc (a task's ``workdir``): copied out of
    the image for each attempt (``cache`` None, as before) or once per image, then from the run's
    scratch."""
    target = ContainerTarget(engine_for(None, IMAGE), IMAGE, workdir="/etc")
    t0 = time.perf_counter()
    for _ in range(ATTEMPTS):
        workspace = Path(tempfile.mkdtemp(dir=root))
        seed_workspace(target, workspace, cache)
    return (time.perf_counter() - t0) / ATTEMPTS


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suite = _suite(root)
        _tier_s(root, suite, -1)  # warm: the image probe of the run, caches
        bare, tier, seed_each, seed_kept = [], [], [], []
        for n in range(ROUNDS):
            bare.append(_bare_s())
            tier.append(_tier_s(root, suite, n))
            seed_each.append(_seed_s(root, None))
            seed_kept.append(_seed_s(root, root / f"cache{n}"))  # its first copy out included
    bare_s, tier_s = statistics.median(bare), statistics.median(tier)
    each_s, kept_s = statistics.median(seed_each), statistics.median(seed_kept)
    print(
        json.dumps(
            {
                "attempts_per_round": ATTEMPTS,
                "rounds": ROUNDS,
                "bare_two_containers_per_attempt_s": round(bare_s, 3),
                "container_tier_per_attempt_s": round(tier_s, 3),
                "tier_rate_over_bare_rate": round(bare_s / tier_s, 3),
                "goal": ">= 0.8",
                "seed_workdir": "/etc of the base image",
                "seed_copied_out_per_attempt_s": round(each_s, 4),
                "seed_copied_out_once_per_image_s": round(kept_s, 4),
                "seed_speedup": round(each_s / kept_s, 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
