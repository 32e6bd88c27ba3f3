"""The real ``openai`` and ``anthropic`` clients, pointed at the gateway by the attempt's environment.

Every expected figure is the fake upstream's script (tests/gateway/fake.py): OpenAI's
``prompt_tokens`` counts cached tokens in, so the gateway's ``input`` is prompt - cached.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anthropic
import openai
import pytest

from tests.gateway.conftest import REAL_KEY
from tests.gateway.fake import FakeUpstream
from trialbook.gateway import Gateway


def _openai(env: dict[str, str]) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"], max_retries=0
    )


def _anthropic(env: dict[str, str]) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=env["ANTHROPIC_BASE_URL"], api_key=env["ANTHROPIC_API_KEY"], max_retries=0
    )


MESSAGES = [{"role": "user", "content": "hi"}]


def test_openai_chat_usage_is_the_upstreams(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    env = gateway.open_attempt("t:0")
    client = _openai(env)
    answer = client.chat.completions.create(model="gpt-x", messages=MESSAGES)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "hello"
    chunks = list(client.chat.completions.create(model="gpt-x", messages=MESSAGES, stream=True))  # type: ignore[arg-type]
    usage = gateway.close_attempt("t:0")
    s = upstream.script
    # the stream did not ask for usage: the gateway asked, and the client never saw the extra chunk
    assert all(c.choices for c in chunks), "the usage chunk reached the client"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "part0part1part2"
    sent = upstream.seen[-1].body
    assert sent["stream_options"] == {"include_usage": True}
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (2, 2 * s.input, 2 * s.output)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (2 * s.cache_read, 0)
    assert usage.model_version == s.model
    assert usage.unmetered_calls == 0
    assert usage.seconds_in_calls > 0
    assert usage.cost is None  # no price table: not measured, never 0


def test_a_stream_that_asked_for_usage_keeps_its_usage_chunk(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    env = gateway.open_attempt("t:0")
    chunks = list(
        _openai(env).chat.completions.create(
            model="gpt-x",
            messages=MESSAGES,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    usage = gateway.close_attempt("t:0")
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.prompt_tokens == upstream.script.input + upstream.script.cache_read
    assert usage.input_tokens == upstream.script.input


def test_openai_responses_api_streaming_and_not(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    env = gateway.open_attempt("t:0")
    client = _openai(env)
    assert client.responses.create(model="gpt-x", input="hi").output_text == "hello"
    events = list(client.responses.create(model="gpt-x", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    usage = gateway.close_attempt("t:0")
    s = upstream.script
    assert (usage.calls, usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (
        2,
        2 * s.input,
        2 * s.output,
        2 * s.cache_read,
    )
    assert usage.model_version == s.model


def test_anthropic_messages_streaming_and_not(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    env = gateway.open_attempt("t:0")
    client = _anthropic(env)
    message = client.messages.create(model="claude-x", max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
    assert message.content[0].text == "hello"  # type: ignore[union-attr]
    with client.messages.stream(model="claude-x", max_tokens=10, messages=MESSAGES) as stream:  # type: ignore[arg-type]
        assert "".join(stream.text_stream) == "part0part1part2"
    usage = gateway.close_attempt("t:0")
    s = upstream.script
    # message_start says output_tokens 1; message_delta's cumulative figure (s.output) wins
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (2, 2 * s.input, 2 * s.output)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (
        2 * s.cache_read,
        2 * s.cache_write,
    )
    assert usage.model_version == s.model


def test_the_real_key_goes_upstream_and_the_token_does_not(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway = make_gateway()
    env = gateway.open_attempt("t:0", log=tmp_path / "calls.jsonl")
    _openai(env).chat.completions.create(model="gpt-x", messages=MESSAGES)  # type: ignore[arg-type]
    _anthropic(env).messages.create(model="claude-x", max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
    gateway.close_attempt("t:0")
    openai_seen, anthropic_seen = upstream.seen
    assert openai_seen.headers["Authorization"] == f"Bearer {REAL_KEY}"
    assert anthropic_seen.headers["x-api-key"] == REAL_KEY
    for seen in upstream.seen:
        assert env["OPENAI_API_KEY"] not in str(seen.headers)
    assert REAL_KEY not in str(env)


def test_provider_failures_reach_the_client_as_the_api_gives_them_and_are_counted(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway(read_timeout_s=0.3)
    upstream.script.slow_s = 1.0  # past the gateway's read timeout
    env = gateway.open_attempt("t:0")
    client = _openai(env)
    with pytest.raises(openai.InternalServerError) as e500:
        client.chat.completions.create(model="fail-500", messages=MESSAGES)  # type: ignore[arg-type]
    assert e500.value.status_code == 500
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="fail-429", messages=MESSAGES)  # type: ignore[arg-type]
    with pytest.raises(openai.InternalServerError) as dropped:
        client.chat.completions.create(model="drop", messages=MESSAGES)  # type: ignore[arg-type]
    assert dropped.value.status_code == 502
    with pytest.raises(openai.APIStatusError) as slow:
        client.chat.completions.create(model="slow", messages=MESSAGES)  # type: ignore[arg-type]
    assert slow.value.status_code == 504
    with pytest.raises(openai.APIConnectionError):
        list(client.chat.completions.create(model="drop-mid", messages=MESSAGES, stream=True))  # type: ignore[arg-type]
    with pytest.raises(anthropic.InternalServerError):
        _anthropic(env).messages.create(model="fail-500", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    usage = gateway.close_attempt("t:0")
    assert [str(f) for f in usage.provider_failures] == [
        "500",
        "429",
        "connection",
        "timeout",
        "dropped",
        "500",
    ]
    assert usage.failure_text() == "6 (500, 429, connection, timeout, dropped, 500)"
    assert usage.calls == 6
    # the stream dropped before its usage: its tokens are unknown, so the cost cannot be measured
    assert usage.unmetered_calls == 1
