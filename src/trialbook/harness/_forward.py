"""The gateway's door inside a sandbox: ``python .../trialbook/harness/_forward.py SOCKET PORT``.

A bwrap agent without network has its own network namespace, where only loopback exists. The
run's gateway also listens on a unix socket, whose folder the sandbox shows read-only; this
forwarder, started first by the attempt's command, listens on 127.0.0.1:PORT inside the namespace
and carries each connection to that socket. So the agent's ``OPENAI_BASE_URL`` (and the rest)
name the same address inside as outside, and the gateway is the one thing the agent can reach:
no internet, no other host, no loopback port of the host.

It returns (exit 0) once it listens, serving on in a child of its own, which dies with the
sandbox (bwrap's pid namespace ends with the agent's shell); exit 125 when it cannot listen.
Standard library only, run by its path: it starts fast, and needs nothing of trialbook importable.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys

__all__ = ["main"]

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
