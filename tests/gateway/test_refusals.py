"""Tokens that are not the attempt's are refused (and counted); budgets refuse the next call."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import anthropic
import openai
import pytest

from tests.gateway.fake import FakeUpstream
from trialbook.gateway import Budgets, Gateway, read_prices

MESSAGES = [{"role": "user", "content": "hi"}]


def _chat(env: dict[str, str], *, token: str | None = None, model: str = "gpt-x") -> None:
    client = openai.OpenAI(
        base_url=env["OPENAI_BASE_URL"], api_key=token or env["OPENAI_API_KEY"], max_retries=2
    )
    client.chat.completions.create(model=model, messages=MESSAGES)  # type: ignore[arg-type]


def test_another_attempts_token_an_unknown_one_and_a_spent_one_are_refused(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    a, b = gateway.open_attempt("a"), gateway.open_attempt("b")
    assert a["OPENAI_API_KEY"] != b["OPENAI_API_KEY"]
    assert a["OPENAI_BASE_URL"] != b["OPENAI_BASE_URL"]
    # max_retries=2 above: the refusal says x-should-retry false, so each is one call
    with pytest.raises(openai.AuthenticationError, match="not this attempt's token"):
        _chat(a, token=b["OPENAI_API_KEY"])
    with pytest.raises(openai.AuthenticationError):
        _chat(a, token="sk-guessed")
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(
            base_url=a["ANTHROPIC_BASE_URL"], api_key="sk-ant-guessed", max_retries=0
        ).messages.create(
            model="claude-x",
            max_tokens=5,
            messages=MESSAGES,  # type: ignore[arg-type]
        )
    _chat(b)
    used_b = gateway.close_attempt("b")
    with pytest.raises(openai.AuthenticationError, match="no open attempt"):
        _chat(b)  # spent: b has ended
    with pytest.raises(openai.AuthenticationError, match="no open attempt"):
        _chat(a | {"OPENAI_BASE_URL": b["OPENAI_BASE_URL"]}, token=a["OPENAI_API_KEY"])
    used_a = gateway.close_attempt("a")
    assert (used_a.refused_calls, used_a.calls) == (3, 0)
    assert (used_b.refused_calls, used_b.calls) == (0, 1)
    assert gateway.refused_unattributed == 2
    assert len(upstream.seen) == 1, "a refused call reached the upstream"


def test_past_the_token_budget_the_next_call_gets_the_apis_quota_error(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    s = upstream.script
    per_call = s.input + s.output + s.cache_read  # OpenAI reports no cache writes
    # room for two calls and a bit: the third starts with the budget not yet spent, the fourth not
    gateway = make_gateway(budgets=Budgets(max_tokens=2 * per_call + 1))
    env = gateway.open_attempt("t")
    for _ in range(3):
        _chat(env)
    with pytest.raises(openai.RateLimitError, match="token budget is spent") as refused:
        _chat(env)
    assert refused.value.code == "insufficient_quota"
    with pytest.raises(anthropic.RateLimitError, match="token budget is spent"):
        anthropic.Anthropic(
            base_url=env["ANTHROPIC_BASE_URL"], api_key=env["ANTHROPIC_API_KEY"], max_retries=2
        ).messages.create(model="c", max_tokens=5, messages=MESSAGES)  # type: ignore[arg-type]
    usage = gateway.close_attempt("t")
    assert usage.calls == 3
    assert usage.tokens == 3 * per_call
    assert usage.budget_refusals == 2
    assert usage.budget_hit
    assert len(upstream.seen) == 3


def test_cost_budget_by_the_price_table_and_an_unpriced_model_stops_it(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    s = upstream.script
    prices = read_prices(
        {"models": {s.model: {"input": 2, "output": 8, "cache_read": Decimal("0.5")}}}
    )
    per_call = (
        Decimal(s.input) * 2 + Decimal(s.output) * 8 + Decimal(s.cache_read) * Decimal("0.5")
    ) / 10**6
    gateway = make_gateway(prices=prices, budgets=Budgets(max_cost=float(per_call * 2)))
    env = gateway.open_attempt("t")
    _chat(env)
    _chat(env)
    with pytest.raises(openai.RateLimitError, match="cost budget is spent"):
        _chat(env)
    usage = gateway.close_attempt("t")
    assert usage.cost == float(per_call * 2)
    assert usage.budget_refusals == 1

    s.model = "unpriced-model"
    env = gateway.open_attempt("u")
    _chat(env)
    with pytest.raises(openai.RateLimitError, match="not in the price table"):
        _chat(env)
    usage = gateway.close_attempt("u")
    assert usage.cost is None
    assert usage.unpriced_models == ("unpriced-model",)


def test_budgets_refuse_nonsense() -> None:
    from trialbook.errors import ArgumentError

    with pytest.raises(ArgumentError, match="max_cost"):
        Budgets(max_cost=-1.0)
    with pytest.raises(ArgumentError, match="max_tokens"):
        Budgets(max_tokens=0)


def test_a_path_stepping_out_of_the_apis_base_is_not_forwarded(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    """``..`` in a path would reach the provider above the base URL the user named (another
    tenant's prefix of a proxy, say): refused before anything goes up."""
    import urllib.error
    import urllib.request

    gateway = make_gateway()
    env = gateway.open_attempt("a")
    for path in ("/../../v1/models", "/%2e%2e/v1/models", "/./models"):
        request = urllib.request.Request(
            env["OPENAI_BASE_URL"] + path,
            headers={"Authorization": f"Bearer {env['OPENAI_API_KEY']}"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 404, path
        refused.value.close()
    openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"]).models.list()
    gateway.close_attempt("a")
    assert [seen.path for seen in upstream.seen] == ["/v1/models"]


@pytest.mark.parametrize(
    ("key", "why"),
    [("", "is empty"), ("sk-abc\n", "line break"), ("sk abc", "space"), ("sk\x00", "control")],
)
def test_a_key_that_cannot_be_a_header_value_is_refused_when_the_gateway_is_made(
    key: str, why: str
) -> None:
    from trialbook.errors import ArgumentError

    with pytest.raises(ArgumentError, match=why):
        Gateway("http://127.0.0.1:9/v1", None, key)


def test_bodies_up_to_64_mib_go_up_and_a_larger_one_is_refused(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    """An agent's prompt may carry images: a few MiB pass (aiohttp's own bound on a request is
    1 MiB, the gateway's 64 MiB); past 64 MiB the call is refused (413) and nothing goes up."""
    import urllib.error
    import urllib.request

    gateway = make_gateway()
    env = gateway.open_attempt("a")
    big = "x" * (3 << 20)
    client = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"])
    client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": big}])
    assert len(upstream.seen) == 1
    request = urllib.request.Request(
        env["OPENAI_BASE_URL"] + "/chat/completions",
        data=b"x" * ((64 << 20) + 1),
        headers={"Authorization": f"Bearer {env['OPENAI_API_KEY']}"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 413
    refused.value.close()
    # and a path outside any attempt's address is not found
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(gateway.url + "/v1/chat/completions", timeout=10)
    assert missing.value.code == 404
    missing.value.close()
    gateway.close_attempt("a")
    assert len(upstream.seen) == 1
