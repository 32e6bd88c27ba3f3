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
On a Ray worker's node, :func:`ensure_relay` keeps the socket the forwarder names, carried over the
network to the driver's gateway (the worker runs outside the sandbox, so it can reach it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import socket
import sys
import tempfile
import threading

__all__ = ["RELAY_VAR", "ensure_relay", "forwarded", "main"]

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
        if os.path.exists(path) and _connectable(path):
            return path
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a relay of a worker that died
        ready = threading.Event()
        failed: list[OSError] = []
        thread = threading.Thread(
            target=_relay, args=(path, host, int(port), ready, failed), daemon=True
        )
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
            await server.serve_forever()

    asyncio.run(serve())


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python _forward.py SOCKET PORT", file=sys.stderr)
        return 2
    path, port = argv[0], int(argv[1])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1024)
    except OSError as exc:
        print(f"trialbook: the model gateway's forwarder cannot listen: {exc}", file=sys.stderr)
        return 125
    if os.fork():
        return 0  # listening: the agent may start
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # hold none of the agent's output pipes open
        os.dup2(null, fd)
    asyncio.run(_serve(listener, path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
