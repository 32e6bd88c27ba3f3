"""Red team (critical): run as root, the bwrap tier leaves host-wide sysctls writable.

Attack: the sandbox's user is uid 0 of a user namespace that maps it to the host's uid 0, with every
capability dropped. ``/proc/sys`` is the fresh ``--proc`` mount, read-write: bwrap makes ``/proc/irq``
and ``/proc/bus`` read-only here but not ``/proc/sys`` (see ``/proc/self/mountinfo`` inside). The
kernel lets euid 0 write most of ``/proc/sys/kernel`` and ``/proc/sys/vm`` by file mode alone, no
capability needed, and those are global, not per namespace. Verified by hand: the agent wrote
``kernel.core_pattern`` (its current value back, so nothing changed). With
``kernel.core_pattern = |/tmp/trialbook-run-.../workspace/x`` and a crash of its own, the kernel
starts ``x`` as root in the HOST's namespaces: a full escape (oracle, ledger, every file, other
attempts), beyond the capability tests of issue 12, item 1. ``vm.drop_caches`` and the other ``vm``
and ``kernel`` knobs are open too.

Expected (docs/harness.md: "no capability, also when the harness runs as root: mount, umount,
remount of ``/`` read-write, raw and packet sockets, a nested user namespace all fail"; the sandbox
reaches nothing outside it): ``/proc/sys`` cannot be opened for writing. Observed: it can.

This test only OPENS the files for writing (permission is checked at open) and writes nothing.
Suggested fix: ``--ro-bind /proc/sys /proc/sys`` (and ``/proc/sysrq-trigger`` where present) after
``--proc /proc`` in ``wrap``; better, when the harness is root, run the sandbox as an unprivileged
host uid (a mapped sub-uid, or ``setpriv --reuid nobody`` before bwrap), so that no file owned by
host root is writable by owner mode.
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
import os
from pathlib import Path

import pytest

from tests.harness.test_run import CHECK, TIERS, outside_tmp, run, transcript  # noqa: F401

HERE = Path(__file__).resolve().parent
BWRAP = [t for t in TIERS if (getattr(t, "values", None) or (t,))[0] == "bwrap"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the hole is euid 0's: run as root (CI does)")
@pytest.mark.parametrize("tier", BWRAP)
def test_a_root_agent_cannot_open_host_sysctls_for_writing(outside_tmp: Path, tier: str) -> None:
    script = outside_tmp / "agent" / "sysctl_open.py"
    script.parent.mkdir()
    script.write_text((HERE / "sysctl_open.py").read_text())
    (row,) = run(outside_tmp, {"t": CHECK}, f"python {script}", tier)
    out = transcript(outside_tmp, row)
    assert "held: /proc/sys/kernel/core_pattern" in out or "WRITABLE" not in out, out
    assert "WRITABLE" not in out, out
