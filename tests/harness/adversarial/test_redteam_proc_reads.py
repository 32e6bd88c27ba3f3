"""Red team: what one ``read`` of a /proc file leaves out hides a process from the sweep.

The sweep finds an attempt's processes among the children of the harness and of its ancestors, by
the token in their environment (``/proc/PID/environ``). Where no cgroup holds the attempt (a harness
run by a user: the process tier's only sandbox there), a process the sweep does not find outlives
its attempt.

Attack 1: the agent leaves 800 orphans (``(sleep N &)``: each is re-parented to pid 1, or the nearest
subreaper, when its subshell exits), then one more that starts its own session. The sweep looks for
an attempt's processes among the children of the harness and of its ancestors, read from
``/proc/PID/task/TID/children``; that file is a seq_file, and one ``read`` of it returns one page,
about 680 pids. The first 680 orphans were found and killed, the process group took most of the
rest, and the one in its own session could outlive the attempt, token and all; the row said 682.

Attack 2: a process that keeps the token but puts it behind 1.2 MB of other variables, in its own
session, out of the workspace: one read of ``environ`` asked for 1 MiB, so its token was never seen.

Expected (docs/harness.md: every process carrying the attempt's token is killed when the attempt
ends, and counted in the row): no process is left, and the row counts each of them. The attempts
run without a cgroup here (as a user's harness would), so a harness run as root tests the sweep too.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.harness.test_run import CHECK, TIERS, alive_with, run, unique_seconds
from trialbook.harness.sandbox._cgroup import Cgroup


@pytest.fixture(autouse=True)
def _no_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep alone, as where no cgroup can be made: a cgroup would catch what it misses."""
    monkeypatch.setattr(Cgroup, "acquire", staticmethod(lambda **_: None))


def _left_behind(row: dict[str, object]) -> int | None:
    found = re.search(r"(\d+) process\(es\) the agent left behind", str(row["error"] or ""))
    return int(found.group(1)) if found else None


ORPHANS = 800


@pytest.mark.parametrize("tier", TIERS)
def test_an_orphan_past_the_first_page_of_children_is_still_swept(
    tmp_path: Path, tier: str
) -> None:
    many, hidden = unique_seconds(), unique_seconds()
    agent = (
        f"i=0; while [ $i -lt {ORPHANS} ]; do (sleep {many} &); i=$((i + 1)); done; "
        f"(setsid sleep {hidden} &); sleep 0.2; touch done.txt"
    )
    (row,) = run(tmp_path, {"t": CHECK}, agent, tier, timeout_s=60)
    assert row["passed"] is True, row
    assert not alive_with(hidden), "the orphan in its own session outlived its attempt"
    assert not alive_with(many)
    if tier == "process":  # bwrap: the sandbox's init kills them with its pid namespace
        assert _left_behind(row) == ORPHANS + 1, row


BEHIND = (
    "import os\n"
    "env = {f'PAD{i}': 'x' * 120_000 for i in range(10)}\n"  # one string may hold 128 KiB at most
    "env['TRIALBOOK_SANDBOX_TOKEN'] = os.environ['TRIALBOOK_SANDBOX_TOKEN']\n"  # last: past 1 MiB
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    os.chdir('/')\n"
    "    os.execve('/bin/sleep', ['sleep', 'SECS'], env)\n"
)


@pytest.mark.parametrize("tier", TIERS)
def test_a_token_behind_a_megabyte_of_environment_is_still_found(tmp_path: Path, tier: str) -> None:
    secs = unique_seconds()
    script = tmp_path / "behind.py"
    script.write_text(BEHIND.replace("SECS", secs))
    agent = f"{sys.executable} {script}; sleep 0.2; touch done.txt"
    (row,) = run(tmp_path, {"t": CHECK}, agent, tier)
    assert row["passed"] is True, row
    assert not alive_with(secs), "the process with its token past 1 MiB outlived its attempt"
    if tier == "process":
        assert _left_behind(row) == 1, row
