"""A SIMULATED agent for the demo: ``python -m trialbook.demo.agent baseline|candidate``.

It calls no model. It follows the agent contract like a real agent (reads the task id, attempt and
seed from the environment, edits files in its working directory, appends usage lines to
``$TRIALBOOK_USAGE_FILE``), and decides what to do by seeded chance: apply the task's correct fix, or
a plausible wrong one, and now and then hang past the timeout or leave a child process running (the
harness must cope with both). The candidate profile succeeds a little more often than the baseline.
Each system draws from its own random stream, seeded by (system, task, attempt seed), as two real
systems' attempts are independent draws; what they share is each task's difficulty (its ``EASE``),
so the two systems' outcomes agree per task about as often as real systems' do, and the pairing
gain the demo shows is the size real comparisons get, not more.

The fixes are the suite's own files: the correct fix is the task's ``reference/``, the plausible
wrong one its ``decoys/plausible/`` (the grader-check proves the first passes and the second fails).
The agent runs in the sandbox, where the suite is hidden, so the demo hands it a copy of only those
two folders per task (never the oracle), ``<task>/reference/`` and ``<task>/decoys/plausible/``, in a
folder it names on the agent's command line (``... baseline MATERIAL``: the sandbox shows a folder
the command names, read-only), or else in ``$TRIALBOOK_DEMO_MATERIAL``. What it then does is a :class:`trialbook.harness.testing.Attempt`.
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trialbook.harness.testing import Attempt, perform

__all__ = ["EASE", "MATERIAL_VAR", "PROFILES", "Profile", "decide", "main"]

MATERIAL_VAR = "TRIALBOOK_DEMO_MATERIAL"
"""The environment variable that names the folder of fixes (reference/ and decoys/ per task)."""


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
    """Simulated dollars per output token."""


PROFILES = {
    "baseline": Profile(lift=0.0, hang=0.05, leave_child=0.10, price_in=3e-6, price_out=15e-6),
    "candidate": Profile(lift=0.12, hang=0.03, leave_child=0.05, price_in=3e-6, price_out=15e-6),
}

EASE: dict[str, float] = {
    "repair-median": 0.75,
    "repair-slugify": 0.6,
    "repair-binary-search": 0.55,
    "repair-duration": 0.8,
    "repair-word-count": 0.7,
    "repair-leap-year": 0.8,
    "repair-roman": 0.5,
    "greenfield-palindrome": 0.7,
    "greenfield-chunk": 0.75,
    "greenfield-flatten": 0.65,
    "greenfield-rle": 0.55,
    "greenfield-snake-case": 0.5,
    "greenfield-merge-intervals": 0.6,
    "greenfield-caesar": 0.7,
    "regression-config-comments": 0.6,
    "regression-price-negative": 0.7,
    "regression-stack-peek": 0.85,
    "regression-csv-quotes": 0.4,
    "regression-paginate": 0.65,
    "regression-dedupe-key": 0.55,
    "regression-cache-ttl": 0.45,
    "repair-title-case": 0.6,
}
"""How often the simulated baseline applies each task's correct fix (the candidate a little more)."""


@dataclass(frozen=True)
class Decision:
    """What one simulated attempt does, drawn from its seeds."""

    correct: bool
    """The correct fix (else the plausible wrong one)."""
    sleep_s: float
    usage: tuple[dict[str, Any], ...]
    leave_child: bool
    hang: bool


def decide(name: str, task_id: str, seed: str) -> Decision:
    """The seeded choices of profile ``name`` on one task at one seed, all from the stream seeded
    by (name, task, seed): another system's draws never enter (the draws keep their order)."""
    profile = PROFILES[name]
    # the system's own stream; the task's difficulty (EASE) is what both systems share
    own = random.Random(f"{name}:{task_id}:{seed}")
    correct = own.random() < min(0.97, EASE[task_id] + profile.lift)
    sleep_s = own.uniform(0.05, 0.3)  # "thinking"
    usage = []
    for _ in range(own.randint(1, 4)):
        tokens_in = own.randint(800, 4000)
        tokens_out = own.randint(60, 600)
        usage.append(
            {
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "cost": round(tokens_in * profile.price_in + tokens_out * profile.price_out, 6),
                "tool_calls": own.randint(1, 3),
                "cache_hit": own.random() < 0.3,
            }
        )
    leave_child = own.random() < profile.leave_child
    hang = own.random() < profile.hang
    return Decision(correct, sleep_s, tuple(usage), leave_child, hang)


def main(argv: list[str] | None = None) -> int:
    """Run one simulated attempt in the current directory."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2) or args[0] not in PROFILES:
        usage = f"usage: python -m trialbook.demo.agent {{{'|'.join(PROFILES)}}} [MATERIAL]"
        print(usage, file=sys.stderr)
        return 2
    name = args[0]
    task_id = os.environ["TRIALBOOK_TASK_ID"]
    seed = os.environ["TRIALBOOK_SEED"]
    material = Path(args[1] if len(args) == 2 else os.environ.get(MATERIAL_VAR, "")) / task_id
    if task_id not in EASE or not (material / "reference").is_dir():
        print(f"simulated agent: no idea how to do {task_id!r} (${MATERIAL_VAR})", file=sys.stderr)
        return 1
    d = decide(name, task_id, seed)
    fix = material / ("reference" if d.correct else "decoys/plausible")
    files = ", ".join(sorted(p.relative_to(fix).as_posix() for p in fix.rglob("*") if p.is_file()))
    return perform(
        Attempt(
            say=f"SIMULATED agent ({name}) on {task_id}, seed {seed}",
            sleep_s=d.sleep_s,
            usage=d.usage,
            leave_process=d.leave_child,
            hang=d.hang,
            copy_from=str(fix),
            said_after=f"applied the {'correct' if d.correct else 'plausible but wrong'} fix to {files}",
        )
    )


if __name__ == "__main__":
    sys.exit(main())
