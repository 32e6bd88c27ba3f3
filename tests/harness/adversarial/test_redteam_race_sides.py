"""Red team (issue 27, item 14): in a ``race``, the agent must not be able to tell which side it is.

Attack: the agent reads all it can of its surroundings, its environment, its working folder, the
prompt and usage paths, its HOME and TMPDIR, and in the bwrap tier the mounts it sees
(``/proc/self/mountinfo``), looking for the race id, the run id or the words ``baseline`` and
``candidate`` (the sandbox token was ``RACE_ID-candidate/...``). tests/race/test_race.py checks the
token in the process tier as root; this checks everything the agent is given, in both tiers, with
the harness run as root and as the unprivileged user.

Expected: no giveaway anywhere, and for each task and attempt the two sides see the same variables
with values of the same shape (random folder names and keys differ, as they do between any two
attempts, but neither their length nor their place).
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run and _whom)
import re
import sqlite3
import uuid

import pytest

from tests.conftest import make_suite
from tests.harness.adversarial._whom import Harness, harness  # noqa: F401  (fixture)
from tests.harness.test_run import TIERS, outside_tmp  # noqa: F401  (fixture)

LOOK = (
    'echo "pwd=$(pwd)"; env | sort; echo "--- prompt"; cat "$TRIALBOOK_PROMPT_FILE"; '
    'echo "--- mounts"; [ -r /proc/self/mountinfo ] && [ "$(cat /proc/1/comm)" = bwrap ] '
    '&& cut -d" " -f4,5 /proc/self/mountinfo; true'
)
"""Everything the agent is told, and in the bwrap tier every mount it sees (in the process tier
the host's mounts, the same for both sides)."""


def _shape(text: str) -> str:
    """``text`` with every letter, digit and underscore made ``x``: two attempts' random names (mkdtemp's eight
    characters, keyed digests of the same length) then read alike, anything longer or elsewhere
    (a ``-candidate`` suffix) does not."""
    return re.sub(r"[A-Za-z0-9_]", "x", text)


@pytest.mark.parametrize("tier", TIERS)
def test_the_two_sides_see_the_same_things(harness: Harness, tier: str) -> None:
    ids = ["t0", "t1"]
    work = harness.work
    suite = make_suite(work / "s", {t: {"grader": "test -f done.txt"} for t in ids}, k=2)
    ledger = work / "race.db"
    race_id = f"test-{uuid.uuid4().hex}"
    args = [
        "race", str(suite), "--baseline", LOOK, "--candidate", f"{LOOK}; touch done.txt",
        "--ledger", str(ledger), "--jobs", "1", "--sandbox", tier, "--race-id", race_id,
    ]  # fmt: skip
    harness.give(work)
    code = harness.trialbook(args)
    assert code in (0, 1), harness.output
    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT run_id, task_id, attempt_index, transcript FROM attempts")
        seen = {(r, t, a): (work / kept / "agent.stdout").read_text() for r, t, a, kept in rows}
    runs = sorted({run_id for run_id, _, _ in seen})
    assert len(runs) == 2, runs
    for (_, task, _), told in seen.items():
        assert "TRIALBOOK_SANDBOX_TOKEN=" in told, told
        assert f"TRIALBOOK_TASK_ID={task}" in told, told
        for giveaway in (race_id, *runs, "baseline", "candidate"):
            assert giveaway not in told, (giveaway, told)
    pairs = {(t, a) for _, t, a in seen}
    assert pairs, seen
    for task, attempt in pairs:
        one, other = (
            seen[(run_id, task, attempt)] for run_id in runs if (run_id, task, attempt) in seen
        )
        assert _shape(one) == _shape(other), (one, other)
