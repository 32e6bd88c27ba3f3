"""The run's watchdog: ``python -m trialbook.harness._watchdog HARNESS_PID TOKEN_PREFIX``.

Started by the driver in its own session, it waits for the harness process to end (a pidfd, so no
polling) and then kills every process still carrying the run's sandbox token. A harness that ends
normally has already cleaned up and stops the watchdog; one killed with SIGKILL leaves the attempts'
processes behind, and this is what kills them at once (the bwrap tier also has --die-with-parent).
"""

from __future__ import annotations

import os
import select
import sys
import time

from trialbook.harness._process import find_processes, sweep


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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
