"""Red team: an agent's output costs it nothing and the harness gigabytes of memory and disk.

Attack: the agent's stdout and stderr are memory files (memfd) the harness reads back whole. The
agent seeks each to just below the 1 GiB file-size rlimit and writes one byte: a sparse file of
1 GiB made in microseconds. The harness then ``pread``s every byte into memory (``Captured.contents``),
hands the bytes to the driver and writes them out as real transcript files. Measured: one such
attempt took 35 s, 2.1 GB of harness RSS and 2.1 GB of disk beside the ledger; with ``--jobs 8`` that
is ~17 GB of RAM (the harness is killed for memory), and a few dozen attempts fill the ledger's disk
(then the ledger cannot be written: the run stops). Issue 12 item 6 fixed exactly this for the usage
file ("read it bounded, cap and say so in error"); the output streams are still unbounded below
the rlimit.

Expected: what the harness keeps (and holds in memory) of one stream is bounded well below the
rlimit (a few MiB, the rest dropped with a note in ``error``). Observed: the whole 256 MiB written
here is read into memory and written to ``agent.stdout``.

Suggested fix: read at most N MiB of each stream (head and tail), note the truncation in the row's
``error``; never read a memfd's size blindly (``st_size`` of a sparse file costs the agent nothing).
"""

from __future__ import annotations

# ruff: noqa: F811  (pytest fixtures imported from tests.harness.test_run)
from pathlib import Path

import pytest

from tests.harness.test_run import TIERS, outside_tmp, run  # noqa: F401  (fixture)

SPARSE = (
    "python -c \"import os; os.lseek(1, (256 << 20) - 1, 0); os.write(1, b'x')\"; touch done.txt"
)
KEPT_AT_MOST = 16 << 20


@pytest.mark.parametrize("tier", TIERS)
def test_a_sparse_stdout_is_not_kept_whole(outside_tmp: Path, tier: str) -> None:
    (row,) = run(outside_tmp, {"t": {"grader": "test -f done.txt"}}, SPARSE, tier)
    assert row["status"] == "passed"
    kept = outside_tmp / "out" / str(row["transcript"]) / "agent.stdout"
    size = kept.stat().st_size if kept.exists() else 0
    assert size <= KEPT_AT_MOST, f"kept {size >> 20} MiB of stdout the agent wrote for free"


@pytest.fixture
def small_ledger_dir(outside_tmp: Path) -> object:
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    out = outside_tmp / "out"
    out.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tbred-out", str(out)], check=True)
    yield out
    subprocess.run(["umount", "-l", str(out)], check=False)


@pytest.mark.parametrize("tier", TIERS)
def test_free_output_cannot_make_the_run_impossible_to_finish(
    outside_tmp: Path,
    small_ledger_dir: Path,
    tier: str,
) -> None:
    """The same sparse-output attack against the ledger's disk (a 32 MiB tmpfs here standing for a
    real disk that ~36 such attempts fill): each attempt hands the driver 64 MiB that it writes
    beside the ledger. Expected: the rows are written (output truncated, noted in ``error``) and
    the run finishes. Observed: ``sqlite3.OperationalError: database or disk is full`` — the run
    stops, and ``--resume`` stops the same way (the transcripts already written fill the disk)."""
    from tests.conftest import make_suite
    from trialbook.harness import RunOptions, run_suite

    suite = make_suite(
        outside_tmp / "suite",
        {"t": {"grader": "test -f done.txt"}, "u": {"grader": "test -f done.txt"}},
        k=1,
    )
    agent = (
        "python -c \"import os; os.lseek(1, (64 << 20) - 1, 0); os.write(1, b'x')\"; touch done.txt"
    )
    result = run_suite(
        RunOptions(
            suite=suite,
            agent=agent,
            ledger=small_ledger_dir / "ledger.db",
            system="s",
            sandbox=tier,
            grace_s=0.5,
        )
    )
    assert result.written == 2
