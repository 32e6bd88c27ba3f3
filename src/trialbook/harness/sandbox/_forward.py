"""The gateway's door inside a sandbox: ``python .../sandbox/_forward.py SOCKET PORT``.

A bwrap agent without network has its own network namespace, where only loopback exists. The
run's gateway also listens on a unix socket, whose folder the sandbox shows read-only; this
forwarder, started first by the attempt's command, listens on 127.0.0.1:PORT inside the namespace
and carries each connection to that socket. So the agent's ``OPENAI_BASE_URL`` (and the rest)
name the same address inside as outside, and the gateway is the one thing the agent can reach:
no internet, no other host, no loopback port of the host.

It returns (exit 0) once it listens, serving on in a child of its own, which dies with the
sandbox (bwrap's pid namespace ends with the agent's shell); exit 125 when it cannot listen.
Standard library only, run by its path: it starts fast, and needs nothing of trialbook importable.

A container's image need not have Python, so there the harness runs it instead, before the
container: ``python _forward.py --netns SOCKET PORT`` makes a network namespace of its own (only
loopback, up), listens there, says ``listening`` on its stdout and serves until its stdin ends
(the harness holds it: it dies with the harness). The container joins that namespace
(``--network=ns:/proc/PID/ns/net``, :class:`Door`): inside, the forwarder's port is the one thing
there is to reach, as in the bwrap tier.
On a Ray worker's node, :func:`ensure_relay` keeps the socket the forwarder names, carried over the
network to the driver's gateway (the worker runs outside the sandbox, so it can reach it).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import fcntl
import hashlib
import os
import shlex
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator

__all__ = ["RELAY_VAR", "Door", "ensure_relay", "forwarded", "main"]

_CHUNK = 1 << 16


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()


async def _serve(listener: socket.socket, path: str) -> None:
    async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        writer.close()
        up_writer.close()

    server = await asyncio.start_server(carry, sock=listener)
    async with server:
        await server.serve_forever()


RELAY_VAR = "TRIALBOOK_GATEWAY_RELAY"
"""Set by the driver in a Ray bwrap attempt's spec (``HOST:PORT``, the gateway): the worker takes
it out, keeps a relay from a socket on its node to that address (:func:`ensure_relay`) and puts
the forwarder naming that socket before the agent's command (:func:`forwarded`)."""


def forwarded(command: str, socket_path: str, port: int | str) -> str:
    """``command`` started behind this forwarder (run by this file's path, which the sandbox then
    shows read-only, as it shows the socket's folder, both named in the command)."""
    script = shlex.quote(os.path.abspath(__file__))
    return f"python {script} {shlex.quote(socket_path)} {port} || exit 125\n{command}"


_RELAYS: dict[str, threading.Thread] = {}
_RELAY_PROBE_S = 2.0
"""How often a relay asks whether its gateway is still there: once the gateway's port refuses a
connection (its run has ended), the relay stops and removes its socket and folder."""
_RELAYS_LOCK = threading.Lock()


def _connectable(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(2)
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


@contextlib.contextmanager
def _node_lock(folder: str) -> Iterator[None]:
    """The relay's folder (made if need be) locked against the node's other processes: the
    workers of a node are processes of their own, and two that ask for the relay at once would
    each take the other's socket for a dead worker's (one not yet listening cannot be told from
    one that never will), and remove it or fail to bind. A folder that a relay ending removed
    while this one waited is made again."""
    while True:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                kept = os.path.samestat(os.fstat(fd), os.stat(folder))
            except FileNotFoundError:
                kept = False
            if kept:
                yield
                return
        finally:
            os.close(fd)  # and the lock with it


def ensure_relay(target: str) -> str:
    """On a node of a cluster: the path of a unix socket that carries each connection to the
    gateway at ``target`` (``HOST:PORT``), served by a thread of this process (or by another
    worker's relay on this node that answers: one socket per gateway and node). The forwarder of
    a bwrap attempt on this node names it, as it names the gateway's own socket on the driver's
    machine. Raises OSError when the relay cannot listen."""
    digest = hashlib.sha256(target.encode()).hexdigest()[:16]
    path = os.path.join(tempfile.gettempdir(), f"tb-gw-relay-{digest}", "gateway.sock")
    host, _, port = target.rpartition(":")
    with _RELAYS_LOCK:
        running = _RELAYS.get(path)
        if running is not None and running.is_alive():
            return path
        with _node_lock(os.path.dirname(path)):
            return _start_relay(path, host, int(port))


def _start_relay(path: str, host: str, port: int) -> str:
    """``path`` served by a relay to ``host:port``: another worker's that answers, else a thread
    of this process (under the node's lock)."""
    if os.path.exists(path) and _connectable(path):
        return path
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a relay of a worker that died
    ready = threading.Event()
    failed: list[OSError] = []
    thread = threading.Thread(target=_relay, args=(path, host, port, ready, failed), daemon=True)
    thread.start()
    ready.wait(30)
    if failed:
        raise failed[0]
    _RELAYS[path] = thread
    return path


def _relay(path: str, host: str, port: int, ready: threading.Event, failed: list[OSError]) -> None:
    async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        writer.close()
        up_writer.close()

    async def gateway_gone() -> None:
        """Returns once the gateway refuses a connection: its run has ended."""
        while True:
            await asyncio.sleep(_RELAY_PROBE_S)
            try:
                _, writer = await asyncio.open_connection(host, port)
            except ConnectionRefusedError:
                return
            except OSError:
                continue  # unreachable for now: the driver's node may come back
            writer.close()

    async def serve() -> None:
        try:
            server = await asyncio.start_unix_server(carry, path)
            os.chmod(path, 0o600)
        except OSError as exc:
            failed.append(exc)
            ready.set()
            return
        ready.set()
        async with server:
            await gateway_gone()
            # still listening, so that no worker of the node takes the socket over meanwhile
            # for a dead one's; the next run's relay, if any, is a new socket of its own
            with _RELAYS_LOCK, _node_lock(os.path.dirname(path)):
                _RELAYS.pop(path, None)
                with contextlib.suppress(OSError):
                    os.unlink(path)
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.dirname(path))

    asyncio.run(serve())


_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_LISTENING = b"listening\n"


def _own_network() -> None:
    """Into a network namespace of this process's own, its loopback up (OSError: not allowed)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare(CLONE_NEWNET): {os.strerror(errno)}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


class Door:
    """The forwarder in a network namespace of its own, for one container to join: ``netns`` is
    the path the engine is given. Raises OSError (with the forwarder's words) when it cannot
    listen there, e.g. where this process may not make a network namespace (not root)."""

    def __init__(self, socket_path: str, port: int | str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--netns", socket_path, str(port)],
            env={},  # nothing of the harness's environment (the real key is in it)
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        said = self._process.stdout.readline()
        if said != _LISTENING:
            assert self._process.stderr is not None
            self._process.kill()
            lines = self._process.stderr.read().decode(errors="replace").strip().splitlines()
            self.close()
            said_last = lines[-1].removeprefix("trialbook: ") if lines else ""
            raise OSError(said_last or "the model gateway's forwarder did not start")
        self.netns = f"/proc/{self._process.pid}/ns/net"

    def close(self) -> None:
        """Stop the forwarder (every connection it carries ends with it)."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()


async def _serve_until_eof(listener: socket.socket, path: str) -> None:
    serving = asyncio.ensure_future(_serve(listener, path))
    loop = asyncio.get_running_loop()
    # its stdin ends when the harness closes it or dies: the forwarder goes with it
    await loop.run_in_executor(None, sys.stdin.buffer.read)
    serving.cancel()


def main(argv: list[str]) -> int:
    netns = argv[:1] == ["--netns"]
    if netns:
        argv = argv[1:]
    if len(argv) != 2:
        print("usage: python _forward.py [--netns] SOCKET PORT", file=sys.stderr)
        return 2
    path, port = argv[0], int(argv[1])
    try:
        if netns:
            _own_network()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1024)
    except OSError as exc:
        print(f"trialbook: the model gateway's forwarder cannot listen: {exc}", file=sys.stderr)
        return 125
    if netns:
        sys.stdout.buffer.write(_LISTENING)
        sys.stdout.flush()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (1, 2):  # nobody reads these pipes from now on: a full one would block it
            os.dup2(null, fd)
        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(_serve_until_eof(listener, path))
        return 0
    if os.fork():
        return 0  # listening: the agent may start
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # hold none of the agent's output pipes open
        os.dup2(null, fd)
    asyncio.run(_serve(listener, path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
