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

import aiohttp
import orjson
from aiohttp import web

from trialbook.gateway._budget import Budgets, budget_refusal
from trialbook.gateway._log import REDACTED, CallLog, redacted_headers
from trialbook.gateway._meter import Meter, ProviderFailure
from trialbook.gateway._shapes import api_error
from trialbook.gateway._tokens import Check, TokenRegistry
from trialbook.gateway._usage import CallUsage, EventSplitter, body_usage, stream_reader

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
# never passed up: the agent's credentials (replaced by the real key) and its encodings (the
# gateway reads the answer, so it asks for what it can decode)
_NOT_UP = _HOP | {"authorization", "x-api-key", "accept-encoding", "cookie"}
# never passed down: the answer is decoded here, so its length and encoding change
_NOT_DOWN = _HOP | {"content-encoding", "set-cookie"}
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


@dataclass
class Attempt:
    """An open attempt as the handler sees it."""

    meter: Meter
    log: CallLog | None


def _presented(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return request.headers.get("x-api-key")


class Proxy:
    """The aiohttp handler of ``/a/{slug}/{api}/{tail}``."""

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
        self.session: aiohttp.ClientSession | None = None
        self._key = upstreams.key.encode()

    async def open(self) -> None:
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True),
            auto_decompress=True,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=30, sock_read=self.upstreams.read_timeout_s
            ),
        )

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        slug, api, tail = (request.match_info[k] for k in ("slug", "api", "tail"))
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
            if base is None or (api == "openai" and not tail.startswith("v1/")):
                return api_error(
                    api, 404, "not_found", f"trialbook gateway: no upstream for {api} path {tail!r}"
                )
            tokens, cost, unpriced = attempt.meter.spent()
            refusal = budget_refusal(self.budgets, tokens=tokens, cost=cost, unpriced=unpriced)
            if refusal is not None:
                attempt.meter.refuse(budget=True)
                self._log_refusal(attempt, request, tail, "budget", refusal)
                return api_error(api, 429, "budget", refusal)
            path = tail[3:] if api == "openai" else tail
            url = base.rstrip("/") + "/" + path
            if request.query_string:
                url += "?" + request.query_string
            return await self._forward(request, api, path, url, attempt)
        finally:
            attempt.meter.finish()

    async def _forward(
        self, request: web.Request, api: str, path: str, url: str, attempt: Attempt
    ) -> web.StreamResponse:
        assert self.session is not None
        body = await request.read()
        requested, body, strip = _prepare(api, path, body)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_UP}
        if api == "anthropic":
            headers["x-api-key"] = self.upstreams.key
        else:
            headers["Authorization"] = f"Bearer {self.upstreams.key}"
        return await self._call(request, api, path, url, attempt, body, headers, strip, requested)

    async def _call(
        self,
        request: web.Request,
        api: str,
        path: str,
        url: str,
        attempt: Attempt,
        body: bytes,
        headers: dict[str, str],
        strip: bool,
        requested: str | None,
    ) -> web.StreamResponse:
        assert self.session is not None
        usage = CallUsage()
        failure: ProviderFailure | None = None
        status = 0
        kept = bytearray()
        keep = attempt.log.body_limit * 4 if attempt.log is not None else 0
        answer: web.StreamResponse
        started_at = datetime.now(UTC).isoformat()
        start = time.perf_counter()
        try:
            async with self.session.request(
                request.method, url, data=body, headers=headers, allow_redirects=False
            ) as up:
                status = up.status
                if status >= 500 or status == 429:
                    failure = ProviderFailure(status, "status")
                down = {
                    k: v.replace(self.upstreams.key, REDACTED)
                    for k, v in up.headers.items()
                    if k.lower() not in _NOT_DOWN
                }
                if up.content_type == "text/event-stream":
                    answer = web.StreamResponse(status=status, headers=down)
                    await answer.prepare(request)
                    reader = stream_reader(api, path, usage, strip_usage=strip)
                    splitter = EventSplitter()
                    try:
                        async for chunk in up.content.iter_any():
                            if len(kept) < keep:
                                kept += chunk[: keep - len(kept)]
                            # one write per chunk read, of the events the client is to see
                            events = splitter.feed(chunk)
                            if events:
                                out = b"".join(e for e in events if reader.event(e))
                                if out:
                                    await answer.write(self._unkeyed(out))
                        rest = splitter.rest()
                        if rest:
                            await answer.write(self._unkeyed(rest))
                        await answer.write_eof()
                    except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError):
                        # the upstream broke the stream: so does the gateway, as the API would
                        failure = failure or ProviderFailure(None, "dropped")
                        if request.transport is not None:
                            request.transport.abort()
                    except ConnectionResetError:
                        pass  # the client left; what it used so far is kept
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
        except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as exc:
            failure = ProviderFailure(None, "connection")
            answer = api_error(
                api,
                502,
                "upstream",
                f"trialbook gateway: the connection to the model provider failed ({type(exc).__name__})",
            )
        finally:
            seconds = time.perf_counter() - start
            attempt.meter.end(
                usage,
                requested=requested,
                seconds=seconds,
                failure=failure,
                expected=200 <= status < 300 and path.endswith(_METERED),
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
            path,
            body,
            bytes(kept),
            status=status,
            started_at=started_at,
            seconds=seconds,
            usage=usage,
            failure=failure,
        )
        return answer

    def _unkeyed(self, data: bytes) -> bytes:
        """``data`` with the real key blanked: a provider may quote it (in an error, say)."""
        return data.replace(self._key, REDACTED_BYTES) if self._key in data else data

    def _log_refusal(
        self, attempt: Attempt, request: web.Request, tail: str, outcome: str, why: str
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
        request: web.Request,
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
