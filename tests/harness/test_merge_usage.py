"""``merge_usage``: the row an attempt's worker made, with the model gateway's figures in place of
the agent's own (harness/run/_model.py; docs/gateway.md, "In a run").

Each test hands it a row as the worker writes it and an ``AttemptUsage`` as the gateway measures
it; the expected figures are worked out beside each assertion.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from trialbook.gateway import AttemptUsage, ProviderFailure
from trialbook.harness.run._model import merge_usage

NOTHING = AttemptUsage(
    input_tokens=0,
    output_tokens=0,
    cache_read_tokens=0,
    cache_write_tokens=0,
    calls=0,
    unmetered_calls=0,
    model_version=None,
    seconds_in_calls=0.0,
    cost=0.0,
    unpriced_models=(),
    refused_calls=0,
    budget_refusals=0,
    provider_failures=(),
)
"""An attempt that made no model call (priced: nothing used costs nothing)."""


def _usage(**changes: Any) -> AttemptUsage:
    return dataclasses.replace(NOTHING, **changes)


def _row(status: str = "failed", **extra: Any) -> dict[str, Any]:
    """A finished attempt's row as the worker writes it (outcome fields consistent with
    ``status``)."""
    row: dict[str, Any] = {
        "task_id": "t",
        "attempt_index": 0,
        "k_budget": 1,
        "timeout_s": 60.0,
        "elapsed_s": 12.5,
        "passed": status == "passed",
        "timed_out": status == "timed_out",
        "helper_calls": 0,
        "oracle_leak": False,
        "status": status,
    }
    row.update(extra)
    return row


def test_the_gateways_figures_replace_the_agents_and_the_disagreement_is_noted() -> None:
    usage = _usage(
        input_tokens=100,
        output_tokens=50,
        cache_read_tokens=30,
        cache_write_tokens=7,
        calls=3,
        model_version="m-2026-01-01",
        seconds_in_calls=4.5,
        cost=0.25,
    )
    row = _row("passed", tokens_in=10, tokens_out=50, cost=0.01, model_version="m")
    out = merge_usage(row, usage)
    assert out["tokens_in"] == 100 + 30 + 7  # every input token: uncached, cache read and write
    assert out["tokens_out"] == 50
    assert out["cost"] == 0.25
    assert (out["model_calls"], out["cache_read_tokens"], out["cache_write_tokens"]) == (3, 30, 7)
    assert out["model_call_s"] == 4.5  # the gateway's time in calls, as measured
    assert out["cache_hit"] is True  # a call read the prompt cache
    assert out["model_version"] == "m-2026-01-01"  # as the upstream answered, not as declared
    # only the figures that differ are named (tokens_out agreed)
    assert out["error"] == (
        "usage file disagrees with the model gateway (tokens_in 10 vs 137, cost 0.01 vs 0.25): "
        "the gateway's figures are recorded"
    )
    assert out["status"] == "passed"
    assert row["tokens_in"] == 10  # the worker's row is left as it was


def test_a_usage_file_that_agrees_or_is_absent_adds_no_note() -> None:
    usage = _usage(input_tokens=5, output_tokens=2, calls=1, cost=0.5)
    assert "error" not in merge_usage(_row("passed"), usage)
    agreeing = _row("passed", tokens_in=5, tokens_out=2, cost=0.5)
    assert "error" not in merge_usage(agreeing, usage)


def test_an_unpriced_model_leaves_the_cost_not_measured_and_says_which() -> None:
    usage = _usage(input_tokens=5, output_tokens=2, calls=1, cost=None, unpriced_models=("m",))
    out = merge_usage(_row("passed"), usage)
    assert "cost" not in out  # not measured: absent, never 0
    assert out["error"] == "cost not measured: no price for m"
    # a run without a price table measures no cost at all: not noted on every row
    unpriced_run = merge_usage(_row("passed"), usage, priced=False)
    assert "cost" not in unpriced_run
    assert "error" not in unpriced_run


def test_a_call_answered_without_usage_leaves_tokens_and_cost_not_measured() -> None:
    # the gateway's sums hold only the calls that reported usage: with one that did not, they
    # are less than what the attempt used by an unknown amount, so no total is recorded
    usage = _usage(
        input_tokens=5, output_tokens=2, cache_read_tokens=3, calls=2, unmetered_calls=1, cost=None
    )
    out = merge_usage(_row("passed", tokens_in=40), usage)
    for name in ("cost", "tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens"):
        assert name not in out, name
    assert out["model_calls"] == 2  # the unmetered call is still a call
    assert out["cache_hit"] is True  # a call did read the prompt cache
    assert out["error"] == (
        "usage file disagrees with the model gateway (tokens_in 40 vs not measured): the "
        "gateway's figures are recorded; tokens and cost not measured: 1 model call(s) ended "
        "without usage"
    )


def test_calls_refused_for_their_token_are_noted() -> None:
    out = merge_usage(_row("passed"), _usage(refused_calls=2))
    assert out["error"] == ("the model gateway refused 2 call(s) with a token not this attempt's")


def test_a_provider_failure_before_a_failed_attempt_makes_it_a_lost_infra_error() -> None:
    failures = (ProviderFailure(500, "status"), ProviderFailure(None, "timeout"))
    row = _row("failed", error="agent exited with status 1")
    out = merge_usage(row, _usage(calls=2, provider_failures=failures))
    assert (out["status"], out["passed"], out["timed_out"], out["lost"]) == (
        "infra_error",
        False,
        False,
        True,
    )
    # its cause first (the run's early stop reads it), then what the attempt did
    assert out["error"] == (
        "model provider failed: 2 (500, timeout); the attempt then failed; "
        "agent exited with status 1"
    )


def test_a_provider_failure_before_a_timed_out_attempt_makes_it_a_lost_infra_error() -> None:
    # a provider that answers slowly or not at all can cost the agent its time: the timeout is
    # no more the agent's than a failure is. An infra_error row is not timed out (the ledger
    # holds timed_out to the status), so the timeout is said in the error.
    row = _row("timed_out", error="stopped at the 60 s timeout")
    out = merge_usage(row, _usage(calls=1, provider_failures=(ProviderFailure(504, "status"),)))
    assert (out["status"], out["passed"], out["timed_out"], out["lost"]) == (
        "infra_error",
        False,
        False,
        True,
    )
    assert out["error"] == (
        "model provider failed: 1 (504); the attempt then timed out; stopped at the 60 s timeout"
    )
    assert out["elapsed_s"] == 12.5  # its time is kept as measured


def test_an_attempt_that_passed_despite_provider_failures_stays_passed() -> None:
    failures = (ProviderFailure(429, "status"),)
    out = merge_usage(_row("passed"), _usage(calls=2, provider_failures=failures))
    assert (out["status"], out["passed"]) == ("passed", True)
    assert "lost" not in out
    assert out["error"] == "model provider failed: 1 (429); the attempt passed regardless"


def test_a_provider_failure_on_a_row_already_in_infra_error_is_noted_only() -> None:
    row = _row("infra_error", error="sandbox could not start")
    out = merge_usage(row, _usage(calls=1, provider_failures=(ProviderFailure(502, "status"),)))
    assert out["status"] == "infra_error"
    assert "lost" not in out  # the harness's own error: not the provider's
    assert out["error"] == "sandbox could not start; model provider failed: 1 (502)"


def test_a_spent_budget_is_the_stop_reason_unless_the_grader_gave_one() -> None:
    assert merge_usage(_row("failed"), _usage(budget_refusals=1))["stop_reason"] == "budget"
    graded = _row("failed", stop_reason="gave up")
    assert merge_usage(graded, _usage(budget_refusals=3))["stop_reason"] == "gave up"
    assert "stop_reason" not in merge_usage(_row("failed"), NOTHING)


@pytest.mark.parametrize("status", ["passed", "failed"])
def test_an_attempt_without_model_calls_records_zero_calls(status: str) -> None:
    out = merge_usage(_row(status), NOTHING)
    # the gateway saw the whole attempt: no call is a measured 0, and costs nothing
    assert (out["model_calls"], out["model_call_s"]) == (0, 0.0)
    assert (out["tokens_in"], out["tokens_out"], out["cost"]) == (0, 0, 0.0)
    assert out["cache_hit"] is False  # the gateway saw every call (none): no cache read
    assert out["status"] == status


def test_a_usage_file_claiming_cost_0_does_not_stand_for_a_cost_not_measured() -> None:
    usage = _usage(input_tokens=5, output_tokens=2, calls=1, cost=None, unpriced_models=("m",))
    out = merge_usage(_row("passed", tokens_in=5, tokens_out=2, cost=0.0), usage)
    assert "cost" not in out  # absent (not measured), not the agent's 0
    assert out["error"] == (
        "usage file disagrees with the model gateway (cost 0.0 vs not measured): the gateway's "
        "figures are recorded; cost not measured: no price for m"
    )


def test_an_attempt_made_an_infra_error_keeps_no_partial_credit() -> None:
    # as every other infra_error the harness writes: the grader's score of a measurement the
    # provider spoilt is no measure of the agent (a mean score would count it)
    row = _row("failed", score=0.25)
    out = merge_usage(row, _usage(calls=1, provider_failures=(ProviderFailure(500, "status"),)))
    assert out["status"] == "infra_error"
    assert "score" not in out
    # an attempt that stays the agent's keeps its score
    assert merge_usage(_row("failed", score=0.25), NOTHING)["score"] == 0.25


def test_a_call_log_that_stopped_short_is_noted() -> None:
    usage = _usage(calls=1, log_error="the call log stopped: No space left on device")
    out = merge_usage(_row("passed"), usage)
    assert out["error"] == (
        "model_calls.jsonl not kept whole: the call log stopped: No space left on device"
    )
    assert out["status"] == "passed"  # the harness's log, not the agent's outcome


def test_a_run_without_a_price_table_measures_no_cost_even_of_no_call() -> None:
    # with a table, an attempt that made no call cost a measured 0; without one, the run measures
    # no cost at all, and a 0 on the rows without calls would read as one
    out = merge_usage(_row("passed", cost=0.0), NOTHING, priced=False)
    assert "cost" not in out
    assert out["error"] == (
        "usage file disagrees with the model gateway (cost 0.0 vs not measured): the gateway's "
        "figures are recorded"
    )
    assert out["model_calls"] == 0


def test_the_gateway_says_whether_the_prompt_cache_was_read_not_the_agent() -> None:
    # every call metered and none read the cache: a hit the agent claims is not recorded
    out = merge_usage(_row("passed", cache_hit=True), _usage(input_tokens=5, calls=1, cost=0.1))
    assert out["cache_hit"] is False
    assert out["error"] == (
        "usage file disagrees with the model gateway (cache_hit True vs False): the gateway's "
        "figures are recorded"
    )
    # a call ended without usage and none of the others read the cache: whether the attempt hit
    # it is unknown, so the agent's word does not stand either
    unknown = merge_usage(
        _row("passed", cache_hit=True), _usage(calls=2, unmetered_calls=1, cost=None)
    )
    assert "cache_hit" not in unknown
