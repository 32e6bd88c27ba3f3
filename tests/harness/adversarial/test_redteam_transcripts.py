"""Red team: earlier runs' transcripts are readable in the bwrap tier (an oracle leak).

Attack: the usual project layout, a folder holding the ``.venv`` trialbook runs from, the agent
script and the ledger (``proj/.venv``, ``proj/agent.py``, ``proj/ledger.db``). The Python lives in
the ledger's folder, so ``_hidden`` does not hide that folder and hides only *this* run's transcript
folder (``ledger.transcripts/RUN_ID``); the agent command names ``proj/agent.py``, so ``proj`` is
shown read-only. Every earlier run's ``ledger.transcripts/OTHER_RUN/...`` is then readable, and a
grader that prints what it expected (``expected 42, got 41``, a diff, or the answer itself, as here)
hands the oracle to every later system.

Expected (docs/harness.md: "the bwrap tier hides only the transcripts there, not the whole folder";
the table: "suite folder (so the oracle), ledger folder, transcripts and other attempts not there"):
no transcript of any run is visible inside the sandbox, and the second system fails.
Observed: the agent finds run a's ``grader.stdout``, copies the oracle's answer, and passes.

Suggested fix: hide the whole ``<ledger stem>.transcripts`` folder (every run), not
``transcripts/RUN_ID``.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import ROOT, make_suite
from tests.harness.test_run import TIERS, outside_tmp  # noqa: F401  (fixture)
from trialbook.harness import RunOptions, run_suite
from trialbook.ledger import ledger_rows, read_ledger

BWRAP = [t for t in TIERS if (getattr(t, "values", None) or (t,))[0] == "bwrap"]


@pytest.fixture
def project() -> object:
    """The ledger and the agent script in the folder that holds the .venv (the worktree root)."""
    tag = uuid.uuid4().hex[:10]
    yield ROOT, tag
    for path in ROOT.glob(f"rt-{tag}*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@pytest.mark.skipif(
    not Path(sys.prefix).resolve().is_relative_to(ROOT),
    reason="needs the test Python inside the worktree (the project layout)",
)
@pytest.mark.parametrize("tier", BWRAP)
def test_earlier_runs_transcripts_are_not_readable(
    outside_tmp: Path,
    project: tuple[Path, str],
    tier: str,
) -> None:
    root, tag = project
    ledger = root / f"rt-{tag}.db"
    agent_py = root / f"rt-{tag}-agent.py"
    agent_py.write_text(
        "import glob, pathlib\n"
        f"hits = glob.glob({str(root)!r} + '/rt-{tag}.transcripts/*/t/*/grader.stdout')\n"
        "print('seen', hits)\n"
        "for h in hits:\n"
        "    pathlib.Path('answer.txt').write_text(open(h).read())\n"
    )
    grader = (
        'cat "$TRIALBOOK_ORACLE_DIR/answer.txt"; '  # a grader that shows what it expected
        'cmp -s answer.txt "$TRIALBOOK_ORACLE_DIR/answer.txt"'
    )
    suite = make_suite(
        outside_tmp / "suite",
        {"t": {"grader": grader, "oracle": {"answer.txt": "the-answer-42\n"}}},
        k=1,
    )
    for system, agent in (("a", "true"), ("b", f"python {agent_py}")):
        run_suite(
            RunOptions(
                suite=suite,
                agent=agent,
                ledger=ledger,
                system=system,
                sandbox=tier,
                run_id=f"rt-{tag}-{system}",
                grace_s=0.5,
            )
        )
    rows = {r["system"]: r for r in ledger_rows(read_ledger(ledger))}
    assert rows["a"]["status"] == "failed"
    assert rows["b"]["status"] == "failed", "system b read run a's grader transcript (the oracle)"
