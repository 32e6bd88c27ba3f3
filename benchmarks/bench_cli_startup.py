"""`trialbook --help` start-up time vs a bare interpreter (`python -c pass`). Target: under 0.3 s."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time


def run(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ours, bare = [], []
    for _ in range(10):
        ours.append(run([sys.executable, "-m", "trialbook", "--help"]))
        bare.append(run([sys.executable, "-c", "pass"]))
    print(
        json.dumps(
            {
                "benchmark": "cli_help_startup",
                "ours_s_median": round(statistics.median(ours), 4),
                "bare_python_s_median": round(statistics.median(bare), 4),
                "ratio": round(statistics.median(ours) / statistics.median(bare), 2),
                "target_ours_s_max": 0.3,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
