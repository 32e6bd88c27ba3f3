"""The run's watchdog:
``python -m trialbook.harness.sandbox._watchdog HARNESS_PID TOKEN_PREFIX [SCRATCH]``.

Started by the driver in its own session, it waits for the harness process to end (a pidfd, so no
polling) and then kills every process still carrying the run's sandbox token. A harness that ends
normally has already cleaned up and stops the watchdog; one killed with SIGKILL leaves the attempts'
processes behind, and this is what kills them at once (the bwrap tier also has --die-with-parent),
empties the harness's cgroups and removes the run's scratch folder (workspaces, prompts, oracle
copies). Killed together with the harness, it leaves those to the next run or resume.
"""

from __future__ import annotations

import os
import select
import sys
import time
from pathlib import Path

from trialbook.harness.sandbox._cgroup import clean_stale
from trialbook.harness.sandbox._fs import remove_tree
from trialbook.harness.sandbox._sweep import find_processes, sweep


def main(argv: list[str]) -> int:
    """Wait for the harness, then sweep its run's processes until none is left."""
    harness, prefix = int(argv[0]), argv[1]
    try:
        fd = os.pidfd_open(harness)
    except ProcessLookupError:
        fd = None
    if fd is not None:
        select.select([fd], [], [])
        os.close(fd)
    for _ in range(50):
        sweep(prefix, prefix=True)
        if not find_processes(prefix, prefix=True):
            break
        time.sleep(0.05)
    clean_stale(harness)
    if len(argv) > 2:
        remove_tree(Path(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
