"""The gateway's client for the provider: HTTP/1.1 on asyncio, answers parsed by httptools.

aiohttp serves the agents; the calls up to the provider go through this client instead of
aiohttp's, because aiohttp's client was most of the gateway's CPU per streamed call (a
stream's every read passes through its protocol, payload parser, stream reader and a timer
reschedule), docs/gateway.md "Why aiohttp, and httptools upstream". Answers are parsed by
httptools, the binding of llhttp (Node.js's HTTP parser) that uvicorn serves with: status
line, headers, chunked and length-delimited bodies are all its work. What is written here is the
request (a request line, validated headers, a ``Content-Length`` body) and the life of a
connection: a keep-alive pool per origin, TLS by :mod:`ssl` with the system's certificates, a
connect timeout and a read timeout between bytes, reading paused while the agent reads slower
than the provider writes, and one retry of an idempotent call whose reused connection the
provider had closed (RFC 9112, 9.3.1), as aiohttp's client does.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import ssl
from typing import cast
from urllib.parse import urlsplit

import httptools

from trialbook.gateway._answer import (
    BadRequest,
    UpstreamBroken,
    UpstreamResponse,
    UpstreamUnreachable,
)

__all__ = [
    "BadRequest",
    "UpstreamBroken",
    "UpstreamPool",
    "UpstreamResponse",
    "UpstreamUnreachable",
]

_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKENS = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*")
_BAD_VALUE = re.compile(r"[\x00\r\n]")
_TARGET = re.compile(r"/[\x21-\x7e]*")


class _Connection(asyncio.Protocol):
    """One connection to the provider; httptools calls its ``on_*`` methods as it parses."""

    def __init__(self, pool: UpstreamPool) -> None:
        self._pool = pool
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._response: UpstreamResponse | None = None
        self._headers: list[tuple[str, str]] = []
        self._interim = False
        self.closed = False
        self.paused = False
        self.idle_since = 0.0

    def send(self, response: UpstreamResponse, data: bytes) -> None:
        assert self._transport is not None
        self._response = response
        self._transport.write(data)

    def pause(self) -> None:
        if not self.paused and self._transport is not None and not self.closed:
            self.paused = True
            self._transport.pause_reading()

    def resume(self) -> None:
        if self.paused and self._transport is not None and not self.closed:
            self.paused = False
            self._transport.resume_reading()

    def abort(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.abort()

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (uvloop's are not registered as asyncio.Transport subclasses)
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        response = self._response
        if response is None:  # bytes on an idle connection: nothing can be asked of it again
            self.abort()
            return
        response.touch()
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            kind = UpstreamBroken if response.began_done() else UpstreamUnreachable
            response.fail(kind(f"the provider's answer is not HTTP/1.1: {exc}"))
            self.abort()
        response.parsed()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._pool._forget(self)
        response, self._response = self._response, None
        if response is not None:
            response.lost(exc)

    # -- httptools' callbacks -----------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._response is None:
            raise UpstreamBroken("an answer nobody asked for")
        self._headers = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.decode("latin-1"), value.decode("utf-8", "replace")))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        self._interim = 100 <= status < 200
        if self._interim:  # 100 Continue, 103 Early Hints: the answer is still to come
            if status == 101:
                raise UpstreamBroken("the provider switched protocols, which was not asked")
            return
        response = self._response
        assert response is not None
        response.headers_done(status, self._headers)
        if response.head_only:  # no body follows, whatever its length says
            response.done()
            self._response = None
            self.abort()

    def on_body(self, body: bytes) -> None:
        response = self._response
        if response is None:
            return
        if response._decoder is None:  # the usual answer: plain, kept as it came
            response._chunks.append(body)
            response._buffered += len(body)
        else:
            response.body(body)

    def on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
            return
        response, self._response = self._response, None
        if response is None:
            return
        response.done()
        if self._parser.should_keep_alive() and not self.closed:
            self._pool._keep(self)
        else:
            self.closed = True
            if self._transport is not None:
                self._transport.close()


def _reason(exc: OSError) -> str:
    """Why a connection failed, without the provider's address (the message may reach the
    agent, and the address is the harness's business)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"the provider's certificate is not trusted ({exc.verify_message})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or type(exc).__name__})"
    if isinstance(exc, socket.gaierror):
        return f"the provider's name does not resolve ({exc.strerror})"
    if exc.errno:
        return os.strerror(exc.errno)
    return type(exc).__name__


class UpstreamPool:
    """Keep-alive connections to the origin of ``base_url``; requests go to paths under its own.

    ``ssl_context``: for an ``https`` URL (default: :func:`ssl.create_default_context`, the
    system's certificates, verified). Idle connections are closed after ``idle_timeout_s``.
    """

    def __init__(
        self,
        base_url: str,
        *,
        connect_timeout_s: float = 30.0,
        read_timeout_s: float = 600.0,
        idle_timeout_s: float = 15.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {base_url!r}")
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = (
            (ssl_context or ssl.create_default_context()) if parts.scheme == "https" else None
        )
        default = (parts.scheme == "http" and self._port == 80) or self._port == 443
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if default and parts.port is None else f"{host}:{self._port}"
        self.prefix = parts.path.rstrip("/")
        """The base URL's path: the paths asked for go under it."""
        self._connect_timeout_s = connect_timeout_s
        self._read_timeout_s = read_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._idle: dict[_Connection, None] = {}  # in the order they fell idle: the last is warmest
        self._sweep: asyncio.TimerHandle | None = None

    def prepare(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> bytes:
        """The request as it is sent, or :class:`BadRequest`.

        ``target`` is the path under the pool's own (with its query); ``headers`` leave out
        ``Host`` and the body's framing, which this writes.
        """
        target = self.prefix + target
        if not _TOKEN.fullmatch(method):
            raise BadRequest(f"method {method!r} is not an HTTP token")
        if not _TARGET.fullmatch(target):
            raise BadRequest(f"path {target!r} is not an HTTP request target")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body)}")
        lines.append("\r\n")
        head = "\r\n".join(lines)
        # checked whole, in three scans: every name a token, and no CR, LF or NUL but the line
        # ends written here (a value with a line break would smuggle in a header or a request)
        if headers and not _TOKENS.fullmatch("\n".join(name for name, _ in headers)):
            bad = next(name for name, _ in headers if not _TOKEN.fullmatch(name))
            raise BadRequest(f"header name {bad!r} is not an HTTP token")
        ends = len(lines)  # a CRLF after each line, and the blank line's
        if head.count("\r") != ends or head.count("\n") != ends or "\0" in head:
            bad = next(name for name, value in headers if _BAD_VALUE.search(value))
            raise BadRequest(f"header {bad}: its value holds a line break or NUL")
        return head.encode("utf-8", "surrogateescape") + body

    async def request(self, method: str, data: bytes) -> UpstreamResponse:
        """Send a request :meth:`prepare` made; return once the answer's status and headers are
        in. Raises :class:`UpstreamUnreachable` or :class:`TimeoutError` (connecting, or no
        answer in time).
        """
        retry = method in _IDEMPOTENT
        while True:
            connection = self._take()
            reused = connection is not None
            if connection is None:
                connection = await self._connect()
            response = UpstreamResponse(connection, method, self._read_timeout_s)
            connection.send(response, data)
            try:
                await response.began()
            except UpstreamUnreachable:
                if reused and retry and not response.received:
                    retry = False
                    continue
                raise
            except BaseException:
                response.close()
                raise
            return response

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                _, connection = await loop.create_connection(
                    lambda: _Connection(self),
                    self._host,
                    self._port,
                    ssl=self._ssl,
                    server_hostname=self._host if self._ssl is not None else None,
                )
        except TimeoutError:
            raise TimeoutError(f"no connection in {self._connect_timeout_s:g} s") from None
        except OSError as exc:  # refused, no route, no such host, a certificate not trusted
            raise UpstreamUnreachable(f"cannot connect: {_reason(exc)}") from exc
        return connection

    def _take(self) -> _Connection | None:
        loop = asyncio.get_running_loop()
        while self._idle:
            connection = self._idle.popitem()[0]
            if connection.closed:
                continue
            if loop.time() - connection.idle_since >= self._idle_timeout_s:
                connection.abort()
                continue
            return connection
        return None

    def _keep(self, connection: _Connection) -> None:
        loop = asyncio.get_running_loop()
        connection.idle_since = loop.time()
        self._idle[connection] = None
        if self._sweep is None:
            self._sweep = loop.call_later(self._idle_timeout_s, self._close_stale)

    def _forget(self, connection: _Connection) -> None:
        self._idle.pop(connection, None)

    def _close_stale(self) -> None:
        self._sweep = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        for connection in [c for c in self._idle if now - c.idle_since >= self._idle_timeout_s]:
            del self._idle[connection]
            connection.abort()
        if self._idle:
            oldest = min(c.idle_since for c in self._idle)
            self._sweep = loop.call_later(oldest + self._idle_timeout_s - now, self._close_stale)

    def close(self) -> None:
        """Close the idle connections (answers still being read keep theirs until they end)."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        idle, self._idle = list(self._idle), {}
        for connection in idle:
            connection.abort()
