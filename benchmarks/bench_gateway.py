"""The model gateway's cost: the same calls straight to a fake upstream and through the gateway,
side by side in one run (interleaved rounds, so drift in machine load hits both alike).

Three processes, as in use: the fake upstream (tests/gateway/fake.py) in one, the gateway in this
one (on its own thread, as the harness runs it, with a call log as the harness keeps), the client
(standing in for an agent) in a third. This process runs the rounds phase by phase, asking each
process for its CPU seconds (``getrusage``) before and after each phase. Measured:
- added latency: the median of 2,000 sequential non-streaming chat calls through the gateway minus
  the median straight to the upstream (goal: at most 2 ms);
- throughput: 100 concurrent streaming chat calls (20 chunks each), calls per second through the
  gateway over straight (goal: at least 0.8), twice: from an upstream that streams as fast as the
  machine allows (the gateway's own CPU is then the limit: on one machine it competes with the
  client and the upstream for the same cores) and from one that sends a chunk every 10 ms (as a
  model does, faster than any streams its tokens: whether the gateway keeps up with 100 streams);
- CPU per streamed call (fast upstream) of each process, straight and through, and the bound they
  put on the throughput ratio when the cores are the limit: the CPU a call costs straight over
  what it costs through, (client + upstream) / (client + upstream + gateway). Wall-clock ratios
  swing with the load other work puts on a shared machine; CPU seconds per call hardly do.

``--profile FILE``: also profile the gateway's thread (cProfile) over the fast streaming phases
and write the stats to FILE (read with ``python -m pstats FILE``).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CALLS, STREAMS, CHUNKS, ROUNDS = 2000, 100, 20, 5
PACE_S = 0.01  # a paced upstream: a chunk every 10 ms, faster than models stream their tokens
BODY = {"model": "gpt-x", "messages": [{"role": "user", "content": "hello"}]}


def _cpu_s() -> float:
    """This process's CPU seconds so far (user + system, every thread)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def serve_upstream() -> None:
    """--upstream: run the fake upstream, print its URL, then answer each line on stdin with
    its CPU seconds so far; stop when stdin closes."""
    from tests.gateway.fake import FakeUpstream, Script

    fake = FakeUpstream(Script(chunks=CHUNKS), record=False).start()
    print(fake.url, flush=True)
    for _ in sys.stdin:
        print(repr(_cpu_s()), flush=True)
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
    """--client: run each phase asked for on stdin (a JSON line), answer with its result and the
    CPU seconds this process spent in it."""
    sides = {"direct": (direct, "sk-direct"), "gateway": (gateway, token)}
    for line in sys.stdin:
        phase = json.loads(line)
        base, key = sides[phase["side"]]
        cpu = _cpu_s()
        result: Any
        if phase["kind"] == "latency":
            result = asyncio.run(_latencies(base, key, CALLS // ROUNDS))
        else:
            result = asyncio.run(_streams(base, key, STREAMS, phase["delay_s"]))
        print(json.dumps({"result": result, "client_cpu_s": _cpu_s() - cpu}), flush=True)


class _Phases:
    """Runs phases in the client and reads every process's CPU around each."""

    def __init__(self, upstream: subprocess.Popen[str], client: subprocess.Popen[str]) -> None:
        self.upstream, self.client = upstream, client

    def _upstream_cpu(self) -> float:
        assert self.upstream.stdin is not None
        assert self.upstream.stdout is not None
        self.upstream.stdin.write("cpu\n")
        self.upstream.stdin.flush()
        return float(self.upstream.stdout.readline())

    def run(self, **phase: Any) -> dict[str, Any]:
        assert self.client.stdin is not None
        assert self.client.stdout is not None
        up, gw = self._upstream_cpu(), _cpu_s()
        self.client.stdin.write(json.dumps(phase) + "\n")
        self.client.stdin.flush()
        line = self.client.stdout.readline()
        if not line:
            raise RuntimeError(f"the client died in phase {phase}")
        answer: dict[str, Any] = json.loads(line)
        # this process hosts the gateway alone: its main thread only waits on these pipes
        answer["gateway_cpu_s"] = _cpu_s() - gw
        answer["upstream_cpu_s"] = self._upstream_cpu() - up
        return answer


def _per_call(phases: list[dict[str, Any]], calls: int) -> dict[str, float]:
    """Milliseconds of CPU per call of each process, summed over ``phases``."""
    return {
        name: round(sum(p[f"{name}_cpu_s"] for p in phases) / calls * 1e3, 4)
        for name in ("client", "gateway", "upstream")
    }


def main(profile: Path | None = None) -> None:
    from trialbook.gateway import Gateway

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    work = Path(tempfile.mkdtemp(prefix="tb-bench-gw-"))
    pipes: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    upstream = subprocess.Popen([sys.executable, __file__, "--upstream"], env=env, **pipes)
    client_proc: subprocess.Popen[str] | None = None
    profiler = None
    try:
        assert upstream.stdout is not None
        url = upstream.stdout.readline().strip()
        with Gateway(url + "/v1", url, "sk-bench-real-key") as gateway:
            attempt = gateway.open_attempt("bench", log=work / "calls.jsonl")
            client_proc = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--client",
                    url + "/v1",
                    attempt["OPENAI_BASE_URL"],
                    attempt["OPENAI_API_KEY"],
                ],
                env=env,
                **pipes,
            )
            phases = _Phases(upstream, client_proc)
            if profile is not None:
                profiler = _thread_profiler(gateway)
            rounds = []
            for _ in range(ROUNDS):
                rounds.append(
                    [
                        phases.run(kind="latency", side="direct"),
                        phases.run(kind="latency", side="gateway"),
                        phases.run(kind="streams", side="direct", delay_s=0.0),
                        _profiled(profiler, phases, kind="streams", side="gateway", delay_s=0.0),
                        phases.run(kind="streams", side="direct", delay_s=PACE_S),
                        phases.run(kind="streams", side="gateway", delay_s=PACE_S),
                    ]
                )
            assert client_proc.stdin is not None
            client_proc.stdin.close()
            client_proc.wait(timeout=30)
            usage = gateway.close_attempt("bench")
    finally:
        if client_proc is not None and client_proc.poll() is None:
            client_proc.kill()
        if upstream.stdin is not None:
            upstream.stdin.close()
        upstream.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    if profiler is not None and profile is not None:
        profiler[0].dump_stats(profile)
    print(json.dumps(_figures(rounds, usage.calls), indent=2))
    assert usage.calls == ROUNDS * (CALLS // ROUNDS + 2 * STREAMS), usage
    assert usage.provider_failures == (), usage


def _thread_profiler(gateway: Any) -> Any:
    """A cProfile profiler that runs on the gateway's thread (enabled per phase, from there)."""
    import cProfile

    return cProfile.Profile(), gateway._server._loop


def _profiled(profiler: Any, phases: _Phases, **phase: Any) -> dict[str, Any]:
    if profiler is None:
        return phases.run(**phase)
    prof, loop = profiler
    asyncio.run_coroutine_threadsafe(_call(prof.enable), loop).result()
    try:
        return phases.run(**phase)
    finally:
        asyncio.run_coroutine_threadsafe(_call(prof.disable), loop).result()


async def _call(fn: Any) -> None:
    fn()


def _figures(rounds: list[list[dict[str, Any]]], metered: int) -> dict[str, Any]:
    direct = [x for r in rounds for x in r[0]["result"]]
    through = [x for r in rounds for x in r[1]["result"]]
    md, mg = statistics.median(direct), statistics.median(through)
    wall = [[p["result"] for p in r[2:]] for r in rounds]
    ratios = [w[0] / w[1] for w in wall]  # calls/s through over calls/s direct
    paced = [w[2] / w[3] for w in wall]
    best = [min(w[i] for w in wall) for i in range(4)]
    streamed = ROUNDS * STREAMS
    cpu_direct = _per_call([r[2] for r in rounds], streamed)
    cpu_through = _per_call([r[3] for r in rounds], streamed)
    straight = cpu_direct["client"] + cpu_direct["upstream"]
    total = cpu_through["client"] + cpu_through["upstream"] + cpu_through["gateway"]
    return {
        "benchmark": "gateway",
        "calls_per_side": len(direct),
        "rounds": ROUNDS,
        "median_call_ms_direct": round(md * 1e3, 3),
        "median_call_ms_gateway": round(mg * 1e3, 3),
        "added_latency_ms": round((mg - md) * 1e3, 3),
        "target_added_latency_ms_max": 2.0,
        "concurrent_streams": STREAMS,
        "chunks_per_stream": CHUNKS,
        "streams_per_s_direct": round(STREAMS / best[0], 1),
        "streams_per_s_gateway": round(STREAMS / best[1], 1),
        "throughput_ratio_gateway_vs_direct": round(best[0] / best[1], 3),
        "throughput_ratio_median_of_rounds": round(statistics.median(ratios), 3),
        "round_ratios": [round(r, 3) for r in ratios],
        "cpu_ms_per_streamed_call_direct": cpu_direct,
        "cpu_ms_per_streamed_call_through": cpu_through,
        # when the cores are the limit, calls/s go as 1 / (CPU per call of all processes)
        "cpu_bound_throughput_ratio": round(straight / total, 3),
        "paced_chunk_interval_s": PACE_S,
        "paced_streams_per_s_direct": round(STREAMS / best[2], 1),
        "paced_streams_per_s_gateway": round(STREAMS / best[3], 1),
        "paced_throughput_ratio_gateway_vs_direct": round(best[2] / best[3], 3),
        "paced_round_ratios": [round(r, 3) for r in paced],
        "target_throughput_ratio_min": 0.8,
        "cpus": os.cpu_count(),
        "gateway_calls_metered": metered,
        "python": sys.version.split()[0],
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--upstream"]:
        serve_upstream()
    elif sys.argv[1:2] == ["--client"]:
        client(*sys.argv[2:5])
    elif sys.argv[1:2] == ["--profile"]:
        main(Path(sys.argv[2]))
    else:
        main()
