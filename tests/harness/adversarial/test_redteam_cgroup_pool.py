"""Red team: the cgroup pool carries one command's memory charge into the next command's cgroup.

Attack (process tier, where the harness can make cgroups: a root harness, CI): attempt A writes a
file into a tmpfs that outlives it (``/dev/shm``; or ``/tmp`` where that is a tmpfs, as on many
distributions) and exits. Its processes are gone, so its cgroup is "seen empty" and goes back to
the pool — but tmpfs pages stay charged to the memory cgroup that first touched them. The next
command that ``Cgroup.acquire`` hands that cgroup to (another attempt, another task, or the grader)
starts with A's charge against its ``memory.max`` / ``memory.limit_in_bytes`` and is OOM-killed
("agent exited with 137") well below the cap it was promised. An honest agent that leaves a cache
in a tmpfs ``/tmp`` does the same, slowly, to every later attempt that reuses the cgroup.

Expected (docs/harness.md, "Cgroups": every command gets "8 GiB of memory in all"; "only a cgroup
seen empty after its command is reused, and nothing of one command is ever in the next one's
cgroup"): the second command, which needs 40 MiB under a 64 MiB cap, runs. Observed: it is killed
(exit 137) while A's 50 MiB file exists, and runs once the file is deleted.

The test drives ``run_command`` directly with a 64 MiB cap (the harness's own is 8 GiB, too large
to fill in a test). Suggested fix: reuse a pooled cgroup only when its memory usage
(``memory.current`` / ``memory.usage_in_bytes``) is back to ~0 (else remove it and make a fresh
one), or give each command a fresh memory cgroup and pool only the pids one.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from trialbook.harness.sandbox._cgroup import Cgroup, available, not_capped
from trialbook.harness.sandbox._process import run_command
from trialbook.harness.sandbox._sweep import TOKEN_VAR

ALLOCATE = (
    "python3 -c 'b = bytearray(40 << 20); b[::4096] = b\"x\" * len(b[::4096])'"  # touch 40 MiB
)


def _run(script: str, memory_mb: int = 64) -> int | None:
    token = f"redteam-{uuid.uuid4().hex}"
    out, err = os.memfd_create("out"), os.memfd_create("err")
    try:
        outcome = run_command(
            ["/bin/sh", "-c", script],
            cwd=Path("/"),
            env={"PATH": "/usr/bin:/bin", TOKEN_VAR: token},
            timeout_s=20,
            stdout=out,
            stderr=err,
            token=token,
            memory_mb=memory_mb,
        )
    finally:
        os.close(out)
        os.close(err)
    return outcome.exit_code


@pytest.fixture
def shm_file() -> object:
    if not available() or any("total memory" in n for n in not_capped()):
        pytest.skip("needs writable cgroups with a memory controller (root, CI)")
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm")
    path = Path("/dev/shm") / f"redteam-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)
    Cgroup.release_idle()


def test_a_pooled_cgroup_does_not_carry_the_last_commands_memory(shm_file: Path) -> None:
    assert _run(ALLOCATE) == 0, "40 MiB fit in a 64 MiB cgroup"
    assert _run(f"head -c 50M /dev/zero > {shm_file}") == 0  # attempt A: 50 MiB left in a tmpfs
    code = _run(ALLOCATE)  # attempt B, in the cgroup A left to the pool
    assert code == 0, f"the next command was killed (exit {code}) by the charge A left behind"
