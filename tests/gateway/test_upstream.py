"""The gateway's client for the provider, against a scripted server that writes raw bytes.

Each test scripts what the provider sends on each connection it accepts (bytes, pauses, a close)
and reads what the client asked; the client must read every framing HTTP/1.1 allows, keep and
reuse connections only when that is safe, and turn every way a provider fails into the error the
gateway answers with (docs/gateway.md, "Provider failures").
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import trustme

from trialbook.gateway._upstream import (
    BadRequest,
    UpstreamBroken,
    UpstreamPool,
    UpstreamUnreachable,
)

Script = Callable[[socket.socket, int], None]
"""What the server does with its n-th accepted connection (it reads the request itself)."""


def _request(conn: socket.socket) -> bytes:
    """One request's bytes (its head and a Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return data
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


@dataclass
class Server:
    """A provider that follows a script per connection, on a thread of its own."""

    script: Script
    tls: ssl.SSLContext | None = None
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://localhost:{self.port}/base"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            n = self.connections
            self.connections += 1
            threading.Thread(target=self._one, args=(conn, n), daemon=True).start()

    def _one(self, conn: socket.socket, n: int) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.script(conn, n)
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def read(self, conn: socket.socket) -> bytes:
        request = _request(conn)
        self.requests.append(request)
        return request

    def close(self) -> None:
        self._sock.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def make(script: Script, **options: object) -> Server:
        server = Server(script, **options)  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def _call(
    pool_options: dict[str, object],
    url: str,
    *calls: tuple[str, str],
    read: bool = True,
) -> list[tuple[int, list[tuple[str, str]], bytes]]:
    """Run ``calls`` (method, path) one after another on one pool; status, headers, body each."""

    async def run() -> list[tuple[int, list[tuple[str, str]], bytes]]:
        pool = UpstreamPool(url, **pool_options)  # type: ignore[arg-type]
        out = []
        try:
            for method, path in calls:
                body = b'{"a":1}' if method == "POST" else b""
                up = await pool.request(method, pool.prepare(method, path, [], body))
                try:
                    data = await up.read() if read else b""
                finally:
                    up.close()
                out.append((up.status, up.headers, data))
        finally:
            pool.close()
        return out

    return asyncio.run(run())


def _answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return f"HTTP/1.1 {status}\r\n{head}\r\n".encode() + body


def test_every_framing_is_read_whole_and_a_kept_connection_is_reused(
    serve: Callable[..., Server],
) -> None:
    chunked = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"

    def script(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(_answer(chunked, "Transfer-Encoding: chunked", "X-Up: 1"))
        server.read(conn)
        conn.sendall(_answer(b"twelve bytes", "Content-Length: 12"))
        server.read(conn)
        # no length, no chunks: the body ends where the connection does
        conn.sendall(_answer(b"until the end", "Connection: close"))

    server = serve(script)
    answers = _call({}, server.url, ("POST", "/v1/x"), ("GET", "/v1/y?q=1"), ("POST", "/v1/z"))
    assert [(status, body) for status, _, body in answers] == [
        (200, b"hello world"),
        (200, b"twelve bytes"),
        (200, b"until the end"),
    ]
    assert ("X-Up", "1") in answers[0][1]
    assert server.connections == 1, "a kept-alive connection was not reused"
    first, second, _ = server.requests
    assert first.startswith(b"POST /base/v1/x HTTP/1.1\r\nHost: localhost:")
    assert b'\r\nContent-Length: 7\r\n\r\n{"a":1}' in first
    assert second.startswith(b"GET /base/v1/y?q=1 HTTP/1.1\r\n")
    assert b"Content-Length" not in second


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [("gzip", gzip.compress), ("deflate", zlib.compress)],
)
def test_an_encoded_answer_the_client_did_not_ask_for_is_decoded(
    serve: Callable[..., Server], encoding: str, encode: Callable[[bytes], bytes]
) -> None:
    body = b'{"usage":{"prompt_tokens":3}}' * 50
    packed = encode(body)

    def script(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(
            _answer(packed, f"Content-Encoding: {encoding}", f"Content-Length: {len(packed)}")
        )

    server = serve(script)
    [(_, headers, data)] = _call({}, server.url, ("GET", "/m"))
    assert data == body
    assert "content-encoding" not in {k.lower() for k, _ in headers}


def test_interim_answers_are_skipped_and_a_head_answer_has_no_body(
    serve: Callable[..., Server],
) -> None:
    def script(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
        conn.sendall(_answer(b"ok", "Content-Length: 2"))
        server.read(conn)
        # a HEAD answer names the length of a body it does not send
        conn.sendall(_answer(b"", "Content-Length: 1000"))
        time.sleep(0.5)

    server = serve(script)
    answers = _call({"read_timeout_s": 0.3}, server.url, ("GET", "/a"), ("HEAD", "/b"))
    assert [(status, body) for status, _, body in answers] == [(200, b"ok"), (200, b"")]
    assert ("Link", "</a>") not in answers[0][1]


def test_a_reused_connection_the_provider_closed_is_retried_only_for_an_idempotent_call(
    serve: Callable[..., Server],
) -> None:
    def script(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(_answer(b"first", "Content-Length: 5"))
        if n == 0:
            # keep-alive promised, then the connection is closed as the next request comes
            _request(conn)
            return
        server.read(conn)

    server = serve(script)
    answers = _call({}, server.url, ("GET", "/a"), ("GET", "/b"))
    assert [body for _, _, body in answers] == [b"first", b"first"]
    assert server.connections == 2
    server = serve(script)
    with pytest.raises(UpstreamUnreachable, match="closed the connection"):
        # a POST may have been acted on: it is not sent twice
        _call({}, server.url, ("GET", "/a"), ("POST", "/b"))


def test_silence_past_the_read_timeout_is_a_timeout_before_or_during_the_answer(
    serve: Callable[..., Server],
) -> None:
    def silent(conn: socket.socket, n: int) -> None:
        server.read(conn)
        time.sleep(2)

    server = serve(silent)
    # (had the timeout not fired, the server's close after 2 s would be a broken connection)
    with pytest.raises(TimeoutError, match=r"sent nothing for 0\.3 s"):
        _call({"read_timeout_s": 0.3}, server.url, ("POST", "/v1/x"))

    def stalls(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(_answer(b"part", "Content-Length: 100"))
        time.sleep(2)

    server = serve(stalls)
    with pytest.raises(TimeoutError):
        _call({"read_timeout_s": 0.3}, server.url, ("POST", "/v1/x"))


def test_refused_not_http_and_cut_short_are_each_their_failure(
    serve: Callable[..., Server],
) -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(UpstreamUnreachable, match="cannot connect: Connection refused") as refused:
        _call({}, f"http://127.0.0.1:{port}", ("GET", "/"))
    assert str(port) not in str(refused.value), "the provider's address may reach the agent"

    def babble(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")

    server = serve(babble)
    with pytest.raises(UpstreamUnreachable, match="not HTTP"):
        _call({}, server.url, ("GET", "/"))

    def cut(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(_answer(b"only ten b", "Content-Length: 100"))

    server = serve(cut)
    with pytest.raises(UpstreamBroken, match="mid-answer"):
        _call({}, server.url, ("GET", "/"))


@pytest.mark.parametrize(
    ("method", "target", "headers", "why"),
    [
        ("POST", "/v1/x", [("X-A", "1\r\nX-Injected: 1")], "line break"),
        ("POST", "/v1/x", [("X-A", "1\nX-Injected: 1")], "line break"),
        ("POST", "/v1/x", [("X-A", "1\x00")], "line break or NUL"),
        ("POST", "/v1/x", [("X A", "1")], "not an HTTP token"),
        ("POST", "/v1/x", [("X-A:", "1")], "not an HTTP token"),
        ("POST", "/v1/x HTTP/1.1\r\nHost: evil", [], "not an HTTP request target"),
        ("POST", "/v1/ x", [], "not an HTTP request target"),
        ("GET /", "/v1/x", [], "not an HTTP token"),
    ],
)
def test_a_request_that_would_smuggle_a_header_or_a_request_is_refused(
    method: str, target: str, headers: list[tuple[str, str]], why: str
) -> None:
    pool = UpstreamPool("http://127.0.0.1:9")
    with pytest.raises(BadRequest, match=why):
        pool.prepare(method, target, headers, b"")
    # the same with good headers beside it is written as asked
    assert pool.prepare("GET", "/v1/x", [("X-B", "two words")], b"").startswith(
        b"GET /v1/x HTTP/1.1\r\nHost: 127.0.0.1:9\r\nX-B: two words\r\n"
    )


def test_an_agent_reading_slowly_pauses_the_provider_and_misses_nothing(
    serve: Callable[..., Server],
) -> None:
    body = bytes(range(256)) * (16 << 10)  # 4 MiB, past the pool's buffer

    def script(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(_answer(body, f"Content-Length: {len(body)}"))

    server = serve(script)
    paused: list[bool] = []

    async def run() -> bytes:
        pool = UpstreamPool(server.url)
        up = await pool.request("GET", pool.prepare("GET", "/", [], b""))
        parts = []
        while chunk := await up.read_any():
            parts.append(chunk)
            await asyncio.sleep(0.02)  # the slow agent
            paused.append(up._connection.paused)
        up.close()
        pool.close()
        return b"".join(parts)

    assert asyncio.run(run()) == body
    assert any(paused), "the connection never stopped reading for the slow reader"


def test_idle_connections_are_closed_and_an_abandoned_answer_is_not_reused(
    serve: Callable[..., Server],
) -> None:
    def script(conn: socket.socket, n: int) -> None:
        while server.read(conn):
            conn.sendall(_answer(b"x" * 10, "Content-Length: 10"))

    server = serve(script)

    async def run() -> tuple[int, int]:
        pool = UpstreamPool(server.url, idle_timeout_s=0.2)
        up = await pool.request("GET", pool.prepare("GET", "/", [], b""))
        await up.read()
        up.close()
        kept = len(pool._idle)
        await asyncio.sleep(0.5)
        swept = len(pool._idle)
        # an answer left before its end takes its connection with it
        up = await pool.request("GET", pool.prepare("GET", "/", [], b""))
        up.close()
        await asyncio.sleep(0.05)
        pool.close()
        return kept, swept + len(pool._idle)

    assert asyncio.run(run()) == (1, 0)
    assert server.connections == 2


def test_tls_is_verified_against_the_systems_certificates_or_the_context_given(
    serve: Callable[..., Server],
) -> None:
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_context)

    def script(conn: socket.socket, n: int) -> None:
        server.read(conn)
        conn.sendall(_answer(b"secure", "Content-Length: 6"))

    server = serve(script, tls=server_context)
    # a certificate no trusted authority signed: refused, never read
    with pytest.raises(UpstreamUnreachable, match="certificate is not trusted"):
        _call({}, server.url, ("GET", "/"))
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    [(status, _, body)] = _call({"ssl_context": client_context}, server.url, ("GET", "/"))
    assert (status, body) == (200, b"secure")
