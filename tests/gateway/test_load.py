"""Many streams at once, and the unix socket the sandbox tiers will reach the gateway by."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import aiohttp
import openai
import orjson

from tests.gateway.fake import FakeUpstream
from trialbook.gateway import Gateway

STREAMS = 500


async def _streams(env: dict[str, str], n: int) -> list[str]:
    client = openai.AsyncOpenAI(
        base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"], max_retries=0, timeout=120
    )

    async def one(i: int) -> str:
        stream = await client.chat.completions.create(
            model="gpt-x",
            messages=[{"role": "user", "content": str(i)}],
            stream=True,
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream])

    try:
        return await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        await client.close()


def test_500_concurrent_streams_all_arrive_whole_and_are_all_counted(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    upstream.record = False
    gateway = make_gateway()
    env = gateway.open_attempt("hostile")
    texts = asyncio.run(_streams(env, STREAMS))
    usage = gateway.close_attempt("hostile")
    s = upstream.script
    assert texts == ["part0part1part2"] * STREAMS
    assert usage.calls == STREAMS
    assert usage.provider_failures == ()
    assert usage.input_tokens == STREAMS * s.input
    assert usage.output_tokens == STREAMS * s.output
    assert usage.cache_read_tokens == STREAMS * s.cache_read
    assert usage.unmetered_calls == 0


def test_the_gateway_answers_on_its_unix_socket_too(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, tmp_path: Path
) -> None:
    socket = tmp_path / "gw.sock"
    gateway = make_gateway(unix_socket=socket)
    env = gateway.open_attempt("t")
    path = env["OPENAI_BASE_URL"].removeprefix(gateway.url) + "/chat/completions"

    async def call() -> tuple[int, dict[str, object]]:
        async with (
            aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(socket))) as session,
            session.post(
                "http://gateway" + path,
                json={"model": "gpt-x", "messages": []},
                headers={"Authorization": f"Bearer {env['OPENAI_API_KEY']}"},
            ) as answer,
        ):
            return answer.status, orjson.loads(await answer.read())

    status, body = asyncio.run(call())
    assert status == 200
    assert body["model"] == upstream.script.model
    assert gateway.close_attempt("t").calls == 1


def test_the_gateway_serves_on_uvloop_where_the_gateway_extra_installed_it() -> None:
    # the 'gateway' extra installs uvloop (pyproject.toml), as make's venv and CI do
    import uvloop

    from trialbook.gateway import _server

    loop = _server._new_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()
