"""Red team: a deep folder tree in the workspace crashes the run, and then every later run.

Attack: the agent makes 3,000 nested folders in its workspace (``mkdir d; cd d`` in a loop: one
second). Deleting the attempt folder, ``_attempt._remove`` calls ``shutil.rmtree``, which recurses
once per level in Python: ``RecursionError``, which is not an ``OSError``, so ``ignore_errors`` does not
cover it. Observed, in both tiers, as root and as an unprivileged user:

1. the worker raises, the driver re-raises: ``trialbook run`` dies with a traceback, no row;
2. the run's own clean-up (``shutil.rmtree(scratch)`` in ``run_suite``, which then skips
   ``Cgroup.release_idle`` and stopping the watchdog) and the watchdog's die the same way, so the
   scratch folder stays in ``/tmp``;
3. every later ``trialbook run`` or ``--resume`` ON THE MACHINE (any user's, any suite's, once the
   first harness is gone) dies at its start in ``_clean_stale_runs`` (``rmtree`` of that stale folder),
   until someone deletes it by hand.

Expected (docs/harness.md: whatever the agent does is data in its row; a stale scratch folder is
cleared by the next run): a row, the run finishes (exit 0), and the next run starts.

Both runs are ``trialbook run`` processes with ``TMPDIR`` set to a folder of this test, so a failure
here cannot break other runs on the machine; the folder is removed with ``rm -rf``.
Suggested fix: remove attempt and scratch folders without recursion (``rm -rf``, or an iterative
walk with ``dir_fd``), and catch any exception there: a folder that cannot be removed is a note,
never a crash.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_suite
from tests.harness.test_run import TIERS, outside_tmp, unique_run_id  # noqa: F401  (fixture)
from trialbook.ledger import ledger_rows, read_ledger

DEEP = "python -c \"import os\nfor _ in range(3000):\n    os.mkdir('d'); os.chdir('d')\n\""


@pytest.fixture
def own_tmpdir(outside_tmp: Path) -> Any:
    scratch = outside_tmp / "scratch"
    scratch.mkdir()
    yield scratch
    subprocess.run(["rm", "-rf", str(scratch)], check=False)


def _cli(
    suite: Path, ledger: Path, agent: str, tier: str, tmpdir: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trialbook", "run", str(suite), "--agent", agent,
         "--ledger", str(ledger), "--system", "s", "--run-id", unique_run_id(), "--sandbox", tier],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("tier", TIERS)
def test_a_deep_tree_in_the_workspace_is_the_agents_data(
    outside_tmp: Path,
    own_tmpdir: Path,
    tier: str,
) -> None:
    suite = make_suite(outside_tmp / "suite", {"t": {"grader": "true"}}, k=1)
    ledger = outside_tmp / "out" / "ledger.db"
    first = _cli(suite, ledger, DEEP, tier, own_tmpdir)
    second = _cli(suite, ledger, "true", tier, own_tmpdir)  # a later run on the same machine
    assert (first.returncode, second.returncode) == (0, 0), (
        f"first run: {first.stderr[-300:]}\nlater run: {second.stderr[-300:]}"
    )
    assert len(list(ledger_rows(read_ledger(ledger)))) == 2
