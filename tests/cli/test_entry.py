"""The console process keeps the memory a command frees for its next arrays (``cli.entry``): with
glibc's defaults, a freed 16 MB block is handed back and the next one is new pages from the
kernel, each a page fault (and on a VM whose host takes back guest memory, a host fault too)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

# a fresh interpreter: transparent huge pages off (so that faults count 4 KiB pages), then one
# 16 MB block made, filled and freed twice; prints the page faults of each
_PROBE = """
import ctypes, resource, sys
ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE
if sys.argv[1] == "entry":
    from trialbook.cli import entry
    sys.argv = ["trialbook", "--version"]
    try:
        entry()
    except SystemExit:
        pass
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def block():
    before = faults()
    b = bytearray(16 << 20)  # zeroed by the allocator or the kernel: every page touched
    b[::4096] = b"\\1" * len(b[::4096])
    del b
    return faults() - before
print(block(), block())
"""


def _faults(mode: str) -> tuple[int, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[-2]), int(out[-1])


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "mallopt"),
    reason="the tuning is glibc's mallopt; other allocators keep their own policy",
)
def test_the_console_process_reuses_a_freed_block_instead_of_new_pages() -> None:
    pages = (16 << 20) // 4096
    first, second = _faults("plain")
    # glibc's default, shown so that the test can tell the two apart: new pages both times
    assert first > pages // 2, first
    assert second > pages // 2, second
    first, second = _faults("entry")
    assert first > pages // 2, first  # the first block is new memory either way
    assert second < pages // 20, second  # the second is the first's, reused
