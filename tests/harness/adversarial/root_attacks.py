"""A hostile agent: everything a root (or any) process could try to get out of its sandbox.

``python root_attacks.py SUITE LEDGER HOST_FILE`` prints ``ESCAPE: what`` for every attack that
worked and ``held: what`` for every one that did not; it always exits 0 and writes done.txt.
"""

from __future__ import annotations

import ctypes
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND, MNT_DETACH = 32, 4096, 2


def mount(src: str, target: str, fstype: str | None, flags: int) -> bool:
    fs = fstype.encode() if fstype else None
    return libc.mount(src.encode(), target.encode(), fs, flags, None) == 0


def umount(target: str) -> bool:
    return libc.umount2(target.encode(), MNT_DETACH) == 0


def report(what: str, escaped: bool) -> None:
    print(f"{'ESCAPE' if escaped else 'held'}: {what}", flush=True)


def main(suite: str, ledger: str, host_file: str) -> None:
    oracle = os.path.join(suite, "tasks", "t", "oracle", "answer.txt")
    report("umount the tmpfs over the suite", umount(suite))
    try:
        report("read the oracle", "the-answer-42" in Path(oracle).read_text())
    except OSError:
        report("read the oracle", False)
    report("umount /proc", umount("/proc"))
    report("mount a tmpfs", mount("none", "/mnt", "tmpfs", 0))
    report("bind-mount /", mount("/", "/mnt", None, MS_BIND))
    report("remount / read-write", mount("none", "/", None, MS_REMOUNT))
    try:
        with open(host_file, "w") as f:
            f.write("written from the sandbox\n")
        report("write a host file", True)
    except OSError:
        report("write a host file", False)
    for family, kind, name in (
        (socket.AF_INET, socket.SOCK_RAW, "raw socket"),
        (socket.AF_PACKET, socket.SOCK_RAW, "packet socket"),
    ):
        try:
            socket.socket(family, kind, 1 if family == socket.AF_INET else 0).close()
            report(name, True)
        except OSError:
            report(name, False)
    report("umount the tmpfs over the ledger", umount(os.path.dirname(ledger)))
    try:
        if not os.path.exists(ledger):  # hidden: a new file here would be in a private tmpfs
            raise sqlite3.OperationalError("no ledger")
        db = sqlite3.connect(ledger, timeout=1)
        db.execute("CREATE TABLE hostile(x)")
        db.commit()
        report("write the ledger", True)
    except sqlite3.Error:
        report("write the ledger", False)
    nested = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", f"umount -l {suite}"],
        capture_output=True,
        check=False,
    )
    report("a nested user namespace with its own root", nested.returncode == 0)
    status = Path("/proc/self/status").read_text()
    caps = [
        line.split()[1] for line in status.splitlines() if line.startswith(("CapEff", "CapBnd"))
    ]
    report(f"capabilities kept ({'/'.join(caps)})", any(int(c, 16) for c in caps))
    open("done.txt", "w").close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
