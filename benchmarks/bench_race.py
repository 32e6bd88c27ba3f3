"""The race: what one look costs, and the attempts a race saves against the full suite.

1. Per-update cost, side by side in one process: the incremental sequence (``PairedSequence``,
   a 2001-point grid; ``DiscordantSequence``) against recomputing the sequence from scratch at a
   look after 500 pairs (what a non-incremental race would do), and against one trivial attempt
   through the real harness (agent ``true``, grader ``true``, process tier): the ratios say how
   small a look is next to an attempt.
2. Attempts saved, on simulated designs (2,000 races of a 500-task suite each), for the race's
   default design (``spending``: alpha spent over the suite's size) and the betting sequence: the
   median share of the suite a race uses, its right-decision rate, and the share a fixed design of
   the same power needs (exact McNemar with single attempts, a paired z-test over tasks with
   several), each design measured in the same run.

Prints JSON. ``python benchmarks/bench_race.py [--quick]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from trialbook.harness import RunOptions, run_suite
from trialbook.stats import (
    DiscordantSequence,
    PairedSequence,
    SpendingSequence,
    discordant_stops,
    obrien_fleming_bounds,
    race_stops,
    spending_stops,
)
from trialbook.suite import freeze, load_suite, write_lock

QUICK = "--quick" in sys.argv
RACES, TASKS, ALPHA = (500 if QUICK else 2000), 500, 0.05


def _per_update_us(make: object, values: NDArray[np.float64], rounds: int = 5) -> float:
    """The median over rounds of the mean cost of one update along a whole race."""
    best = []
    for _ in range(rounds):
        seq = make()  # type: ignore[operator]
        t0 = time.perf_counter()
        for v in values:
            seq.update(float(v))
        best.append((time.perf_counter() - t0) / values.size)
    return 1e6 * float(np.median(best))


def _median_update_us(make: object, values: NDArray[np.float64]) -> float:
    """The median cost of one update (robust to a busy machine's pauses)."""
    seq = make()  # type: ignore[operator]
    times = []
    for v in values:
        t0 = time.perf_counter()
        seq.update(float(v))
        times.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(times))


def _recompute_us(values: NDArray[np.float64]) -> float:
    t0 = time.perf_counter()
    seq = PairedSequence()
    for v in values:
        seq.update(float(v))
    return 1e6 * (time.perf_counter() - t0)


def _attempt_ms(root: Path, attempts: int = 20) -> float:
    suite = root / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "suite.toml").write_text('name = "bench"\nk = 1\ntimeout_s = 30\n')
    for i in range(attempts):
        task = suite / "tasks" / f"t{i:02d}"
        (task / "fixture").mkdir(parents=True)
        (task / "oracle").mkdir()
        (task / "task.toml").write_text('prompt = "nothing"\ngrader = "true"\n')
    loaded = load_suite(suite)
    write_lock(loaded, freeze(loaded))
    t0 = time.perf_counter()
    run_suite(RunOptions(suite=suite, agent="true", ledger=root / "l.db", sandbox="process"))
    return 1e3 * (time.perf_counter() - t0) / attempts


def _fixed_right(d: NDArray[np.float64], n: int, single: bool) -> NDArray[np.bool_]:
    """Right-signed rejections of the fixed test run once on the first n pairs."""
    if single:
        b, c = np.sum(d[:, :n] == -1, axis=1), np.sum(d[:, :n] == 1, axis=1)
        p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
        return np.asarray((p < ALPHA) & (c > b))
    mean = d[:, :n].mean(axis=1)
    sd = d[:, :n].std(axis=1, ddof=1)
    return np.asarray(mean / (sd / np.sqrt(n)) > stats.norm.ppf(1 - ALPHA / 2))


def _fixed_share(d: NDArray[np.float64], power: float, single: bool) -> float:
    """Fewest tasks (share of the suite) a test run once on the first n tasks needs for
    ``power`` (right-signed rejections) on these same races; > 1 when the suite is not enough."""
    if single:
        plus, minus = np.cumsum(d == 1, axis=1), np.cumsum(d == -1, axis=1)
    else:
        csum, csq = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    for n in range(10, TASKS + 1, 5):
        if single:
            b, c = minus[:, n - 1], plus[:, n - 1]
            p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
            right = (p < ALPHA) & (c > b)
        else:
            mean = csum[:, n - 1] / n
            sd = np.sqrt(np.maximum(csq[:, n - 1] / n - mean**2, 1e-12) * n / (n - 1))
            right = mean / (sd / np.sqrt(n)) > stats.norm.ppf(1 - ALPHA / 2)
        if np.mean(right) >= power:
            return n / TASKS
    return float("inf")


def _designs(rng: np.random.Generator) -> dict[str, tuple[NDArray[np.float64], int]]:
    u = rng.random((RACES, TASKS))
    single = np.where(u < 0.15, 1.0, np.where(u < 0.20, -1.0, 0.0))  # +0.10, 20% discordant
    null = np.where(u < 0.10, 1.0, np.where(u < 0.20, -1.0, 0.0))
    p = rng.beta(0.6, 1.2, size=(RACES, TASKS))
    k3 = (rng.binomial(3, np.clip(p + 0.10, 0, 1)) - rng.binomial(3, p)) / 3
    q = rng.beta(2, 5, size=(RACES, TASKS))
    many = {
        f"single attempt, Beta(2, 5) tasks, +{delta:.2f}": (
            rng.binomial(1, np.clip(q + delta, 0, 1)) - rng.binomial(1, q)
        ).astype(float)
        for delta in (0.10, 0.05)
    }
    return {
        **{name: (d, 1) for name, d in many.items()},
        "single attempt, +0.10 (20% discordant)": (single, 1),
        "single attempt, no difference": (null, 1),
        "3 attempts, skewed difficulty, about +0.10": (k3, 3),
    }


def main() -> None:
    rng = np.random.default_rng(2026)
    values = rng.choice([-1.0, 0.0, 1.0], p=[0.05, 0.8, 0.15], size=500)
    with tempfile.TemporaryDirectory() as tmp:
        attempt_ms = _attempt_ms(Path(tmp))
    betting_us = _per_update_us(PairedSequence, values)
    discordant_us = _per_update_us(DiscordantSequence, values)
    recompute_us = _recompute_us(values)
    t0 = time.perf_counter()
    obrien_fleming_bounds(values.size, ALPHA)  # once per race (cached after)
    bounds_ms = 1e3 * (time.perf_counter() - t0)
    spending_us = _per_update_us(lambda: SpendingSequence(horizon=values.size), values)
    out: dict[str, object] = {
        "per_update": {
            "betting_incremental_us": round(betting_us, 1),
            "betting_incremental_median_us": round(_median_update_us(PairedSequence, values), 1),
            "discordant_incremental_us": round(discordant_us, 2),
            "spending_incremental_us": round(spending_us, 1),
            "spending_boundaries_500_looks_ms": round(bounds_ms),
            "betting_recompute_at_500_pairs_us": round(recompute_us, 1),
            "recompute_over_incremental": round(recompute_us / betting_us, 1),
            "one_trivial_attempt_ms": round(attempt_ms, 1),
            "attempt_over_betting_update": round(1e3 * attempt_ms / betting_us),
        }
    }
    designs = {}
    for name, (d, k) in _designs(rng).items():
        full = 2 * k * TASKS
        row: dict[str, object] = {"full_suite_attempts": full}
        if "no difference" not in name:
            row["fixed_design_power_whole_suite"] = round(
                float(np.mean(_fixed_right(d, TASKS, k == 1))), 3
            )
        methods = {
            "spending": spending_stops(d, alpha=ALPHA, attempts=k),
            "betting-population": race_stops(d, alpha=ALPHA),
        }
        if k == 1:
            methods["discordant"] = discordant_stops(d.astype(np.int64), alpha=ALPHA)
        for method, (decision, used) in methods.items():
            right = float(np.mean(decision == 1)) if "no difference" not in name else None
            entry = {
                "median_share_used": round(float(np.median(used)) / TASKS, 3),
                "mean_attempts": round(float(np.mean(used)) * 2 * k),
                "attempts_saved_share": round(1 - float(np.mean(used)) / TASKS, 3),
                "declared_difference": round(float(np.mean(decision != 0)), 4),
            }
            if right is not None:
                entry["right_decision"] = round(right, 3)
                entry["fixed_design_share_same_power"] = round(_fixed_share(d, right, k == 1), 3)
            row[method] = entry
        designs[name] = row
    out["designs"] = designs
    out["races_per_design"] = RACES
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
