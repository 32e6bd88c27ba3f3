"""Usage read from the upstream's own responses, never from what an agent says.

Tokens are kept in four disjoint kinds, so that they add up to everything the model read and wrote:
``input`` (input tokens neither read from nor written to the prompt cache), ``output``,
``cache_read`` and ``cache_write``. OpenAI reports ``prompt_tokens`` (or the responses API's
``input_tokens``) *including* ``cached_tokens``, so ``input = prompt_tokens - cached_tokens``;
Anthropic reports the three input kinds apart already (``input_tokens``,
``cache_read_input_tokens``, ``cache_creation_input_tokens``).

Streams (server-sent events) are read event by event as they pass:

- OpenAI chat completions put usage in a last chunk with no choices, sent only when the request
  asked for it (``stream_options.include_usage``). The gateway asks when the client did not, and
  then drops that one chunk before the client sees it (:class:`OpenAIChatStream`).
- The OpenAI responses API sends the whole response, usage included, in ``response.completed``.
- Anthropic sends usage in ``message_start`` and cumulative figures in ``message_delta``: the last
  figure of each kind is the call's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "AnthropicStream",
    "CallUsage",
    "EventSplitter",
    "OpenAIChatStream",
    "ResponsesStream",
    "StreamReader",
    "anthropic_tokens",
    "body_usage",
    "openai_tokens",
    "stream_reader",
]


@dataclass
class CallUsage:
    """What one call used, as the upstream answered (filled as the answer passes)."""

    model: str | None = None
    """The model name in the upstream's answer (a dated snapshot, where the provider gives one)."""
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reported: bool = False
    """True once the answer carried a usage figure (a call without one used unknown tokens)."""

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write


def _count(value: object) -> int:
    """A token count from the upstream's JSON: a non-negative int, anything else 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return 0


def openai_tokens(usage: Mapping[str, Any], into: CallUsage) -> None:
    """OpenAI ``usage`` (chat completions, completions, embeddings or the responses API)."""
    if "prompt_tokens" in usage:
        prompt, out = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        details = usage.get("prompt_tokens_details")
    else:
        prompt, out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
        details = usage.get("input_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    cached = min(cached, prompt)
    into.input, into.output, into.cache_read, into.cache_write = prompt - cached, out, cached, 0
    into.reported = True


def anthropic_tokens(usage: Mapping[str, Any], into: CallUsage) -> None:
    """Anthropic ``usage``: only the kinds present are set (``message_delta`` is cumulative)."""
    for name, attr in (
        ("input_tokens", "input"),
        ("output_tokens", "output"),
        ("cache_read_input_tokens", "cache_read"),
        ("cache_creation_input_tokens", "cache_write"),
    ):
        if usage.get(name) is not None:
            setattr(into, attr, _count(usage[name]))
    into.reported = True


def _model(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def body_usage(api: str, body: bytes, into: CallUsage) -> None:
    """Usage and model of a whole (not streamed) JSON answer; a body that is not JSON adds nothing."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return
    if not isinstance(data, dict):
        return
    into.model = _model(data.get("model")) or into.model
    usage = data.get("usage")
    if isinstance(usage, dict):
        (anthropic_tokens if api == "anthropic" else openai_tokens)(usage, into)


class EventSplitter:
    """Bytes of a server-sent event stream in, whole events (with their blank-line end) out."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        data = self._buffer + chunk if self._buffer else chunk
        if b"\r" not in data:  # the usual stream: events end in a blank line of "\n"
            *whole, self._buffer = data.split(b"\n\n")
            return [event + b"\n\n" for event in whole]
        events: list[bytes] = []
        start = 0
        while True:
            end, size = _boundary(data, start)
            if end < 0:
                break
            events.append(data[start : end + size])
            start = end + size
        self._buffer = data[start:]
        return events

    def feed_through(self, chunk: bytes, reader: StreamReader) -> bytes:
        """The whole events of ``chunk`` (and what was held back) the client is to see.

        The same bytes as joining the events of :meth:`feed` that ``reader.event`` keeps, with less
        work: only the events ``reader`` wants to read are cut out (:meth:`StreamReader.find`);
        the runs between them, most of a stream, pass on as they came.
        """
        data = self._buffer + chunk if self._buffer else chunk
        if b"\r" in data:
            self._buffer = b""
            return b"".join(e for e in self.feed(data) if reader.event(e))
        size = _after_last_event(data)
        if not size:
            self._buffer = data
            return b""
        whole, self._buffer = data[:size], data[size:]
        kept: list[bytes] = []
        done = 0  # whole[:done] is dealt with
        while done < size and (start := reader.find(whole, done)) >= 0:
            stop = whole.find(b"\n\n", start) + 2
            kept.append(whole[done:start])
            event = whole[start:stop]
            if reader.read(event):
                kept.append(event)
            done = stop
        if not done:
            return whole
        kept.append(whole[done:])
        return b"".join(kept)

    def rest(self) -> bytes:
        """What is left after the stream ended (an event cut short)."""
        rest, self._buffer = self._buffer, b""
        return rest


def _boundary(data: bytes, start: int) -> tuple[int, int]:
    """Index and length of the first blank line (event end) at or after ``start``; (-1, 0) if none."""
    found = [
        (i, len(sep))
        for sep in (b"\n\n", b"\r\n\r\n", b"\r\r")
        if (i := data.find(sep, start)) >= 0
    ]
    return min(found) if found else (-1, 0)


def _data(event: bytes) -> Any:
    """The JSON of an event's ``data:`` lines, or None (``[DONE]``, comments, not JSON)."""
    lines = [
        line[5:].lstrip(b" ")
        for line in event.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        if line.startswith(b"data:")
    ]
    if not lines:
        return None
    try:
        return orjson.loads(b"\n".join(lines))
    except orjson.JSONDecodeError:
        return None


# an event that may carry a usage figure: only these (and the first, for the model) are parsed
_USAGE = re.compile(rb'"usage"\s*:\s*\{')
_ANTHROPIC_USAGE = (b"message_start", b"message_delta")


def _after_last_event(data: bytes) -> int:
    """Where the last whole event of ``data`` (which begins with an event) ends; 0 if none does.

    Events end at the first blank line, so in a run of newlines the boundaries pair them from the
    run's first: of three, two end an event and the third begins the next."""
    end = data.rfind(b"\n\n")
    if end < 0:
        return 0
    first = end
    while first > 0 and data[first - 1] == 10:
        first -= 1
    return first + (end + 2 - first) // 2 * 2


def _event_start(events: bytes, start: int, at: int) -> int:
    """The beginning of the event that holds index ``at``, as :meth:`EventSplitter.feed` cuts
    them: from ``start`` (an event's beginning) each event ends at the first blank line, so in a run
    of newlines the boundaries pair them from the run's first."""
    end = events.rfind(b"\n\n", start, at)
    if end < 0:
        return start
    first, last = end, end + 2
    while first > start and events[first - 1] == 10:
        first -= 1
    while last < at and events[last] == 10:
        last += 1
    return first + (last - first) // 2 * 2


class StreamReader:
    """Reads one kind of stream; :meth:`event` says whether the client is to see the event."""

    def __init__(self, into: CallUsage) -> None:
        self.usage = into

    def find(self, events: bytes, start: int) -> int:
        """Where the first event worth parsing begins in whole ``events``, from index ``start``
        (at an event's beginning) on; -1 when none is. Most events, text deltas, are not: until
        the model is known each is, then only those that may carry a usage figure."""
        if self.usage.model is None:
            return start
        found = _USAGE.search(events, start)
        return -1 if found is None else _event_start(events, start, found.start())

    def wanted(self, event: bytes) -> bool:
        """Whether the event is worth parsing (most are text deltas, passed unread)."""
        return self.find(event, 0) >= 0

    def event(self, event: bytes) -> bool:
        """Read the event if it is worth it; whether the client is to see it."""
        return self.read(event) if self.wanted(event) else True

    def read(self, event: bytes) -> bool:
        """Read the event (:meth:`find` found it worth it); whether the client is to see it."""
        data = _data(event)
        if isinstance(data, dict):
            return self.observe(data)
        return True

    def observe(self, data: dict[str, Any]) -> bool:
        raise NotImplementedError


class OpenAIChatStream(StreamReader):
    """Chat completion chunks; ``strip_usage``: drop the usage chunk the gateway asked for."""

    def __init__(self, into: CallUsage, *, strip_usage: bool) -> None:
        super().__init__(into)
        self.strip_usage = strip_usage

    def observe(self, data: dict[str, Any]) -> bool:
        self.usage.model = _model(data.get("model")) or self.usage.model
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return True
        openai_tokens(usage, self.usage)
        return not (self.strip_usage and not data.get("choices"))


class ResponsesStream(StreamReader):
    """The responses API's events: the response, usage included, in the last one."""

    def observe(self, data: dict[str, Any]) -> bool:
        response = data.get("response")
        if isinstance(response, dict):
            self.usage.model = _model(response.get("model")) or self.usage.model
            usage = response.get("usage")
            if isinstance(usage, dict):
                openai_tokens(usage, self.usage)
        return True


class AnthropicStream(StreamReader):
    """Anthropic message events: usage in ``message_start``, cumulative in ``message_delta``."""

    def find(self, events: bytes, start: int) -> int:
        found = [i for kind in _ANTHROPIC_USAGE if (i := events.find(kind, start)) >= 0]
        return _event_start(events, start, min(found)) if found else -1

    def observe(self, data: dict[str, Any]) -> bool:
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = data["message"]
            self.usage.model = _model(message.get("model")) or self.usage.model
            if isinstance(message.get("usage"), dict):
                anthropic_tokens(message["usage"], self.usage)
        elif kind == "message_delta" and isinstance(data.get("usage"), dict):
            anthropic_tokens(data["usage"], self.usage)
        return True


class _Other(StreamReader):
    """A stream of an endpoint the gateway does not meter: passed through, nothing read."""

    def find(self, events: bytes, start: int) -> int:
        return -1


def stream_reader(api: str, path: str, into: CallUsage, *, strip_usage: bool) -> StreamReader:
    """The reader for a stream of ``api`` (``openai`` or ``anthropic``) at upstream ``path``."""
    if api == "anthropic":
        return AnthropicStream(into)
    if path.endswith("chat/completions"):
        return OpenAIChatStream(into, strip_usage=strip_usage)
    if path.endswith("responses"):
        return ResponsesStream(into)
    return _Other(into)
