"""A SIMULATED agent for the demo: ``python -m trialbook.demo.agent baseline|candidate``.

It calls no model. It follows the agent contract like a real agent (reads the task id, attempt and
seed from the environment, edits files in its working directory, appends usage lines to
``$TRIALBOOK_USAGE_FILE``), and decides what to do by seeded chance: apply the task's correct fix, or
a plausible wrong one, and now and then hang past the timeout or leave a child process running (the
harness must cope with both). The candidate profile succeeds a little more often than the baseline.
Both profiles draw the same random number for the same task and seed, as two real systems face the
same task difficulty, so the paired comparison has something to pair.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from trialbook.demo._tasks import DEMO_TASKS, apply_edits

__all__ = ["PROFILES", "Profile", "main"]


@dataclass(frozen=True)
class Profile:
    """How a simulated system behaves."""

    lift: float
    """Added to each task's chance of the correct fix."""
    hang: float
    """Chance of hanging past any timeout."""
    leave_child: float
    """Chance of leaving a background process behind."""
    price_in: float
    """Simulated dollars per input token."""
    price_out: float


PROFILES = {
    "baseline": Profile(lift=0.0, hang=0.05, leave_child=0.10, price_in=3e-6, price_out=15e-6),
    "candidate": Profile(lift=0.12, hang=0.03, leave_child=0.05, price_in=3e-6, price_out=15e-6),
}


def _usage(rng: random.Random, profile: Profile, path: Path, steps: int) -> None:
    import json

    with path.open("a") as fh:
        for _ in range(steps):
            tokens_in = rng.randint(800, 4000)
            tokens_out = rng.randint(60, 600)
            line = {
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "cost": round(tokens_in * profile.price_in + tokens_out * profile.price_out, 6),
                "tool_calls": rng.randint(1, 3),
                "cache_hit": rng.random() < 0.3,
            }
            fh.write(json.dumps(line) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run one simulated attempt in the current directory."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in PROFILES:
        print(f"usage: python -m trialbook.demo.agent {{{'|'.join(PROFILES)}}}", file=sys.stderr)
        return 2
    name = args[0]
    profile = PROFILES[name]
    task_id = os.environ["TRIALBOOK_TASK_ID"]
    seed = os.environ["TRIALBOOK_SEED"]
    task = next((t for t in DEMO_TASKS if t.id == task_id), None)
    if task is None:
        print(f"simulated agent: no idea how to do {task_id!r}", file=sys.stderr)
        return 1
    shared = random.Random(f"{task_id}:{seed}")  # the same draw for both systems: task difficulty
    own = random.Random(f"{name}:{task_id}:{seed}")
    correct = shared.random() < min(0.97, task.ease + profile.lift)
    print(f"SIMULATED agent ({name}) on {task_id}, seed {seed}")
    time.sleep(own.uniform(0.05, 0.3))  # "thinking"
    usage = Path(os.environ["TRIALBOOK_USAGE_FILE"])
    _usage(own, profile, usage, steps=own.randint(1, 4))
    if own.random() < profile.leave_child:
        subprocess.Popen(
            ["sleep", "120"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        print("left a background process running")
    if own.random() < profile.hang:
        print("hanging (the harness must stop this at the timeout)", flush=True)
        time.sleep(3600)
    edits = task.fix if correct else task.wrong
    current = {name: Path(name).read_text() for name in task.files}
    for file, text in apply_edits(current, edits).items():
        Path(file).write_text(text)
    print(
        f"applied the {'correct' if correct else 'plausible but wrong'} fix to {', '.join(task.files)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
