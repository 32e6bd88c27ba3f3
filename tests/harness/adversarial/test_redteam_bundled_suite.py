"""Red team: in the bwrap tier the demo's agents can read the demo suite's oracles.

Attack: ``trialbook demo`` (``trialbook.demo._run.run_demo``) copies the bundled suite
(``trialbook/demo/suite``, inside the package) to ``OUT/suite``, freezes the copy and runs it. The
harness hides the suite it runs (``OUT/suite``), but the bwrap tier shows the Python running
trialbook with its import path read-only — and the package's own ``demo/suite`` is there, not
hidden, oracles included. An agent does ``import trialbook.demo`` (or reads any ``site-packages``
path) and reads ``tasks/$TRIALBOOK_TASK_ID/oracle/test_*.py`` of the task it is solving. The same
holds for any suite that is a copy of files in a shown folder (a benchmark installed with pip, a suite
under ``/opt`` or ``/usr/share``).

Expected (docs/harness.md: "suite folder (so the oracle) ... not there (an empty tmpfs over one that
a shown folder contains, as the demo suite inside an editable source tree)"): the oracle of the task
being run is not readable in the sandbox. Observed: the agent prints it.

The test runs the demo's way (bundled suite copied, frozen, run; smoke subset, k = 1). Suggested
fix: hide the bundled suite folder too (``trialbook.demo._run.SUITE_DIR``) in every run, or more
generally refuse/hide a suite whose task files also exist (same digest) under a shown folder;
at least document that a suite copied out of a shown folder is readable at its source.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import shutil
from pathlib import Path

import pytest

from tests.harness.test_run import TIERS, outside_tmp, transcript  # noqa: F401  (fixture)
from trialbook.demo._run import SUITE_DIR
from trialbook.harness import RunOptions, run_suite
from trialbook.ledger import ledger_rows, read_ledger
from trialbook.suite import LOCK_NAME, freeze, load_suite, write_lock

BWRAP = [t for t in TIERS if (getattr(t, "values", None) or (t,))[0] == "bwrap"]

READ_OWN_ORACLE = (
    'python -c "import os, pathlib, trialbook.demo as d; '
    "o = pathlib.Path(d.__file__).parent / 'suite' / 'tasks' / os.environ['TRIALBOOK_TASK_ID'] / 'oracle'; "
    "[print(p.read_text()) for p in sorted(o.glob('test_*.py'))]\""
)


@pytest.mark.parametrize("tier", BWRAP)
def test_the_demo_agents_cannot_read_the_bundled_oracles(outside_tmp: Path, tier: str) -> None:
    suite_dir = outside_tmp / "out" / "suite"
    shutil.copytree(SUITE_DIR, suite_dir, ignore=shutil.ignore_patterns(LOCK_NAME, "__pycache__"))
    toml = suite_dir / "suite.toml"
    toml.write_text(
        toml.read_text()
        .replace("k = 5", "k = 1")
        .replace("seeds = [11, 12, 13, 14, 15]", "seeds = [11]")
    )
    suite = load_suite(suite_dir)
    write_lock(suite, freeze(suite))
    ledger = outside_tmp / "out" / "ledger.db"
    run_suite(
        RunOptions(
            suite=suite_dir,
            agent=READ_OWN_ORACLE,
            ledger=ledger,
            system="reader",
            sandbox=tier,
            subset="smoke",
            grace_s=0.5,
        )
    )
    rows = list(ledger_rows(read_ledger(ledger)))
    assert rows
    for row in rows:
        out = transcript(outside_tmp, row)
        assert "unittest" not in out, (
            f"{row['task_id']}: the agent printed its oracle:\n{out[:300]}"
        )
