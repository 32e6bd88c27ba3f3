"""The model gateway's cost: the same calls straight to a fake upstream and through the gateway,
side by side in one run (interleaved rounds, so drift in machine load hits both alike).

Three processes, as in use: the fake upstream (tests/gateway/fake.py) in one, the gateway in this
one (on its own thread, as the harness runs it, with a call log as the harness keeps), the client
(standing in for an agent) in a third. Measured:
- added latency: the median of 2,000 sequential non-streaming chat calls through the gateway minus
  the median straight to the upstream (goal: at most 2 ms);
- throughput: 100 concurrent streaming chat calls (20 chunks each), calls per second through the
  gateway over straight (goal: at least 0.8), twice: from an upstream that streams as fast as the
  machine allows (the gateway's own CPU is then the limit: on one machine it competes with the
  client and the upstream for the same cores) and from one that sends a chunk every 10 ms (as a
  model does, faster than any streams its tokens: whether the gateway keeps up with 100 streams).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CALLS, STREAMS, CHUNKS, ROUNDS = 2000, 100, 20, 5
PACE_S = 0.01  # a paced upstream: a chunk every 10 ms, faster than models stream their tokens
BODY = {"model": "gpt-x", "messages": [{"role": "user", "content": "hello"}]}


def serve_upstream() -> None:
    """--upstream: run the fake upstream, print its URL, serve until stdin closes."""
    from tests.gateway.fake import FakeUpstream, Script

    fake = FakeUpstream(Script(chunks=CHUNKS), record=False).start()
    print(fake.url, flush=True)
    sys.stdin.read()
    fake.stop()


async def _latencies(base: str, token: str, n: int) -> list[float]:
    import aiohttp

    headers = {"Authorization": f"Bearer {token}"}
    out = []
    async with aiohttp.ClientSession() as session:
        for _ in range(n):
            t = time.perf_counter()
            async with session.post(base + "/chat/completions", json=BODY, headers=headers) as r:
                await r.read()
                assert r.status == 200, r.status
            out.append(time.perf_counter() - t)
    return out


async def _streams(base: str, token: str, n: int, delay_s: float = 0.0) -> float:
    import aiohttp

    headers = {"Authorization": f"Bearer {token}"}
    body = {**BODY, "stream": True, "metadata": {"chunk_delay_s": str(delay_s)}}

    async def one(session: aiohttp.ClientSession) -> None:
        async with session.post(base + "/chat/completions", json=body, headers=headers) as r:
            assert r.status == 200, r.status
            data = await r.read()
            assert data.endswith(b"data: [DONE]\n\n")

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        t = time.perf_counter()
        await asyncio.gather(*(one(session) for _ in range(n)))
        return time.perf_counter() - t


def client(direct: str, gateway: str, token: str) -> None:
    """--client: the measurements, printed as JSON (one process for both sides)."""
    rounds = []
    for _ in range(ROUNDS):
        d = asyncio.run(_latencies(direct, "sk-direct", CALLS // ROUNDS))
        g = asyncio.run(_latencies(gateway, token, CALLS // ROUNDS))
        sd = asyncio.run(_streams(direct, "sk-direct", STREAMS))
        sg = asyncio.run(_streams(gateway, token, STREAMS))
        pd = asyncio.run(_streams(direct, "sk-direct", STREAMS, PACE_S))
        pg = asyncio.run(_streams(gateway, token, STREAMS, PACE_S))
        rounds.append((d, g, sd, sg, pd, pg))
    print(json.dumps({"rounds": rounds}))


def main() -> None:
    from trialbook.gateway import Gateway

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    work = Path(tempfile.mkdtemp(prefix="tb-bench-gw-"))
    upstream = subprocess.Popen(
        [sys.executable, __file__, "--upstream"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert upstream.stdout is not None
        url = upstream.stdout.readline().strip()
        with Gateway(url + "/v1", url, "sk-bench-real-key") as gateway:
            attempt = gateway.open_attempt("bench", log=work / "calls.jsonl")
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--client",
                    url + "/v1",
                    attempt["OPENAI_BASE_URL"],
                    attempt["OPENAI_API_KEY"],
                ],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            usage = gateway.close_attempt("bench")
        rounds = json.loads(out.stdout)["rounds"]
    finally:
        if upstream.stdin is not None:
            upstream.stdin.close()
        upstream.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    direct = [x for r in rounds for x in r[0]]
    through = [x for r in rounds for x in r[1]]
    md, mg = statistics.median(direct), statistics.median(through)
    ratios = [r[2] / r[3] for r in rounds]  # calls/s through over calls/s direct
    best_d, best_g = min(r[2] for r in rounds), min(r[3] for r in rounds)
    paced = [r[4] / r[5] for r in rounds]
    best_pd, best_pg = min(r[4] for r in rounds), min(r[5] for r in rounds)
    expected_calls = ROUNDS * (CALLS // ROUNDS + 2 * STREAMS)
    assert usage.calls == expected_calls, usage
    assert usage.provider_failures == (), usage
    print(
        json.dumps(
            {
                "benchmark": "gateway",
                "calls_per_side": len(direct),
                "rounds": ROUNDS,
                "median_call_ms_direct": round(md * 1e3, 3),
                "median_call_ms_gateway": round(mg * 1e3, 3),
                "added_latency_ms": round((mg - md) * 1e3, 3),
                "target_added_latency_ms_max": 2.0,
                "concurrent_streams": STREAMS,
                "chunks_per_stream": CHUNKS,
                "streams_per_s_direct": round(STREAMS / best_d, 1),
                "streams_per_s_gateway": round(STREAMS / best_g, 1),
                "throughput_ratio_gateway_vs_direct": round(best_d / best_g, 3),
                "throughput_ratio_median_of_rounds": round(statistics.median(ratios), 3),
                "round_ratios": [round(r, 3) for r in ratios],
                "paced_chunk_interval_s": PACE_S,
                "paced_streams_per_s_direct": round(STREAMS / best_pd, 1),
                "paced_streams_per_s_gateway": round(STREAMS / best_pg, 1),
                "paced_throughput_ratio_gateway_vs_direct": round(best_pd / best_pg, 3),
                "paced_round_ratios": [round(r, 3) for r in paced],
                "target_throughput_ratio_min": 0.8,
                "cpus": os.cpu_count(),
                "gateway_calls_metered": usage.calls,
                "python": sys.version.split()[0],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--upstream"]:
        serve_upstream()
    elif sys.argv[1:2] == ["--client"]:
        client(*sys.argv[2:5])
    else:
        main()
