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
    stream_reader,
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


# pieces of streams of every kind the gateway reads, and of what a stream may hold beside events:
# comments, blank lines, stray newlines and carriage returns, an event cut short at the end
PIECES = [
    b'data: {"model":"m","choices":[{"delta":{"content":"a"}}],"usage":null}\n\n',
    b'data: {"choices":[{"delta":{"content":"b"}}]}\n\n',
    b'data: {"model":"m","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":5}}\n\n',
    b'data: {"choices":[],"usage" : {"prompt_tokens":7,"completion_tokens":2}}\r\n\r\n',
    b'event: message_start\ndata: {"type":"message_start","message":{"model":"c",'
    b'"usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
    b'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n',
    b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":4}}\n\n',
    b'event: response.completed\ndata: {"type":"response.completed","response":{"model":"r",'
    b'"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
    b": ping\n\n",
    b"\n",
    b"\n\n",
    b"\n\n\n",
    b"data: [DONE]\n\n",
    b"data: not json\n\n",
    b'data: {"usage":{"cut',
]
READERS = [
    ("openai", "chat/completions", True),
    ("openai", "chat/completions", False),
    ("openai", "responses", False),
    ("anthropic", "v1/messages", False),
    ("openai", "embeddings", False),
]


@given(
    st.lists(st.sampled_from(PIECES), max_size=12),
    st.lists(st.integers(min_value=0, max_value=2000), max_size=8),
    st.sampled_from(READERS),
)
def test_passing_runs_of_events_unsplit_gives_what_splitting_every_event_gives(
    pieces: list[bytes], cuts: list[int], kind: tuple[str, str, bool]
) -> None:
    """feed_through cuts out only the events its reader wants; what the client gets and the
    usage read must be byte for byte those of reading every event, however the bytes come."""
    api, path, strip = kind
    stream = b"".join(pieces)
    points = sorted({0, *(c for c in cuts if c < len(stream)), len(stream)})
    fast, slow = EventSplitter(), EventSplitter()
    fast_usage, slow_usage = CallUsage(), CallUsage()
    fast_reader = stream_reader(api, path, fast_usage, strip_usage=strip)
    slow_reader = stream_reader(api, path, slow_usage, strip_usage=strip)
    fast_out, slow_out = b"", b""
    for lo, hi in itertools.pairwise(points):
        fast_out += fast.feed_through(stream[lo:hi], fast_reader)
        slow_out += b"".join(e for e in slow.feed(stream[lo:hi]) if slow_reader.event(e))
    assert fast_out + fast.rest() == slow_out + slow.rest()
    assert fast_usage == slow_usage


def test_a_run_of_text_deltas_passes_unsplit_and_the_usage_chunk_alone_is_cut_out() -> None:
    deltas = b"".join(
        b'data: {"model":"m","choices":[{"delta":{"content":"%d"}}],"usage":null}\n\n' % i
        for i in range(5)
    )
    usage_chunk = (
        b'data: {"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n'
    )
    usage = CallUsage()
    reader = OpenAIChatStream(usage, strip_usage=True)
    out = EventSplitter().feed_through(deltas + usage_chunk + b"data: [DONE]\n\n", reader)
    assert out == deltas + b"data: [DONE]\n\n"
    assert (usage.input, usage.output, usage.model) == (3, 1, "m")
