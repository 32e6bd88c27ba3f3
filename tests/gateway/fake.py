"""A fake model provider for the gateway's tests and benchmark: OpenAI- and Anthropic-shaped.

It answers chat completions, the responses API and Anthropic messages, streaming or not, with
the usage its :class:`Script` gives, and fails on request: the model asked for selects it
(``fail-500``, ``fail-429``, ``echo-key`` (a 401 quoting the key it got), ``drop`` (connection closed before an answer), ``drop-mid`` (closed
in the middle of a stream), ``slow`` (answers after ``Script.slow_s``), ``barrier-N-LABEL`` (answers once N calls of that
model have arrived: the callers were all in flight at once)). It records what it was sent, so
tests can see the real key arrive and the agent's token not.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from trialbook.gateway._server import ServerThread


@dataclass
class Script:
    """The usage every answer reports (``input`` counts cached tokens apart, as Anthropic does)."""

    model: str = "fake-model-2026-01-01"
    """The model name the fake answers with."""
    input: int = 100
    """Input tokens neither read from nor written to the cache."""
    output: int = 20
    cache_read: int = 30
    cache_write: int = 7
    """Anthropic only (OpenAI reports no cache writes)."""
    chunks: int = 3
    """Content chunks of a stream."""
    slow_s: float = 2.0
    barrier_s: float = 60.0
    """How long a ``barrier-N-LABEL`` call waits for the others before it is answered 408."""


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeUpstream:
    script: Script = field(default_factory=Script)
    seen: list[Seen] = field(default_factory=list)
    record: bool = True

    def __post_init__(self) -> None:
        self._server = ServerThread(self._app, name="fake-upstream")
        self._lock = threading.Lock()
        # touched only on the server's loop
        self._arrived: collections.Counter[str] = collections.Counter()
        self._met: dict[str, asyncio.Event] = {}

    def start(self) -> FakeUpstream:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def openai_base(self) -> str:
        return self.url + "/v1"

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=128 << 20)  # as large as any gateway passes
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_get("/v1/models", self._models)
        return app

    async def _read(self, request: web.Request) -> dict[str, Any]:
        body: dict[str, Any] = orjson.loads(await request.read())
        if self.record:
            with self._lock:
                self.seen.append(Seen(request.path, dict(request.headers), body))
        return body

    async def _failure(
        self, request: web.Request, body: dict[str, Any], api: str
    ) -> web.StreamResponse | None:
        model = body.get("model")
        if model in ("fail-500", "fail-429"):
            status = int(str(model)[5:])
            error = (
                {"type": "error", "error": {"type": "api_error", "message": "scripted failure"}}
                if api == "anthropic"
                else {"error": {"message": "scripted failure", "type": "server_error"}}
            )
            return web.Response(
                status=status, body=orjson.dumps(error), content_type="application/json"
            )
        if model == "echo-key":  # a provider that quotes the key it was sent in its error
            sent = request.headers.get("Authorization") or request.headers.get("x-api-key", "")
            error = {
                "error": {
                    "message": f"Incorrect API key provided: {sent}",
                    "type": "invalid_request_error",
                }
            }
            return web.Response(
                status=401, body=orjson.dumps(error), content_type="application/json"
            )
        if model == "drop":
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        if model == "slow":
            await asyncio.sleep(self.script.slow_s)
        if isinstance(model, str) and model.startswith("barrier-") and not await self._meet(model):
            error = {"error": {"message": f"{model}: the others never came", "type": "timeout"}}
            return web.Response(
                status=408, body=orjson.dumps(error), content_type="application/json"
            )
        return None

    async def _meet(self, model: str) -> bool:
        """Wait until N calls of ``barrier-N-LABEL`` have arrived (False: not within barrier_s)."""
        parties = int(model.split("-")[1])
        met = self._met.setdefault(model, asyncio.Event())
        self._arrived[model] += 1
        if self._arrived[model] >= parties:
            met.set()
        try:
            await asyncio.wait_for(met.wait(), self.script.barrier_s)
        except TimeoutError:
            return False
        return True

    def _openai_usage(self) -> dict[str, Any]:
        s = self.script
        prompt = s.input + s.cache_read
        return {
            "prompt_tokens": prompt,
            "completion_tokens": s.output,
            "total_tokens": prompt + s.output,
            "prompt_tokens_details": {"cached_tokens": s.cache_read},
        }

    async def _stream(
        self, request: web.Request, events: list[bytes], *, drop_mid: bool, delay_s: float = 0.0
    ) -> web.StreamResponse:
        answer = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await answer.prepare(request)
        for i, event in enumerate(events):
            if delay_s and i:
                await asyncio.sleep(delay_s)  # a model producing its tokens at a pace
            await answer.write(event)
            if drop_mid and i == 1:
                await asyncio.sleep(0.05)
                assert request.transport is not None
                request.transport.abort()
                return answer
        await answer.write_eof()
        return answer

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        failed = await self._failure(request, body, "openai")
        if failed is not None:
            return failed
        s = self.script
        if not body.get("stream"):
            return web.json_response(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": s.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "hello"},
                            "finish_reason": "stop",
                            "logprobs": None,
                        }
                    ],
                    "usage": self._openai_usage(),
                }
            )
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def chunk(choices: list[Any], usage: Any) -> bytes:
            data: dict[str, Any] = {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": s.model,
                "choices": choices,
            }
            if with_usage:
                data["usage"] = usage
            return b"data: " + orjson.dumps(data) + b"\n\n"

        events = [
            chunk([{"index": 0, "delta": {"content": f"part{i}"}, "finish_reason": None}], None)
            for i in range(s.chunks)
        ]
        events.append(chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}], None))
        if with_usage:
            events.append(chunk([], self._openai_usage()))
        events.append(b"data: [DONE]\n\n")
        # the chat API's own metadata field carries the pace a benchmark asks for
        delay = float((body.get("metadata") or {}).get("chunk_delay_s", 0))
        return await self._stream(
            request, events, drop_mid=body.get("model") == "drop-mid", delay_s=delay
        )

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        failed = await self._failure(request, body, "openai")
        if failed is not None:
            return failed
        s = self.script
        response = {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": s.model,
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "hello", "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": s.input + s.cache_read,
                "output_tokens": s.output,
                "total_tokens": s.input + s.cache_read + s.output,
                "input_tokens_details": {"cached_tokens": s.cache_read},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        if not body.get("stream"):
            return web.json_response(response)
        created = {**response, "status": "in_progress", "usage": None, "output": []}
        events = [
            b"event: response.created\ndata: "
            + orjson.dumps({"type": "response.created", "sequence_number": 0, "response": created})
            + b"\n\n",
            b"event: response.output_text.delta\ndata: "
            + orjson.dumps(
                {
                    "type": "response.output_text.delta",
                    "sequence_number": 1,
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": "hello",
                    "logprobs": [],
                }
            )
            + b"\n\n",
            b"event: response.completed\ndata: "
            + orjson.dumps(
                {"type": "response.completed", "sequence_number": 2, "response": response}
            )
            + b"\n\n",
        ]
        return await self._stream(request, events, drop_mid=body.get("model") == "drop-mid")

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        failed = await self._failure(request, body, "anthropic")
        if failed is not None:
            return failed
        s = self.script
        usage = {
            "input_tokens": s.input,
            "output_tokens": s.output,
            "cache_read_input_tokens": s.cache_read,
            "cache_creation_input_tokens": s.cache_write,
        }
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": s.model,
            "content": [{"type": "text", "text": "hello"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return web.json_response(message)

        def event(kind: str, data: dict[str, Any]) -> bytes:
            return (
                f"event: {kind}\ndata: ".encode() + orjson.dumps({"type": kind, **data}) + b"\n\n"
            )

        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events = [
            event("message_start", {"message": start}),
            event(
                "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}
            ),
            *(
                event(
                    "content_block_delta",
                    {"index": 0, "delta": {"type": "text_delta", "text": f"part{i}"}},
                )
                for i in range(s.chunks)
            ),
            event("content_block_stop", {"index": 0}),
            event(
                "message_delta",
                {
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": s.output},
                },
            ),
            event("message_stop", {}),
        ]
        return await self._stream(request, events, drop_mid=body.get("model") == "drop-mid")

    async def _models(self, request: web.Request) -> web.StreamResponse:
        if self.record:
            with self._lock:
                self.seen.append(Seen(request.path, dict(request.headers), None))
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": self.script.model, "object": "model", "created": 0, "owned_by": "fake"}
                ],
            }
        )
