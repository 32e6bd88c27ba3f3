"""A run through the model gateway (process and bwrap tiers): real clients as agents, the
gateway's figures in the rows, hostile agents (a usage file claiming 0 cost; one that tries the
internet, the host's loopback and a guessed token; two open at once that steal each other's
token; one searching all it can reach for the real key; one that keeps calling past its budget;
one opening 500 streams at once; one whose provider fails).

Expected figures are the fake upstream's script (tests/gateway/fake.py): an OpenAI call's
tokens_in is its prompt_tokens (input + cache_read), an Anthropic call's is input + cache_read +
cache_write; tokens_out is output.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import make_suite
from tests.gateway.fake import FakeUpstream, Script
from tests.harness.test_run import TIERS, _tier_param, unique_run_id
from trialbook.cli import main
from trialbook.errors import ArgumentError
from trialbook.gateway import AttemptUsage
from trialbook.harness import ModelOptions, RunOptions, run_suite
from trialbook.harness.attempt import AttemptSpec
from trialbook.harness.run._model import ModelGateway
from trialbook.ledger import ledger_rows, read_ledger

REAL_KEY = "sk-real-run-" + "Z" * 32
KEY_ENV = "TB_TEST_MODEL_KEY"

AGENT = r"""
import json, os, sys
from pathlib import Path
import anthropic, openai

mode = sys.argv[1]
# a hostile agent shows all its environment (kept in its transcript, which the test searches)
print(json.dumps(dict(os.environ)))
chat = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
msgs = [{"role": "user", "content": "hi"}]
if mode == "ok":
    chat.chat.completions.create(model="gpt-x", messages=msgs)
    list(chat.chat.completions.create(model="gpt-x", messages=msgs, stream=True))
    anthropic.Anthropic(max_retries=0).messages.create(model="claude-x", max_tokens=5, messages=msgs)
    with open(os.environ["TRIALBOOK_USAGE_FILE"], "a") as f:  # it claims it cost nothing
        f.write(json.dumps({"tokens_in": 0, "tokens_out": 0, "cost": 0.0}) + "\n")
elif mode == "fail":
    try:
        chat.chat.completions.create(model="fail-500", messages=msgs)
    except openai.InternalServerError:
        sys.exit(1)
elif mode == "escape":
    import socket
    tried = {}
    for name, address in (
        ("internet", ("1.1.1.1", 53)),
        ("upstream", ("127.0.0.1", int(os.environ["UPSTREAM_PORT"]))),
    ):
        try:
            socket.create_connection(address, timeout=3).close()
            tried[name] = "reached"
        except OSError as exc:
            tried[name] = type(exc).__name__
    guessed = openai.OpenAI(api_key="tb-gw-" + "A" * 43, max_retries=0)
    try:
        guessed.chat.completions.create(model="gpt-x", messages=msgs)
        tried["guessed token"] = "reached"
    except openai.AuthenticationError:
        tried["guessed token"] = "refused"
    chat.chat.completions.create(model="gpt-x", messages=msgs)  # the gateway itself: reached
    print(json.dumps(tried))
    if "reached" in tried.values():
        sys.exit(1)
elif mode == "flood":  # 500 streams at once, through the sandbox's forwarder
    import asyncio

    async def flood():
        client = openai.AsyncOpenAI(max_retries=0, timeout=120)

        async def one():
            stream = await client.chat.completions.create(model="gpt-x", messages=msgs, stream=True)
            return "".join([c.choices[0].delta.content or "" async for c in stream])

        texts = await asyncio.gather(*(one() for _ in range(500)))
        await client.close()
        return texts

    if asyncio.run(flood()) != ["part0part1part2"] * 500:
        sys.exit(1)
elif mode == "stray":  # a call at an address no attempt holds (a guessed one)
    import re
    guessed = re.sub(r"/a/[0-9a-f]+/", "/a/0123456789abcdef/", os.environ["OPENAI_BASE_URL"])
    try:
        openai.OpenAI(base_url=guessed, max_retries=0).chat.completions.create(
            model="gpt-x", messages=msgs
        )
    except openai.AuthenticationError:
        pass
elif mode == "greedy":  # past its budget it keeps calling: 5 more calls after the first 429
    claude = anthropic.Anthropic(max_retries=0)
    ask = lambda: chat.chat.completions.create(model="gpt-x", messages=msgs)
    stream = lambda: list(chat.chat.completions.create(model="gpt-x", messages=msgs, stream=True))
    write = lambda: claude.messages.create(model="claude-x", max_tokens=5, messages=msgs)
    refused = []

    def call(api, how):
        try:
            how()
        except (openai.RateLimitError, anthropic.RateLimitError) as exc:
            error = exc.response.json()["error"]
            retry = exc.response.headers.get("x-should-retry")
            refused.append([api, exc.status_code, error.get("code") or error["type"], retry])
            return False
        return True

    passed = 0
    while passed < 10 and call("openai", ask):
        passed += 1
    for api, how in (("anthropic", write), ("openai", stream), ("anthropic", write),
                     ("openai", ask), ("openai", stream)):
        call(api, how)
    print(json.dumps({"passed": passed, "refused": refused}))
elif mode.startswith("steal"):  # two attempts open at once, each after the other's token
    import re

    mine = os.environ["OPENAI_API_KEY"]
    gateway = os.environ["OPENAI_BASE_URL"].split("/a/")[0].encode()  # this run's, no other's
    shape = re.compile(rb"tb-gw-[A-Za-z0-9_-]{43}")
    Path("notes.txt").write_text(mine)  # where an agent keeps its settings
    drops = os.environ["DROPS"].split(":")  # folders two attempts on one machine may share
    for folder in drops:
        try:
            os.makedirs(folder, exist_ok=True)
            Path(folder, mode).write_text(mine)
        except OSError:
            pass
    meet = lambda label: chat.chat.completions.create(model=f"barrier-2-{label}", messages=msgs)
    meet("open")  # both attempts are open from here until both have met again
    found = {}
    for pid in os.listdir("/proc"):  # every process it can see
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if gateway + b"/a/" in environ:  # an attempt of this run's gateway
            for token in shape.findall(environ):
                found.setdefault(token.decode(), set()).add("environ")
    scratch = Path.cwd().parents[2]  # the attempt folders: .../ATTEMPT/agent/workspace
    for top in [*drops, *([str(scratch)] if scratch != Path("/") else [])]:
        for folder, _, files in os.walk(top):
            for name in files:
                try:
                    data = Path(folder, name).read_bytes()[: 1 << 16]
                except OSError:
                    continue
                for token in shape.findall(data):
                    found.setdefault(token.decode(), set()).add("file")
    own = sorted(found.pop(mine, ()))  # the same search finds its own token
    tried = {}
    for token in found:  # presented at its own address, as either API's key
        stolen = {}
        for api, call in (
            ("openai", lambda: openai.OpenAI(api_key=token, max_retries=0).chat.completions.create(
                model="gpt-x", messages=msgs)),
            ("anthropic", lambda: anthropic.Anthropic(api_key=token, max_retries=0).messages.create(
                model="claude-x", max_tokens=5, messages=msgs)),
        ):
            try:
                call()
                stolen[api] = "reached"
            except (openai.AuthenticationError, anthropic.AuthenticationError):
                stolen[api] = "refused"
        tried[token] = stolen
    meet("tried")  # the other attempt was open while this one used its token
    found = {token: sorted(where) for token, where in found.items()}
    print(json.dumps({"mine": mine, "own": own, "found": found, "tried": tried}))
elif mode == "hunt":  # it looks for the real key everywhere it can reach
    import re, subprocess

    found = {}  # where -> what it read there, as hex (no redaction on the way could hide it)

    def take(path):
        if len(found) < 2000:
            try:
                with open(path, "rb") as f:
                    found[path] = f.read(1 << 14).hex()
            except OSError:
                pass

    for pid in os.listdir("/proc"):
        if pid.isdigit():
            take(f"/proc/{pid}/environ")
            take(f"/proc/{pid}/cmdline")
    parents, pid = [], os.getppid()
    while pid > 0:  # its parents, up to the first process it can see
        parents.append(pid)
        take(f"/proc/{pid}/environ")
        take(f"/proc/{pid}/cmdline")
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            break
        pid = int(re.search(r"^PPid:\s+(\d+)", status, re.M).group(1))
    here = os.getcwd()
    tops = ["/tmp", "/run", "/dev/shm", "/var/tmp", here, os.path.dirname(here),
            os.environ["HOME"], os.path.dirname(os.environ["TRIALBOOK_PROMPT_FILE"])]
    walked = []
    for top in tops:
        if top == "/" or not os.path.isdir(top):
            continue
        walked.append(top)
        for folder, _, files in os.walk(top):
            for name in files:
                if os.path.isfile(os.path.join(folder, name)):
                    take(os.path.join(folder, name))
    cat = subprocess.run(["cat", "/proc/1/environ"], capture_output=True)
    found["cat /proc/1/environ"] = cat.stdout.hex()
    print(json.dumps({"parents": parents, "walked": walked, "cat": cat.returncode, "found": found}))
Path("ok").write_text("done")
"""


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    fake = FakeUpstream(Script()).start()
    yield fake
    fake.stop()


def _run(
    tmp_path: Path,
    upstream: FakeUpstream,
    modes: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tier: str = "process",
    *,
    jobs: int = 1,
    env: dict[str, str] | None = None,
    **model: Any,
) -> list[dict[str, Any]]:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    tasks = {mode: {"grader": "test -f ok", "fixture": {"agent.py": AGENT}} for mode in modes}
    suite = make_suite(tmp_path / "suite", tasks, k=1, timeout_s=60)
    ledger = tmp_path / "out" / "ledger.db"
    (tmp_path / "prices.toml").write_text(
        f'[models."{upstream.script.model}"]\ninput = 2\noutput = 8\ncache_read = 0.5\ncache_write = 2.5\n'
    )
    options = ModelOptions(
        upstream=upstream.url,
        key_env=KEY_ENV,
        prices=tmp_path / "prices.toml",
        accept_open_network=tier == "process",
        **model,
    )
    result = run_suite(
        RunOptions(
            suite=suite,
            agent='python agent.py "$TRIALBOOK_TASK_ID"',
            ledger=ledger,
            system="test",
            sandbox=tier,
            run_id=unique_run_id(),
            jobs=jobs,
            pass_env={"UPSTREAM_PORT": upstream.url.rsplit(":", 1)[1], **(env or {})},
            model=options,
        )
    )
    assert not result.interrupted
    rows = sorted(ledger_rows(read_ledger(ledger)), key=lambda r: r["task_id"])
    # the real key is nowhere the run wrote: ledger, transcripts (the agent's environment), logs
    written = [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert not [data for data in written if REAL_KEY.encode() in data]
    assert any(b'"OPENAI_API_KEY": "tb-gw-' in data for data in written), "no environment shown"
    return rows


@pytest.mark.parametrize("tier", TIERS)
def test_the_rows_carry_the_gateways_figures_not_the_agents(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    [row] = _run(tmp_path, upstream, ["ok"], monkeypatch, tier)
    s = upstream.script
    openai_in, anthropic_in = s.input + s.cache_read, s.input + s.cache_read + s.cache_write
    assert row["passed"] is True, row.get("error")
    assert row["tokens_in"] == 2 * openai_in + anthropic_in
    assert row["tokens_out"] == 3 * s.output
    # 3 calls: 3 x input at $2, 3 x output at $8, 3 x cache_read at $0.5, 1 x cache_write at $2.5
    expected = (
        3 * s.input * 2 + 3 * s.output * 8 + 3 * s.cache_read * 0.5 + s.cache_write * 2.5
    ) / 1e6
    assert row["cost"] == pytest.approx(expected, rel=1e-12)
    assert row["model_version"] == s.model
    assert row["cache_hit"] is True
    assert row["model_calls"] == 3
    assert row["model_call_s"] is not None  # recorded (how long is the machine's)
    assert row["cache_read_tokens"] == 3 * s.cache_read
    assert row["cache_write_tokens"] == s.cache_write  # OpenAI reports none
    assert "usage file disagrees with the model gateway" in row["error"]
    log = tmp_path / "out" / row["transcript"] / "model_calls.jsonl"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [c["path"] for c in calls] == [
        "v1/chat/completions",
        "v1/chat/completions",
        "v1/messages",
    ]


@pytest.mark.parametrize("tier", [_tier_param("bwrap")])
def test_in_the_bwrap_tier_the_gateway_is_all_an_agent_reaches(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    [row] = _run(tmp_path, upstream, ["escape"], monkeypatch, tier)
    assert row["passed"] is True, row.get("error")
    stdout = (tmp_path / "out" / row["transcript"] / "agent.stdout").read_text()
    tried = json.loads(stdout.strip().splitlines()[-1])
    assert tried == {
        "internet": tried["internet"],
        "upstream": "ConnectionRefusedError",  # the host's loopback is not the sandbox's
        "guessed token": "refused",
    }
    assert tried["internet"] != "reached"
    assert row["model_calls"] == 1  # the guessed token's call was refused, not passed
    assert row["sandbox"] == "bwrap"


@pytest.mark.parametrize("tier", TIERS)
def test_an_agent_opening_500_streams_at_once_gets_them_all_metered(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    upstream.record = False
    [row] = _run(tmp_path, upstream, ["flood"], monkeypatch, tier)
    s = upstream.script
    assert row["passed"] is True, row.get("error")
    assert row["model_calls"] == 500
    assert row["tokens_in"] == 500 * (s.input + s.cache_read)
    assert row["tokens_out"] == 500 * s.output


def test_a_provider_failure_before_a_failed_attempt_is_an_infra_error(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    [row] = _run(tmp_path, upstream, ["fail"], monkeypatch)
    assert row["status"] == "infra_error"
    assert row["error"].startswith("model provider failed: 1 (500); the attempt then failed")
    assert row["lost"] is True
    ledger = tmp_path / "out" / "ledger.db"
    port = {"UPSTREAM_PORT": upstream.url.rsplit(":", 1)[1]}

    def resume(**model: Any) -> Any:
        return run_suite(
            RunOptions(
                suite=None, agent=None, ledger=ledger, resume=row["run_id"], pass_env=port, **model
            )
        )

    # given again, each setting must be the run's own: one that differs is refused by its name
    other = ModelOptions(upstream=upstream.url + "/x", key_env=KEY_ENV, accept_open_network=True)
    with pytest.raises(ArgumentError, match=r"model_upstream: run .* reached its model with") as e:
        resume(model=other)
    assert e.value.argument == "model_upstream"
    # a resume without the --model-* options reaches the model as the run did (its record keeps
    # them), and runs the lost attempt again as a recorded re-run (retry 1)
    assert resume().reruns == 1
    rows = sorted(ledger_rows(read_ledger(ledger)), key=lambda r: r["retry"] or 0)
    assert [r["retry"] or 0 for r in rows] == [0, 1]
    assert rows[1]["model_calls"] == 1  # the re-run went through the gateway too
    assert rows[1]["cost"] is not None  # priced by the run's own table


def test_a_resume_refuses_a_price_table_changed_since_the_run(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    [row] = _run(tmp_path, upstream, ["fail"], monkeypatch)
    (tmp_path / "prices.toml").write_text("[models.m]\ninput = 1\noutput = 1\n")
    with pytest.raises(ArgumentError, match=r"prices: run .* has changed or is gone") as e:
        run_suite(
            RunOptions(
                suite=None,
                agent=None,
                ledger=tmp_path / "out" / "ledger.db",
                resume=row["run_id"],
                pass_env={"UPSTREAM_PORT": "1"},
            )
        )
    assert e.value.argument == "prices"


def test_a_run_recorded_before_schema_14_resumes_only_given_its_gateway(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trialbook.harness.run import _run as run_module

    # as an older trialbook recorded it: no model settings on the run's record
    monkeypatch.setattr(run_module, "model_record", lambda options, network_model: None)
    [row] = _run(tmp_path, upstream, ["fail"], monkeypatch)
    ledger = tmp_path / "out" / "ledger.db"
    with pytest.raises(ArgumentError, match="reached its model through the gateway"):
        run_suite(  # without the gateway, its agents would run with no model at all
            RunOptions(
                suite=None,
                agent=None,
                ledger=ledger,
                resume=row["run_id"],
                pass_env={"UPSTREAM_PORT": upstream.url.rsplit(":", 1)[1]},
            )
        )


@pytest.mark.parametrize("tier", TIERS)
def test_past_its_budget_an_agent_that_keeps_calling_is_refused_every_time(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    usages = keep_usages(monkeypatch)
    s = upstream.script
    per_call = s.input + s.cache_read + s.output
    [row] = _run(tmp_path, upstream, ["greedy"], monkeypatch, tier, max_tokens_per_attempt=per_call)
    assert row["passed"] is True  # the agent decides what to do once refused
    check_greedy(tmp_path, row, usages["greedy"], upstream)


def check_greedy(
    tmp_path: Path, row: dict[str, Any], usage: AttemptUsage, upstream: FakeUpstream
) -> None:
    """One call within the budget, then the first refusal and the 5 calls the agent made after it:
    each answered with its API's quota error, none passed upstream, all counted."""
    said = agent_said(tmp_path, row)
    assert said["passed"] == 1
    openai_quota = ["openai", 429, "insufficient_quota", "false"]
    anthropic_quota = ["anthropic", 429, "rate_limit_error", "false"]
    assert said["refused"] == [
        openai_quota,  # the first refusal, then 5 more calls
        anthropic_quota,
        openai_quota,  # a stream
        anthropic_quota,
        openai_quota,
        openai_quota,  # a stream
    ]
    assert (usage.calls, usage.budget_refusals, usage.budget_hit) == (1, 6, True)
    assert len(upstream.seen) == 1, "a call refused for the budget reached the upstream"
    assert row["stop_reason"] == "budget"
    assert row["model_calls"] == 1
    assert row["tokens_in"] + row["tokens_out"] == usage.tokens  # one call's
    log = tmp_path / "out" / row["transcript"] / "model_calls.jsonl"
    outcomes = [json.loads(line)["outcome"] for line in log.read_text().splitlines()]
    assert outcomes == ["passed"] + ["budget"] * 6


def test_a_token_stolen_from_an_attempt_open_beside_it_is_refused_and_counted(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Process tier: two attempts at once, as one user on one machine, meet through a folder they
    share and read each other's /proc/PID/environ; each finds the other's real token (the other
    attempt open all along: both are held at the fake upstream's barrier before and after),
    presents it at its own address as either API's key, and is refused, counted in its row."""
    usages = keep_usages(monkeypatch)
    drops = {"DROPS": str(tmp_path / "shared")}
    a, b = _run(tmp_path, upstream, ["steal-a", "steal-b"], monkeypatch, jobs=2, env=drops)
    said = {row["task_id"]: agent_said(tmp_path, row) for row in (a, b)}
    for row, other in ((a, b), (b, a)):
        mine, theirs = said[row["task_id"]], said[other["task_id"]]
        assert row["passed"] is True, row.get("error")
        assert mine["own"] == ["environ", "file"]
        assert mine["found"] == {theirs["mine"]: ["environ", "file"]}
        assert mine["tried"] == {theirs["mine"]: {"openai": "refused", "anthropic": "refused"}}
        assert usages[row["task_id"]].refused_calls == 2
        assert "the model gateway refused 2 call(s) with a token not this attempt's" in row["error"]
        assert row["model_calls"] == 2  # its two meetings at the barrier
    # only the meetings went upstream, each with the real key (never a token)
    assert sorted(seen.body["model"] for seen in upstream.seen) == [
        "barrier-2-open",
        "barrier-2-open",
        "barrier-2-tried",
        "barrier-2-tried",
    ]
    for seen in upstream.seen:
        assert {k.lower(): v for k, v in seen.headers.items()}["authorization"] == (
            f"Bearer {REAL_KEY}"
        )


@pytest.mark.parametrize("tier", [_tier_param("bwrap")])
def test_in_the_bwrap_tier_an_attempt_cannot_find_the_token_of_one_open_beside_it(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    """The same two thieves in bwrap: each leaves its token in the folders a machine shares and
    searches every process and those folders while the other is open, and finds only its own."""
    shared = tmp_path / "shared"
    drops = {"DROPS": ":".join([str(shared), "/tmp", "/dev/shm", "/var/tmp", "/run"])}
    rows = _run(tmp_path, upstream, ["steal-a", "steal-b"], monkeypatch, tier, jobs=2, env=drops)
    for row in rows:
        said = agent_said(tmp_path, row)
        assert row["passed"] is True, row.get("error")
        assert said["own"] == ["environ", "file"]  # the search works: it finds its own token
        assert (said["found"], said["tried"]) == ({}, {})
        assert row["model_calls"] == 2  # both met at the barrier: the two were open at once
        assert "refused" not in (row["error"] or "")
    assert not shared.exists()  # each wrote in a /tmp of its own


@pytest.mark.parametrize("tier", [_tier_param("bwrap")])
def test_an_agent_searching_all_it_can_reach_finds_no_real_key(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    """Every /proc/*/environ and cmdline it can read, its parents', the files under /tmp, /run,
    /dev/shm, /var/tmp, its workspace, home and prompt folder, and `cat /proc/1/environ`.

    The process tier is left out by design: the gateway runs there only with
    accept_open_network, which says that an agent can read the harness's environment
    (/proc/PID/environ of the harness, where the real key is; docs/gateway.md)."""
    [row] = _run(tmp_path, upstream, ["hunt"], monkeypatch, tier)
    assert row["passed"] is True, row.get("error")
    check_hunt(agent_said(tmp_path, row))


def check_hunt(said: dict[str, Any]) -> None:
    """What the hunting agent read holds no real key, and it did read: every process's
    environment it could see (its own token among them), its parents' up to the first, the
    folders."""
    found = {where: bytes.fromhex(data) for where, data in said["found"].items()}
    assert not [where for where, data in found.items() if REAL_KEY.encode() in data]
    assert said["parents"][-1] == 1
    assert all(f"/proc/{pid}/environ" in found for pid in said["parents"])
    assert any(b"OPENAI_API_KEY=tb-gw-" in data for data in found.values())
    assert {"/tmp", "/run", "/dev/shm", "/var/tmp"} <= set(said["walked"])
    assert "cat /proc/1/environ" in found


def agent_said(tmp_path: Path, row: dict[str, Any]) -> Any:
    """The last line of the agent's stdout, as JSON."""
    stdout = (tmp_path / "out" / row["transcript"] / "agent.stdout").read_text()
    return json.loads(stdout.strip().splitlines()[-1])


def keep_usages(monkeypatch: pytest.MonkeyPatch) -> dict[str, AttemptUsage]:
    """The gateway's usage of each attempt of the run, by task id, as the driver closes it."""
    kept: dict[str, AttemptUsage] = {}
    close = ModelGateway.close

    def keep(self: ModelGateway, spec: AttemptSpec) -> AttemptUsage | None:
        usage = close(self, spec)
        if usage is not None:
            kept[spec.task_id] = usage
        return usage

    monkeypatch.setattr(ModelGateway, "close", keep)
    return kept


def test_the_process_tier_needs_the_open_network_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {}}, k=1)
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    with pytest.raises(ArgumentError, match="cannot close the network") as refused:
        run_suite(
            RunOptions(
                suite=suite,
                agent="true",
                ledger=tmp_path / "l.db",
                sandbox="process",
                model=ModelOptions(upstream="http://127.0.0.1:9", key_env=KEY_ENV),
            )
        )
    assert refused.value.argument == "accept_open_network"
    assert not (tmp_path / "l.db").exists()


def test_the_cli_refuses_the_real_keys_variable_in_pass_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    suite = make_suite(tmp_path / "suite", {"t": {}}, k=1)
    out = CliRunner().invoke(
        main,
        [
            "run",
            str(suite),
            "--agent",
            "true",
            "--ledger",
            str(tmp_path / "l.db"),
            "--sandbox",
            "process",
            "--model-upstream",
            "http://127.0.0.1:9",
            "--model-key-env",
            KEY_ENV,
            "--accept-open-network",
            "--pass-env",
            KEY_ENV,
        ],
    )
    assert out.exit_code == 2
    assert (
        out.output.strip()
        .splitlines()[-1]
        .startswith(f"trialbook: error: --pass-env: {KEY_ENV} holds the model's real key")
    )
    bad = CliRunner().invoke(
        main,
        [
            "run",
            str(suite),
            "--agent",
            "true",
            "--ledger",
            str(tmp_path / "l.db"),
            "--prices",
            "p.toml",
        ],
    )
    assert bad.exit_code == 2
    assert "--prices needs --model-upstream" in bad.output


def test_a_project_names_its_model_in_a_model_table(tmp_path: Path) -> None:
    from trialbook.harness import load_project

    (tmp_path / "trialbook.toml").write_text(
        '[model]\nupstream = "https://api.openai.com"\nkey_env = "OPENAI_KEY"\n'
        'prices = "prices.toml"\nmax_cost_per_attempt = 1\naccept_open_network = true\n'
    )
    project = load_project(tmp_path)
    assert project is not None
    assert project.model is not None
    assert project.model.upstream == "https://api.openai.com"
    assert project.model.prices == (tmp_path / "prices.toml").resolve()
    assert project.model.max_cost_per_attempt == 1.0
    assert project.model.accept_open_network is True
    (tmp_path / "trialbook.toml").write_text('[model]\nupstream = "https://x"\nkey = "sk-..."\n')
    with pytest.raises(ArgumentError, match=r"model\.key: unknown key") as bad:
        load_project(tmp_path)
    assert "\n" not in str(bad.value)


def test_a_task_declaring_network_model_needs_a_gateway(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"t": {"toml": ['network = "model"']}}, k=1)
    with pytest.raises(ArgumentError, match='task t declares network = "model"') as refused:
        run_suite(RunOptions(suite=suite, agent="true", ledger=tmp_path / "l.db"))
    assert refused.value.argument == "model_upstream"
    assert not (tmp_path / "l.db").exists()


@pytest.mark.parametrize("tier", [_tier_param("bwrap")])
def test_a_network_model_task_reaches_the_gateway_and_nothing_else(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    tasks = {
        "escape": {
            "grader": "test -f ok",
            "fixture": {"agent.py": AGENT},
            "toml": ['network = "model"'],
        }
    }
    suite = make_suite(tmp_path / "suite", tasks, k=1, timeout_s=60)
    ledger = tmp_path / "out" / "ledger.db"
    run_suite(
        RunOptions(
            suite=suite,
            agent='python agent.py "$TRIALBOOK_TASK_ID"',
            ledger=ledger,
            sandbox=tier,
            run_id=unique_run_id(),
            pass_env={"UPSTREAM_PORT": upstream.url.rsplit(":", 1)[1]},
            model=ModelOptions(upstream=upstream.url, key_env=KEY_ENV),
        )
    )
    [row] = ledger_rows(read_ledger(ledger))
    assert row["passed"] is True, row.get("error")
    assert row["model_calls"] == 1


@pytest.mark.parametrize("tier", [_tier_param("bwrap")])
def test_network_model_for_the_run_keeps_even_a_network_task_to_the_gateway(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tier: str
) -> None:
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    tasks = {
        "escape": {
            "grader": "test -f ok",
            "fixture": {"agent.py": AGENT},
            "toml": ["network = true"],  # would reach the host's loopback (the upstream) itself
        }
    }
    suite = make_suite(tmp_path / "suite", tasks, k=1, timeout_s=60)
    ledger = tmp_path / "out" / "ledger.db"
    options = RunOptions(
        suite=suite,
        agent='python agent.py "$TRIALBOOK_TASK_ID"',
        ledger=ledger,
        sandbox=tier,
        run_id=unique_run_id(),
        pass_env={"UPSTREAM_PORT": upstream.url.rsplit(":", 1)[1]},
        model=ModelOptions(upstream=upstream.url, key_env=KEY_ENV),
        network_model=True,
    )
    run_suite(options)
    [row] = ledger_rows(read_ledger(ledger))
    assert row["passed"] is True, row.get("error")
    assert row["cost"] is None  # no price table: not measured, and not noted on every row
    assert "refused 1 call(s)" in row["error"]  # the guessed token
    assert "no price" not in row["error"]
    with pytest.raises(ArgumentError, match="network_model") as refused:
        run_suite(dataclasses.replace(options, model=None, run_id=unique_run_id()))
    assert refused.value.argument == "network_model"


def test_calls_at_no_open_attempts_address_are_said_at_the_runs_end(
    tmp_path: Path, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no row can hold a call at an address that is no attempt's: the run's end says it, in the
    # lines printed and in its 'finished' event
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    tasks = {"stray": {"grader": "test -f ok", "fixture": {"agent.py": AGENT}}}
    suite = make_suite(tmp_path / "suite", tasks, k=1, timeout_s=60)
    ledger = tmp_path / "out" / "ledger.db"
    run_id = unique_run_id()
    out = CliRunner().invoke(
        main,
        [
            "run",
            str(suite),
            "--agent",
            'python agent.py "$TRIALBOOK_TASK_ID"',
            "--ledger",
            str(ledger),
            "--run-id",
            run_id,
            "--sandbox",
            "process",
            "--model-upstream",
            upstream.url,
            "--model-key-env",
            KEY_ENV,
            "--accept-open-network",
        ],
    )
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())  # the lines as wrapped to the terminal, joined
    assert (
        "the model gateway refused 1 call(s) at the address of no open attempt (a guessed "
        "address, or an attempt that had ended): no row holds them" in said
    )
    [row] = ledger_rows(read_ledger(ledger))
    assert row["model_calls"] == 0  # the call was refused before the upstream
    assert "refused" not in (row.get("error") or "")  # not this attempt's address: not its row's
    with sqlite3.connect(ledger) as conn:
        [(detail,)] = conn.execute(
            "SELECT detail FROM run_events WHERE run_id = ? AND event = 'finished'", (run_id,)
        ).fetchall()
    assert json.loads(detail)["model_refused_unattributed"] == 1
