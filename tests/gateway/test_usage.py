"""Reading usage out of answers and streams, event by event, whatever the chunking."""

from __future__ import annotations

import itertools

import orjson
from hypothesis import given
from hypothesis import strategies as st

from trialbook.gateway._usage import (
    CallUsage,
    EventSplitter,
    OpenAIChatStream,
    anthropic_tokens,
    body_usage,
    openai_tokens,
)

EVENTS = [
    b'data: {"model":"m","choices":[{"delta":{"content":"a"}}],"usage":null}\n\n',
    b'data: {"model":"m","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":5,'
    b'"prompt_tokens_details":{"cached_tokens":20}}}\r\n\r\n',
    b"data: [DONE]\n\n",
]


@given(st.lists(st.integers(min_value=0, max_value=sum(map(len, EVENTS))), max_size=8))
def test_events_come_out_whole_however_the_bytes_are_cut(cuts: list[int]) -> None:
    stream = b"".join(EVENTS)
    points = sorted({0, *cuts, len(stream)})
    splitter = EventSplitter()
    out: list[bytes] = []
    for lo, hi in itertools.pairwise(points):
        out += splitter.feed(stream[lo:hi])
    assert out == EVENTS
    assert splitter.rest() == b""


def test_a_stream_of_plain_newlines_splits_the_same_way() -> None:
    events = [b'data: {"a":1}\n\n', b"event: x\ndata: {}\n\n", b"data: [DONE]\n\n"]
    splitter = EventSplitter()
    stream = b"".join(events)
    out = splitter.feed(stream[:5]) + splitter.feed(stream[5:21]) + splitter.feed(stream[21:])
    assert out == events
    assert splitter.feed(b"data: cut") == []
    assert splitter.rest() == b"data: cut"


def test_the_usage_chunk_asked_for_by_the_gateway_is_dropped_and_read() -> None:
    usage = CallUsage()
    reader = OpenAIChatStream(usage, strip_usage=True)
    assert [reader.event(e) for e in EVENTS] == [True, False, True]
    # prompt_tokens counts the cached ones: 50 - 20 uncached
    assert (usage.input, usage.output, usage.cache_read, usage.model) == (30, 5, 20, "m")
    kept = CallUsage()
    assert all(OpenAIChatStream(kept, strip_usage=False).event(e) for e in EVENTS)


def test_openai_and_anthropic_usage_shapes() -> None:
    u = CallUsage()
    openai_tokens(
        {"input_tokens": 10, "output_tokens": 3, "input_tokens_details": {"cached_tokens": 4}}, u
    )
    assert (u.input, u.output, u.cache_read, u.cache_write) == (6, 3, 4, 0)
    # hostile or broken figures count as nothing, and cached never exceeds the prompt
    openai_tokens(
        {
            "prompt_tokens": 5,
            "completion_tokens": -3,
            "prompt_tokens_details": {"cached_tokens": 9},
        },
        u,
    )
    assert (u.input, u.output, u.cache_read) == (0, 0, 5)
    a = CallUsage()
    anthropic_tokens({"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": None}, a)
    anthropic_tokens({"output_tokens": 40}, a)  # message_delta: cumulative, only what it names
    assert (a.input, a.output, a.cache_read, a.cache_write) == (7, 40, 0, 0)
    b = CallUsage()
    body_usage("openai", b"<html>bad gateway</html>", b)
    assert not b.reported
    body_usage(
        "anthropic",
        orjson.dumps({"model": "c", "usage": {"input_tokens": 2, "output_tokens": 1}}),
        b,
    )
    assert (b.model, b.input, b.output, b.reported) == ("c", 2, 1, True)
