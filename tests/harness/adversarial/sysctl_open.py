"""Open host-wide sysctls for writing inside the sandbox, write NOTHING, and say which opened.

``python sysctl_open.py`` prints ``WRITABLE: PATH`` or ``held: PATH`` per file and writes done.txt.
The kernel checks write permission at open, so a successful open is the proof; nothing is changed.
"""

import os
from pathlib import Path

for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches"):
    try:
        os.close(os.open(path, os.O_WRONLY))
        print(f"WRITABLE: {path}", flush=True)
    except OSError as exc:
        print(f"held: {path} ({exc.strerror})", flush=True)
Path("done.txt").write_text("done\n")
