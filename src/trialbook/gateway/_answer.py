"""One answer of the provider, as the gateway's upstream client reads it (``_upstream.py``).

The connection parses; the answer keeps what was parsed until the gateway reads it, wakes the
reader once per read of the connection, pauses the connection while too much is waiting, decodes
a body encoded against the gateway's asking, and fails on the provider's silence.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Protocol

__all__ = ["BadRequest", "Link", "UpstreamBroken", "UpstreamResponse", "UpstreamUnreachable"]

_HIGH_WATER = 1 << 20
"""Bytes of an answer buffered before the connection stops reading (the agent reads slower)."""
_NO_BODY_STATUS = frozenset({204, 304})


class Link(Protocol):
    """What an answer may ask of its connection."""

    paused: bool

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def abort(self) -> None: ...


class UpstreamUnreachable(ConnectionError):
    """No answer began: the provider could not be reached, or closed (or spoke something other
    than HTTP) before a status line."""


class UpstreamBroken(ConnectionError):
    """An answer began and broke off: the connection was lost, or its bytes stopped being HTTP."""


class BadRequest(ValueError):
    """A request that cannot be written as HTTP/1.1 (a header with a line break, say)."""


class UpstreamResponse:
    """One answer of the provider, read as it comes; :meth:`close` it when done."""

    def __init__(self, connection: Link, method: str, read_timeout_s: float) -> None:
        self.status = 0
        self.headers: list[tuple[str, str]] = []
        """The answer's headers in order, ``Content-Encoding`` left out when the body was decoded."""
        self._connection = connection
        self.head_only = method == "HEAD"
        """A HEAD request's answer: no body follows, whatever its length says."""
        self._loop = asyncio.get_running_loop()
        self._began = self._loop.create_future()
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._complete = False
        self._error: BaseException | None = None
        self.received = False
        """True once any byte of the answer arrived (a reused connection is retried only if not)."""
        self._until_eof = False
        self._decoder: zlib._Decompress | None = None
        self._read_timeout_s = read_timeout_s
        self._last = self._loop.time()
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(
            read_timeout_s, self._check_timeout
        )

    # -- the reading side ---------------------------------------------------------------------

    def complete(self) -> bool:
        """True once the whole answer is in (what is not read yet is kept here)."""
        return self._complete

    @property
    def content_type(self) -> str:
        """The media type of ``Content-Type``, lower case, without parameters ("" when absent)."""
        for name, value in self.headers:
            if name.lower() == "content-type":
                return value.split(";", 1)[0].strip().lower()
        return ""

    async def began(self) -> None:
        """Wait for the status line and headers."""
        await self._began

    async def read_any(self) -> bytes:
        """What arrived since the last read, at least one byte; ``b""`` once the answer is whole.

        Raises :class:`UpstreamBroken` when the answer broke off, :class:`TimeoutError` when the
        provider sent nothing for ``read_timeout_s``.
        """
        while not self._chunks:
            if self._error is not None:
                raise self._error
            if self._complete:
                return b""
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        self._buffered = 0
        self._connection.resume()
        return data

    async def read(self) -> bytes:
        """The whole (rest of the) answer."""
        parts = []
        while chunk := await self.read_any():
            parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        """Done with the answer: an answer not read to its end closes its connection."""
        self._stop_timer()
        if not self._complete and self._error is None:
            self._error = UpstreamBroken("the answer was abandoned")
            self._connection.abort()

    # -- the connection's side: what it parsed, and what became of it --------------------------

    def headers_done(self, status: int, headers: list[tuple[str, str]]) -> None:
        """The status line and headers are in. A body neither sized nor chunked runs to the
        connection's end (RFC 9112, 6.3)."""
        framed = False
        encoding = ""
        kept = []
        for name, value in headers:
            lower = name.lower()
            if lower == "content-length" or (
                lower == "transfer-encoding" and value.lower().rstrip().endswith("chunked")
            ):
                framed = True
            if lower == "content-encoding":
                encoding = value.strip().lower()
                if encoding in ("gzip", "x-gzip", "deflate"):
                    continue  # decoded here, so the agent gets it plain
            kept.append((name, value))
        if encoding in ("gzip", "x-gzip", "deflate"):
            # 32: a gzip or a zlib header, told apart by the decoder itself
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)
        self.status, self.headers = status, kept
        no_body = self.head_only or status in _NO_BODY_STATUS
        self._until_eof = not framed and not no_body
        if not self._began.done():
            self._began.set_result(None)

    def body(self, data: bytes) -> None:
        """Bytes of the body, as the parser found them (the buffer is read by :meth:`read_any`)."""
        if self._decoder is not None:
            try:
                data = self._decoder.decompress(data)
            except zlib.error as exc:
                self.fail(UpstreamBroken(f"the answer's encoding could not be decoded: {exc}"))
                self._connection.abort()
                return
            if not data:
                return
        self._chunks.append(data)
        self._buffered += len(data)

    def parsed(self) -> None:
        """One read of the connection has been parsed: wake the reader once, not per chunk."""
        if self._buffered > _HIGH_WATER:
            self._connection.pause()
        self._wake()

    def done(self) -> None:
        if self._decoder is not None:
            rest = self._decoder.flush()
            if rest:
                self._chunks.append(rest)
        self._complete = True
        self._stop_timer()
        self._wake()

    def fail(self, error: BaseException) -> None:
        if self._complete or self._error is not None:
            return
        self._error = error
        self._stop_timer()
        if not self._began.done():
            self._began.set_exception(error)
            self._began.exception()  # retrieved here: a caller that left is no error
        self._wake()

    def lost(self, exc: BaseException | None) -> None:
        """The connection closed: the end of an answer delimited by it, else a failure."""
        if self._began.done() and self._until_eof and self._error is None:
            self.done()
            return
        why = f" ({exc})" if exc is not None else ""
        if self._began.done():
            self.fail(UpstreamBroken(f"the provider closed the connection mid-answer{why}"))
        else:
            self.fail(UpstreamUnreachable(f"the provider closed the connection{why}"))

    def began_done(self) -> bool:
        """True once the status line and headers are in (or the answer failed before them)."""
        return self._began.done()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def touch(self) -> None:
        self.received = True
        self._last = self._loop.time()

    def _check_timeout(self) -> None:
        """Fail the answer once the provider has sent nothing for the read timeout (while the
        connection reads: a pause for a slow agent is not the provider's silence)."""
        self._timer = None
        if self._complete or self._error is not None:
            return
        idle = self._loop.time() - self._last
        if idle >= self._read_timeout_s and not self._connection.paused:
            self.fail(TimeoutError(f"the provider sent nothing for {self._read_timeout_s:g} s"))
            self._connection.abort()
            return
        wait = self._read_timeout_s - idle if idle < self._read_timeout_s else self._read_timeout_s
        self._timer = self._loop.call_later(wait, self._check_timeout)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
