"""The request handler: check the attempt's token and budget, forward the call, read its usage.

The real key is added here, on the way up, and nowhere else: it is never in an answer, never in
the call log. Answers pass to the client as the upstream gave them (status, headers, body), the
one change being the usage chunk of an OpenAI chat stream that the gateway itself asked for.
A provider failure (5xx, 429, a timeout, a connection that fails or drops) reaches the client as
it would from the API, and is counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import orjson
from aiohttp import web

from trialbook.gateway._budget import Budgets, budget_refusal
from trialbook.gateway._log import REDACTED, CallLog, redacted_headers
from trialbook.gateway._meter import Meter, ProviderFailure
from trialbook.gateway._shapes import api_error
from trialbook.gateway._tokens import Check, TokenRegistry
from trialbook.gateway._upstream import (
    BadRequest,
    UpstreamBroken,
    UpstreamPool,
    UpstreamResponse,
    UpstreamUnreachable,
)
from trialbook.gateway._usage import (
    CallUsage,
    EventSplitter,
    StreamReader,
    body_usage,
    stream_reader,
)

__all__ = ["Attempt", "Proxy", "Upstreams"]

_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
# never passed up: the agent's credentials (replaced by the real key), its encodings (the gateway
# reads the answer, so it asks for it plain) and its expectations of the gateway's own server
_NOT_UP = _HOP | {"authorization", "x-api-key", "accept-encoding", "cookie", "expect"}
# never passed down: the answer's framing is the gateway's own (an encoding the client could not
# have asked for is decoded by the pool, which leaves its header out)
_NOT_DOWN = _HOP | {"set-cookie"}
# a path of the upstream's API as the pool writes it: its segments quoted, a "." or ".." segment
# refused (it would step out of the upstream's base path)
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_DOT_SEGMENTS = frozenset({".", ".."})
_APIS = frozenset({"openai", "anthropic"})
REDACTED_BYTES = REDACTED.encode()
_METERED = ("chat/completions", "completions", "responses", "messages")


@dataclass(frozen=True)
class Upstreams:
    """Where calls go and with which key."""

    openai: str | None
    """Base URL of the OpenAI API as a client would set it (``https://api.openai.com/v1``)."""
    anthropic: str | None
    """Base URL of the Anthropic API (``https://api.anthropic.com``)."""
    key: str
    """The real key: sent upstream only."""
    read_timeout_s: float = 600.0
    """Longest wait for the upstream's next bytes before the call counts as timed out."""


class _Stream(web.StreamResponse):
    """A streamed answer whose head goes down with its first bytes, in one write (as aiohttp's
    own ``Response`` sends its head; a ``StreamResponse`` sends it alone, at once, by default)."""

    _send_headers_immediately = False


@dataclass(frozen=True)
class _Call:
    """What a forwarded call is, as the answer's reading and metering need it."""

    api: str
    path: str
    """The path under the upstream's base URL (``chat/completions`` for OpenAI's ``/v1``)."""
    tail: str
    """The path as the agent called it, under the API's root (``v1/chat/completions``): the
    call log's ``path``, for calls passed up and refused alike."""
    attempt: Attempt
    requested: str | None
    """The model the request asked for."""


@dataclass
class Attempt:
    """An open attempt as the handler sees it."""

    meter: Meter
    log: CallLog | None


def _presented(request: web.BaseRequest) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return request.headers.get("x-api-key")


class Proxy:
    """The aiohttp handler of every call: ``/a/{slug}/{api}/{tail}``."""

    def __init__(
        self,
        upstreams: Upstreams,
        registry: TokenRegistry,
        lookup: Callable[[str], Attempt | None],
        budgets: Budgets,
    ) -> None:
        self.upstreams = upstreams
        self.registry = registry
        self.lookup = lookup
        self.budgets = budgets
        self.pools: dict[str, UpstreamPool] = {}
        """One pool of connections per upstream base URL (opened on the server's loop)."""
        self._key = upstreams.key.encode()

    async def open(self) -> None:
        for base in (self.upstreams.openai, self.upstreams.anthropic):
            if base is not None and base not in self.pools:
                self.pools[base] = UpstreamPool(base, read_timeout_s=self.upstreams.read_timeout_s)

    async def close(self) -> None:
        for pool in self.pools.values():
            pool.close()

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        # /a/{slug}/{openai|anthropic}/{tail}, the path decoded
        parts = request.path.split("/", 4)
        if len(parts) < 5 or parts[1] != "a" or not parts[2] or parts[3] not in _APIS:
            return web.Response(status=404, text="404: Not Found")
        _, _, slug, api, tail = parts
        verdict = self.registry.check(slug, _presented(request))
        attempt = self.lookup(slug) if verdict is not Check.NO_ATTEMPT else None
        if attempt is None:
            return api_error(api, 401, "auth", "trialbook gateway: no open attempt at this address")
        if verdict is Check.BAD_TOKEN:
            attempt.meter.refuse(budget=False)
            self._log_refusal(attempt, request, tail, "refused", "not this attempt's token")
            return api_error(
                api, 401, "auth", "trialbook gateway: this token is not this attempt's token"
            )
        # from here the call is the attempt's: closing the attempt waits for it to end
        attempt.meter.begin()
        try:
            base = self.upstreams.anthropic if api == "anthropic" else self.upstreams.openai
            path = tail[3:] if api == "openai" else tail
            if (
                base is None
                or (api == "openai" and not tail.startswith("v1/"))
                or _DOT_SEGMENTS.intersection(path.split("/"))
            ):
                return api_error(
                    api, 404, "not_found", f"trialbook gateway: no upstream for {api} path {tail!r}"
                )
            refusal = self._over_budget(attempt)
            if refusal is not None:
                attempt.meter.refuse(budget=True)
                self._log_refusal(attempt, request, tail, "budget", refusal)
                return api_error(api, 429, "budget", refusal)
            target = "/" + quote(path, safe=_PATH_SAFE)
            if request.rel_url.raw_query_string:
                target += "?" + request.rel_url.raw_query_string
            return await self._forward(
                request, (api, path, tail), attempt, self.pools[base], target
            )
        finally:
            attempt.meter.finish()

    def _over_budget(self, attempt: Attempt) -> str | None:
        """Why the attempt's next call is refused for its budget, or None."""
        budgets = self.budgets
        if budgets.max_cost is None and budgets.max_tokens is None:
            return None
        tokens, cost, unpriced = attempt.meter.spent(cost=budgets.max_cost is not None)
        return budget_refusal(budgets, tokens=tokens, cost=cost, unpriced=unpriced)

    async def _forward(
        self,
        request: web.BaseRequest,
        where: tuple[str, str, str],
        attempt: Attempt,
        pool: UpstreamPool,
        target: str,
    ) -> web.StreamResponse:
        """Send the call up (``where``: its API, path under the upstream's base, and path as
        called) with the real key in place of the token."""
        api, path, tail = where
        body = await request.read()
        requested, body, strip = _prepare(api, path, body)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _NOT_UP]
        if api == "anthropic":
            headers.append(("x-api-key", self.upstreams.key))
        else:
            headers.append(("Authorization", f"Bearer {self.upstreams.key}"))
        # the answer is read here: asked for plain, it needs no decoding
        headers.append(("Accept-Encoding", "identity"))
        try:
            sent = pool.prepare(request.method, target, headers, body)
        except BadRequest as exc:
            return api_error(api, 400, "bad_request", f"trialbook gateway: {exc}")
        call = _Call(api, path, tail, attempt, requested)
        return await self._call(request, pool, sent, body, strip, call)

    async def _call(
        self,
        request: web.BaseRequest,
        pool: UpstreamPool,
        sent: bytes,
        body: bytes,
        strip: bool,
        call: _Call,
    ) -> web.StreamResponse:
        api, attempt = call.api, call.attempt
        usage = CallUsage()
        failure: ProviderFailure | None = None
        status = 0
        kept = bytearray()
        keep = attempt.log.body_limit * 4 if attempt.log is not None else 0
        answer: web.StreamResponse
        started_at = datetime.now(UTC).isoformat() if attempt.log is not None else ""
        start = time.perf_counter()
        up: UpstreamResponse | None = None
        try:
            up = await pool.request(request.method, sent)
            status = up.status
            if status >= 500 or status == 429:
                failure = ProviderFailure(status, "status")
            down = [
                (k, v.replace(self.upstreams.key, REDACTED))
                for k, v in up.headers
                if k.lower() not in _NOT_DOWN
            ]
            if up.content_type == "text/event-stream":
                reader = stream_reader(api, call.path, usage, strip_usage=strip)
                answer, broke = await self._stream(
                    request, up, down, EventSplitter(), reader, kept, keep
                )
                failure = failure or broke
            else:
                data = await up.read()
                if keep:
                    kept += data[:keep]
                body_usage(api, data, usage)
                answer = web.Response(status=status, body=self._unkeyed(data), headers=down)
        except TimeoutError:
            failure = ProviderFailure(None, "timeout")
            answer = api_error(
                api, 504, "upstream", "trialbook gateway: the model provider did not answer in time"
            )
        except (UpstreamUnreachable, UpstreamBroken) as exc:
            failure = ProviderFailure(None, "connection")
            answer = api_error(
                api,
                502,
                "upstream",
                f"trialbook gateway: the connection to the model provider failed ({exc})",
            )
        finally:
            if up is not None:
                up.close()
            seconds = time.perf_counter() - start
            attempt.meter.end(
                usage,
                requested=call.requested,
                seconds=seconds,
                failure=failure,
                expected=200 <= status < 300 and call.path.endswith(_METERED),
            )
        if attempt.log is None:
            return answer
        if not answer.prepared:  # the answer goes out first; the log is written after
            try:
                await answer.prepare(request)
                await answer.write_eof()
            except ConnectionResetError:
                pass  # the client left before its answer
        self._log_call(
            attempt.log,
            request,
            call.tail,
            body,
            bytes(kept),
            status=status,
            started_at=started_at,
            seconds=seconds,
            usage=usage,
            failure=failure,
        )
        return answer

    async def _stream(
        self,
        request: web.BaseRequest,
        up: UpstreamResponse,
        down: list[tuple[str, str]],
        splitter: EventSplitter,
        reader: StreamReader,
        kept: bytearray,
        keep: int,
    ) -> tuple[web.StreamResponse, ProviderFailure | None]:
        """Pass a stream on as it comes, and the failure that broke it, if one did.

        The head goes down with the stream's first bytes, then one write per read of the events
        the client is to see, the last with the stream's end. A stream that is whole by its
        first read (a fast upstream, a short answer) goes down as one answer, in one write.
        """
        # a stream that breaks before its first bytes is answered as a call that failed (the
        # caller's 502 or 504), since nothing of it went down yet
        chunk = await up.read_any()
        if up.complete():
            kept += chunk[:keep]
            out = splitter.feed_through(chunk, reader) + splitter.rest()
            return web.Response(status=up.status, body=self._unkeyed(out), headers=down), None
        answer = _Stream(status=up.status, headers=down)
        try:
            await answer.prepare(request)
            while chunk:
                if len(kept) < keep:
                    kept += chunk[: keep - len(kept)]
                out = splitter.feed_through(chunk, reader)
                if up.complete():
                    await answer.write_eof(self._unkeyed(out + splitter.rest()))
                    return answer, None
                if out:
                    await answer.write(self._unkeyed(out))
                chunk = await up.read_any()
            await answer.write_eof(self._unkeyed(splitter.rest()))
        except (UpstreamBroken, TimeoutError) as exc:
            # the upstream broke the stream: so does the gateway, as the API would
            if request.transport is not None:
                request.transport.abort()
            return answer, ProviderFailure(
                None, "timeout" if isinstance(exc, TimeoutError) else "dropped"
            )
        except ConnectionResetError:
            pass  # the client left; what it used so far is kept
        return answer, None

    def _unkeyed(self, data: bytes) -> bytes:
        """``data`` with the real key blanked: a provider may quote it (in an error, say)."""
        return data.replace(self._key, REDACTED_BYTES) if self._key in data else data

    def _log_refusal(
        self, attempt: Attempt, request: web.BaseRequest, tail: str, outcome: str, why: str
    ) -> None:
        if attempt.log is None:
            return
        attempt.log.write(
            {
                "at": datetime.now(UTC).isoformat(),
                "outcome": outcome,
                "why": why,
                "method": request.method,
                "path": tail,
                "request_headers": redacted_headers(request.headers),
            }
        )

    def _log_call(
        self,
        log: CallLog,
        request: web.BaseRequest,
        path: str,
        sent: bytes,
        received: bytes,
        *,
        status: int,
        started_at: str,
        seconds: float,
        usage: CallUsage,
        failure: ProviderFailure | None,
    ) -> None:
        request_text, request_cut = log.body(sent)
        response_text, response_cut = log.body(received)
        record: dict[str, Any] = {
            "at": started_at,
            "outcome": "failure" if failure else "passed",
            "method": request.method,
            "path": path,
            "status": status or None,
            "seconds": round(seconds, 6),
            "model": usage.model,
            "usage": {
                "input": usage.input,
                "output": usage.output,
                "cache_read": usage.cache_read,
                "cache_write": usage.cache_write,
            }
            if usage.reported
            else None,
            "failure": str(failure) if failure else None,
            "request_headers": redacted_headers(request.headers),
            "request_body": request_text,
            "response_body": response_text,
        }
        if request_cut:
            record["request_body_cut"] = request_cut
        if response_cut:
            record["response_body_cut"] = response_cut
        log.write(record)


def _prepare(api: str, path: str, body: bytes) -> tuple[str | None, bytes, bool]:
    """The model asked for, the body to send up, and whether a usage chunk is to be stripped.

    An OpenAI chat stream that did not ask for usage is sent up asking for it (and the extra chunk
    is dropped on the way down); any other body is sent up byte for byte.
    """
    try:
        data = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None, body, False
    if not isinstance(data, dict):
        return None, body, False
    model = data.get("model") if isinstance(data.get("model"), str) else None
    if api == "openai" and path.endswith("chat/completions") and data.get("stream") is True:
        options = data.get("stream_options")
        if not (isinstance(options, dict) and options.get("include_usage") is True):
            data["stream_options"] = {
                **(options if isinstance(options, dict) else {}),
                "include_usage": True,
            }
            return model, orjson.dumps(data), True
    return model, body, False
