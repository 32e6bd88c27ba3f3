"""The bwrap tier against a hostile agent run as root (issue 12, item 1): no capability is left, so
mount, umount, a remount of / read-write, raw sockets, a nested user namespace, the hidden oracle
and the ledger all fail from inside. CI runs as root; elsewhere the test runs as whoever runs it
(an unprivileged user never had those capabilities, and the same attacks must fail)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tests.harness.test_run import TIERS, outside_tmp, run, transcript
from trialbook.harness._sandbox import Limits, SandboxSpec, wrap

__all__ = ["outside_tmp"]  # the fixture, imported for its use here

ATTACKS = Path(__file__).parent / "adversarial" / "root_attacks.py"
BWRAP = [t for t in TIERS if getattr(t, "values", (t,))[0] == "bwrap"]


@pytest.mark.parametrize("tier", BWRAP)
def test_a_root_agent_keeps_no_capability_and_reaches_nothing(outside_tmp: Path, tier: str) -> None:
    tmp_path = outside_tmp
    suite, ledger = tmp_path / "suite", tmp_path / "out" / "ledger.db"
    host_file = tmp_path / "written-from-the-sandbox.txt"
    agent = f"{sys.executable} {ATTACKS} {suite} {ledger} {host_file}"
    (row,) = run(
        tmp_path,
        {"t": {"grader": "test -f done.txt", "oracle": {"answer.txt": "the-answer-42\n"}}},
        agent,
        tier,
    )
    out = transcript(tmp_path, row)
    assert row["passed"] is True, (row, out)
    assert out.count("held:") == 13, out
    assert "ESCAPE" not in out, out
    assert not host_file.exists()
    with sqlite3.connect(ledger) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert "hostile" not in tables


def test_every_bwrap_command_drops_all_capabilities() -> None:
    argv = wrap("bwrap", "true", SandboxSpec(workspace=Path("/w")), {}, Limits(cpu_s=1))
    drop = argv.index("--cap-drop")
    assert argv[drop + 1] == "ALL"
    assert drop < argv.index("--")
