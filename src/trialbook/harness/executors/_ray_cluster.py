"""The Ray executor's cluster: Ray imported only when asked for, the connection made (or the
caller's own kept), and the cluster's CPUs, which bound how many attempts may be in flight."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from trialbook.errors import ArgumentError, HarnessError

__all__ = ["ClusterCpus", "connect", "import_ray"]

_CONNECT_S = 10.0
"""How long the cluster's address may take to accept a connection (Ray itself retries for minutes)."""

_NO_CPU_S = 60.0
"""How long the cluster may have no CPU at all before the run stops (nothing could ever run)."""


def import_ray() -> Any:
    """The ``ray`` module; refused naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ArgumentError(
            "--executor ray needs Ray: pip install 'trialbook[ray]'", argument="executor"
        ) from None
    return ray


def _reachable(address: str) -> None:
    """Refuse at once a cluster address (``HOST:PORT``) nothing listens on: Ray would retry it for
    minutes before saying so. Other forms (``auto``, ``ray://...``) are left to Ray."""
    if "://" in address or address.count(":") != 1:
        return
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise ArgumentError(
            f"Ray address must be HOST:PORT, got {address!r}", argument="ray_address"
        )
    try:
        socket.create_connection((host, int(port)), timeout=_CONNECT_S).close()
    except OSError as exc:
        raise ArgumentError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}): start one with "
            "'ray start --head' or give its address",
            argument="ray_address",
        ) from None


@contextmanager
def _withheld(names: Sequence[str]) -> Iterator[None]:
    """This process's environment without ``names`` for the time of the block, then as it was.

    A Ray instance started here runs its processes (GCS, raylet, its agents, and the workers the
    raylet starts) with a copy of this environment taken when they start: what is not in it then
    is in none of them, ever. Another thread of this process that reads one of these variables in
    the meantime finds it unset.
    """
    kept = {name: os.environ.pop(name) for name in names if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(kept)


def connect(
    ray: Any,
    address: str | None,
    init: Callable[..., object] | None,
    withheld: Sequence[str] = (),
) -> bool:
    """Connect to ``address`` (``RAY_ADDRESS`` when None, else a Ray instance started on this
    machine) with ``init`` (``ray.init``), unless the caller already opened a connection.
    ``withheld``: variables of this process's environment (the model's real key) that a Ray
    instance started here must not inherit.

    Returns whether the connection is this executor's own, to be shut down with it.
    """
    if ray.is_initialized():
        return False
    # neither given: a new instance here ("local"), never one a stale session file names
    address = address or os.environ.get("RAY_ADDRESS") or "local"
    _reachable(address)
    try:
        with _withheld(withheld):
            (init or ray.init)(
                address=address,
                log_to_driver=False,
                include_dashboard=False,
                configure_logging=False,
            )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = "a new instance here" if address == "local" else address
        raise HarnessError(f"cannot start or reach the Ray cluster ({where}): {exc}") from None
    return True


class ClusterCpus:
    """The cluster's CPUs as nodes come and go, looked up at most once a second."""

    def __init__(self, ray: Any) -> None:
        self._ray = ray
        self._cpus, self._at, self._none_since = 0, 0.0, 0.0

    def count(self) -> int:
        """The CPUs the cluster has now. Raises :class:`HarnessError` when it has had none for
        a minute."""
        clock = time.monotonic()
        if clock - self._at >= 1.0:
            self._cpus = int(self._ray.cluster_resources().get("CPU", 0))
            self._at = clock
            if self._cpus > 0:
                self._none_since = 0.0
            elif not self._none_since:
                self._none_since = clock
            elif clock - self._none_since > _NO_CPU_S:
                raise HarnessError(f"the Ray cluster has had no CPU for {_NO_CPU_S:g} s")
        return self._cpus
