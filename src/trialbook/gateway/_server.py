"""An aiohttp server served from its own thread, on its own event loop.

The harness is synchronous (threads, subprocesses); the gateway is asynchronous (hundreds of open
streams on one thread). :class:`ServerThread` runs an aiohttp application, or aiohttp's low-level
server around one handler, on a loop of its own: ``start()`` returns once it listens (on
127.0.0.1 at an ephemeral port, and on a unix socket when a path is given), ``stop()`` closes it
and joins the thread.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

__all__ = ["ServerThread", "low_level_server"]

Hook = Callable[[], Awaitable[None]]


def low_level_server(
    handler: Callable[[web.BaseRequest], Awaitable[web.StreamResponse]], *, client_max_size: int
) -> web.Server:
    """aiohttp's server around one handler, with no application and no router: the handler
    reads the path itself (an application's router was 7% of the gateway's CPU per streamed
    call, its regex match and the match info it builds). Bodies up to ``client_max_size``."""

    def request(
        message: Any, payload: Any, protocol: Any, writer: Any, task: Any
    ) -> web.BaseRequest:
        # as aiohttp's own server makes its requests, with the bound on bodies an application has
        loop = asyncio.get_running_loop()
        return web.BaseRequest(
            message, payload, protocol, writer, task, loop, client_max_size=client_max_size
        )

    # no SO_KEEPALIVE probes: the peers are on this machine or its cluster, and a connection
    # left idle is closed by the server's own keep-alive timeout long before the kernel's
    # first probe (two hours); setting it cost a system call per connection
    return web.Server(handler, request_factory=request, access_log=None, tcp_keepalive=False)


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop (the ``gateway`` extra installs it: about a tenth less of the gateway's
    CPU per streamed call than asyncio's own loop, docs/gateway.md "Performance"), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class ServerThread:
    """Serve the application or server that ``make_app`` builds (called on the server's loop);
    ``on_start`` and ``on_stop`` run there once it listens and once it has stopped."""

    def __init__(
        self,
        make_app: Callable[[], web.Application | web.Server],
        *,
        on_start: Hook | None = None,
        on_stop: Hook | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        unix_socket: Path | None = None,
        name: str = "trialbook-gateway",
    ) -> None:
        self._make_app = make_app
        self._on_start, self._on_stop = on_start, on_stop
        self.host = host
        self._port = port
        self.unix_socket = unix_socket
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.BaseRunner | None = None
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
        app = self._make_app()
        runner: web.BaseRunner = (
            web.AppRunner(app, handle_signals=False, access_log=None, tcp_keepalive=False)
            if isinstance(app, web.Application)
            else web.ServerRunner(app, handle_signals=False)
        )
        await runner.setup()
        if self._on_start is not None:
            await self._on_start()
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

    async def _cleanup(self, runner: web.BaseRunner) -> None:
        await runner.cleanup()
        if self._on_stop is not None:
            await self._on_stop()

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._cleanup(self._runner), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._thread = None
        self._loop = None
