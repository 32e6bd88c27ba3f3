"""A Ray node's relay to the driver's model gateway (``_forward.ensure_relay``): one socket per
gateway and node, served by whichever worker process of the node asked first; the others use it.

The worker processes of a node are separate processes: two that start their first sandboxed
attempt at once must not both make the socket (one would lose its attempt as an infra error).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import trialbook
from trialbook.harness.sandbox import _forward

_OTHER_WORKER = """
import sys
from trialbook.harness.sandbox._forward import ensure_relay
print(ensure_relay(sys.argv[1]), flush=True)
"""


def _waits_on_a_lock(pid: int) -> bool:
    """Whether ``pid`` is blocked on a file lock (a ``->`` line of /proc/locks names it)."""
    for line in Path("/proc/locks").read_text().splitlines():
        words = line.split()
        if "->" in words and words[words.index("->") + 4 :][:1] == [str(pid)]:
            return True
    return False


def test_two_workers_of_a_node_asking_for_the_relay_at_once_share_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gateway = socket.create_server(("127.0.0.1", 0))  # a stand-in: the relay only connects
    target = f"127.0.0.1:{gateway.getsockname()[1]}"
    env = {**os.environ, "PYTHONPATH": str(Path(trialbook.__file__).parents[1])}
    other: list[subprocess.Popen[str]] = []
    listen = socket.socket.listen

    def late(sock: socket.socket, *args: Any) -> None:
        # this worker's relay has bound its socket and not yet listens when another worker of
        # the node asks for the relay: it goes on once that one has its answer or waits
        if sock.family == socket.AF_UNIX and not other:
            worker = subprocess.Popen(
                [sys.executable, "-c", _OTHER_WORKER, target],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            other.append(worker)
            end = time.monotonic() + 60
            while worker.poll() is None and not _waits_on_a_lock(worker.pid):
                if time.monotonic() > end:
                    break  # the test fails below: the other worker never answered
                time.sleep(0.01)
        listen(sock, *args)

    monkeypatch.setattr(socket.socket, "listen", late)
    before = set(Path(tempfile.gettempdir()).glob("tb-gw-relay-*"))
    try:
        path = _forward.ensure_relay(target)
        out, _ = other[0].communicate(timeout=60)
        assert (other[0].returncode, out.strip()) == (0, path)
        assert _forward._connectable(path), "the socket the node's workers name is served by none"
    finally:
        for worker in other:
            if worker.poll() is None:
                worker.kill()
                worker.communicate()
        gateway.close()  # the run is over: the relay goes, with its socket and folder
        made = set(Path(tempfile.gettempdir()).glob("tb-gw-relay-*")) - before
        end = time.monotonic() + 30
        while any(folder.exists() for folder in made) and time.monotonic() < end:
            time.sleep(0.1)
    assert not [folder for folder in made if folder.exists()], "the relay outlived its gateway"
