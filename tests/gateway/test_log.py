"""The call log: every call kept, credentials nowhere, bounded with the cut said."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import openai
import orjson
import pytest

from tests.gateway.conftest import REAL_KEY
from tests.gateway.fake import FakeUpstream
from trialbook.gateway import Gateway


def _client(env: dict[str, str], token: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=env["OPENAI_BASE_URL"], api_key=token or env["OPENAI_API_KEY"], max_retries=0
    )


def test_every_call_is_kept_and_no_key_or_token_is_in_the_log(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, tmp_path: Path
) -> None:
    gateway = make_gateway()
    other = gateway.open_attempt("other")
    env = gateway.open_attempt("t", log=tmp_path / "calls.jsonl")
    client = _client(env)
    token = env["OPENAI_API_KEY"]
    # a hostile agent pastes its token and another attempt's into what it sends
    pasted = f"my key is {token}, theirs is {other['OPENAI_API_KEY']}"
    client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": pasted}])
    list(
        client.chat.completions.create(
            model="gpt-x", messages=[{"role": "user", "content": "s"}], stream=True
        )
    )
    with pytest.raises(openai.AuthenticationError):
        _client(env, other["OPENAI_API_KEY"]).models.list()
    # a provider quoting the key it was sent: the client does not get it either
    with pytest.raises(openai.AuthenticationError) as quoted:
        client.chat.completions.create(
            model="echo-key", messages=[{"role": "user", "content": "x"}]
        )
    assert REAL_KEY not in str(quoted.value.body)
    assert "[redacted]" in str(quoted.value.body)
    usage = gateway.close_attempt("t")
    gateway.close_attempt("other")
    text = (tmp_path / "calls.jsonl").read_text()
    for secret in (REAL_KEY, token, other["OPENAI_API_KEY"]):
        assert secret not in text
    records = [orjson.loads(line) for line in text.splitlines()]
    assert [r["outcome"] for r in records] == ["passed", "passed", "refused", "passed"]
    # every call's path as the agent called it, passed up or refused
    assert [r["path"] for r in records] == [
        "v1/chat/completions",
        "v1/chat/completions",
        "v1/models",
        "v1/chat/completions",
    ]
    assert usage.log == str(tmp_path / "calls.jsonl")
    first = records[0]
    assert first["request_headers"]["Authorization"] == "[redacted]"
    assert "my key is [redacted], theirs is [redacted]" in first["request_body"]
    assert first["usage"] == {
        "input": upstream.script.input,
        "output": upstream.script.output,
        "cache_read": upstream.script.cache_read,
        "cache_write": 0,
    }
    assert first["model"] == upstream.script.model
    assert "part0" in records[1]["response_body"]
    # the gateway asked the stream for usage: the upstream was sent what the log shows
    assert '"include_usage":true' in records[1]["request_body"]


def test_bodies_and_the_file_are_bounded_and_the_cut_is_said(
    make_gateway: Callable[..., Gateway], tmp_path: Path
) -> None:
    gateway = make_gateway(log_body_limit=200, log_file_limit=4000)
    env = gateway.open_attempt("t", log=tmp_path / "calls.jsonl")
    client = _client(env)
    client.chat.completions.create(
        model="gpt-x", messages=[{"role": "user", "content": "x" * 5000}]
    )
    for _ in range(20):
        client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "y"}])
    usage = gateway.close_attempt("t")
    path = tmp_path / "calls.jsonl"
    records = [orjson.loads(line) for line in path.read_text().splitlines()]
    assert len(records[0]["request_body"]) == 200
    assert records[0]["request_body_cut"].startswith("kept the first 200 characters of ")
    assert "cut" in records[-1]
    assert "counted but not kept" in records[-1]["cut"]
    assert path.stat().st_size <= 4000
    assert usage.calls == 21  # every call counted, kept or not


def test_closing_an_attempt_waits_for_its_call_in_flight_and_its_log_line(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, tmp_path: Path
) -> None:
    upstream.script.slow_s = 0.5
    gateway = make_gateway()
    env = gateway.open_attempt("t", log=tmp_path / "calls.jsonl")
    answers: list[str] = []

    def call() -> None:
        answer = _client(env).chat.completions.create(
            model="slow", messages=[{"role": "user", "content": "x"}]
        )
        answers.append(answer.model)

    thread = threading.Thread(target=call)
    thread.start()
    while not upstream.seen:  # the call has reached the upstream: it is in flight
        time.sleep(0.01)
    usage = gateway.close_attempt("t")
    thread.join()
    assert answers == [upstream.script.model]
    assert usage.calls == 1
    assert usage.output_tokens == upstream.script.output
    lines = (tmp_path / "calls.jsonl").read_text().splitlines()
    assert len(lines) == 1, "the call's log line was lost when the attempt closed"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("y", id="buffered: fails when the close writes it out"),
        pytest.param("z" * (100 << 10), id="past the 64 KiB block: fails at its write"),
    ],
)
def test_a_log_that_cannot_be_written_says_why_in_the_attempts_usage(
    make_gateway: Callable[..., Gateway], tmp_path: Path, content: str
) -> None:
    # /dev/full fails every write with ENOSPC, as a full disk does
    gateway = make_gateway(log_body_limit=200 << 10)
    env = gateway.open_attempt("t", log=Path("/dev/full"))
    client = _client(env)
    client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": content}])
    usage = gateway.close_attempt("t")
    assert usage.calls == 1  # a log that fails stops itself, never the call
    assert usage.log_error == f"the call log stopped: {os.strerror(errno.ENOSPC)}"
    fine = gateway.open_attempt("u", log=tmp_path / "calls.jsonl")
    _client(fine).chat.completions.create(
        model="gpt-x", messages=[{"role": "user", "content": "y"}]
    )
    assert gateway.close_attempt("u").log_error is None
