"""The one door to Claude, exercised with the real anthropic SDK against a local stub."""

from decimal import Decimal

import pytest

from llm.client import llm_complete
from llm.types import LLMMisconfigured, LLMUnavailable, cost_estimate
from orchestration.testing.anthropic_stub import StubReply, error_reply, tool_use_response

TOOLS = [
    {
        "name": "respond",
        "description": "Reply to the tenant.",
        "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    }
]


def _call():
    return llm_complete(
        model="claude-haiku-4-5",
        system=[{"type": "text", "text": "You are a helpful assistant.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "hello"}],
        tools=TOOLS,
        tool_choice={"type": "any"},
    )


def test_tool_use_answer_is_parsed_with_usage(anthropic_stub):
    anthropic_stub.queue(
        tool_use_response("respond", {"message": "Hi!"}, model="claude-haiku-4-5", cache_read_tokens=900)
    )
    response = _call()
    assert [(c.name, c.input) for c in response.tool_calls] == [("respond", {"message": "Hi!"})]
    assert response.cache_read_tokens == 900
    assert response.cost_usd > 0
    request = anthropic_stub.requests[0]["json"]
    assert "temperature" not in request  # rejected by API version 2026-10-21
    assert request["tool_choice"] == {"type": "any"}
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert request["model"] == "claude-haiku-4-5"


@pytest.mark.parametrize("status", [429, 529, 500])
def test_transient_errors_are_retried_then_succeed(anthropic_stub, status):
    anthropic_stub.queue(error_reply(status), tool_use_response("respond", {"message": "ok"}))
    assert _call().tool_calls[0].input == {"message": "ok"}
    assert len(anthropic_stub.requests) == 2


def test_exhausted_retries_raise_unavailable(anthropic_stub):
    anthropic_stub.queue(error_reply(529, "overloaded_error"), error_reply(529), error_reply(529))
    with pytest.raises(LLMUnavailable):
        _call()
    assert len(anthropic_stub.requests) == 3  # the first try and LLM_MAX_RETRIES=2 retries


def test_timeout_is_retried_then_unavailable(anthropic_stub, settings):
    settings.LLM_TIMEOUT_SECONDS = 0.3
    settings.LLM_MAX_RETRIES = 1
    slow = StubReply(body=tool_use_response("respond", {"message": "late"}), delay=1.0)
    anthropic_stub.queue(slow, slow)
    with pytest.raises(LLMUnavailable):
        _call()
    assert len(anthropic_stub.requests) == 2


def test_bad_key_is_permanent_and_not_retried(anthropic_stub):
    anthropic_stub.queue(error_reply(401, "authentication_error"))
    with pytest.raises(LLMMisconfigured):
        _call()
    assert len(anthropic_stub.requests) == 1


def test_cost_estimate_prices_cache_reads_below_fresh_input():
    fresh = cost_estimate(model="claude-sonnet-4-5", input_tokens=1_000_000, output_tokens=0)
    cached = cost_estimate(model="claude-sonnet-4-5", input_tokens=0, output_tokens=0, cache_read_tokens=1_000_000)
    assert fresh == Decimal("3.000000")
    assert cached == Decimal("0.300000")
