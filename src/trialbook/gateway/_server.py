"""An aiohttp application served from its own thread, on its own event loop.

The harness is synchronous (threads, subprocesses); the gateway is asynchronous (hundreds of open
streams on one thread). :class:`ServerThread` runs the app on a loop of its own: ``start()`` returns
once it listens (on 127.0.0.1 at an ephemeral port, and on a unix socket when a path is given),
``stop()`` closes it and joins the thread.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

__all__ = ["ServerThread"]


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop (the ``gateway`` extra installs it: about a tenth less of the gateway's
    CPU per streamed call than asyncio's own loop, docs/gateway.md "Performance"), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class ServerThread:
    """Serve the app that ``make_app`` builds (called on the server's loop)."""

    def __init__(
        self,
        make_app: Callable[[], web.Application],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        unix_socket: Path | None = None,
        name: str = "trialbook-gateway",
    ) -> None:
        self._make_app = make_app
        self.host = host
        self._port = port
        self.unix_socket = unix_socket
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the server is already started")
        self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            self._thread.join()
            self._thread = None
            raise self._error

    def _serve(self) -> None:
        loop = _new_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._listen())
        except BaseException as exc:  # handed to start(), which raises it on the caller's thread
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _listen(self) -> None:
        # no SO_KEEPALIVE probes: the peers are on this machine or its cluster, and a connection
        # left idle is closed by the server's own keep-alive timeout long before the kernel's
        # first probe (two hours); setting it cost a system call per connection
        runner = web.AppRunner(
            self._make_app(), handle_signals=False, access_log=None, tcp_keepalive=False
        )
        await runner.setup()
        self._runner = runner
        # the socket is bound here, so its ephemeral port is known on every aiohttp version
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._port))
        sock.listen(4096)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        await web.SockSite(runner, sock, backlog=4096).start()
        if self.unix_socket is not None:
            await web.UnixSite(runner, str(self.unix_socket), backlog=4096).start()
            self.unix_socket.chmod(0o600)  # the harness's user alone (a sandbox keeps its uid)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._thread = None
        self._loop = None
