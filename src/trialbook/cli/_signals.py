"""Ctrl-C and SIGTERM during a command that runs agents: stop the run cleanly, say so once."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from trialbook.cli._console import echo

__all__ = ["stop_on_signals"]


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """An event that SIGINT or SIGTERM sets (the harness then kills its running attempts and
    records the run as interrupted); the previous handlers come back on exit."""
    stop = threading.Event()

    def on_signal(signum: int, _: object) -> None:
        if not stop.is_set():
            echo(f"\nstopping ({signal.Signals(signum).name}): killing running attempts", err=True)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
