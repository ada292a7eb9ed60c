"""The turn engine with the real anthropic SDK against the local stub."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from conversations.models import Message
from orchestration.models import Turn
from orchestration.testing.anthropic_stub import StubReply, error_reply, tool_use_response
from orchestration.tests.conftest import conversation_for

pytestmark = pytest.mark.django_db


def test_a_turn_sends_cacheable_tools_and_records_usage(home, tenant_says, anthropic_stub):
    anthropic_stub.queue(
        tool_use_response(
            "ask_for_details",
            {"question": "Is there an error code on the boiler display?"},
            cache_read_tokens=2100,
            input_tokens=300,
        )
    )
    [reply] = tenant_says("My boiler is not working")
    assert reply == "Is there an error code on the boiler display?"
    request = anthropic_stub.requests[0]["json"]
    assert "temperature" not in request
    assert request["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert request["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "gathering_state: idle" in request["messages"][0]["content"]
    assert request["model"] == "claude-sonnet-4-6"  # first turn: the large model
    turn = Turn.objects.get()
    assert turn.cache_read_tokens == 2100 and turn.input_tokens == 300
    assert turn.cost_usd > 0 and turn.latency_model_ms is not None


def test_the_tool_list_is_identical_on_every_call(home, tenant_says, anthropic_stub):
    anthropic_stub.queue(
        tool_use_response("ask_for_photo", {"message": "Photo?"}),  # rejected: too early
        tool_use_response("ask_for_details", {"question": "Which room?"}),
    )
    tenant_says("leak")
    first, second = (r["json"] for r in anthropic_stub.requests)
    assert first["tools"] == second["tools"] and first["system"] == second["system"]
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True


@pytest.mark.parametrize("status", [429, 529, 500])
def test_claude_failing_past_its_retries_gives_the_fallback(home, tenant_says, anthropic_stub, status):
    anthropic_stub.default = error_reply(status, "overloaded_error")
    [reply] = tenant_says("boiler broken")
    assert "passed your message" in reply
    assert len(anthropic_stub.requests) == 3  # the SDK's own retries (LLM_MAX_RETRIES=2)
    assert conversation_for().escalated_at is not None
    assert Turn.objects.get().outcome == "fallback"


def test_a_timeout_gives_the_fallback(home, tenant_says, anthropic_stub, settings):
    from orchestration.llm import _client

    settings.LLM_TIMEOUT_SECONDS = 0.3
    settings.LLM_MAX_RETRIES = 0
    _client.cache_clear()
    anthropic_stub.queue(StubReply(body=tool_use_response("respond", {"message": "late"}), delay=1.5))
    [reply] = tenant_says("hello")
    assert "passed your message" in reply


@pytest.mark.django_db(transaction=True)
def test_two_workers_racing_on_one_message_answer_once(home, post_inbound, anthropic_stub):
    from orchestration.engine import turn_run

    anthropic_stub.default = StubReply(body=tool_use_response("respond", {"message": "Hello!"}), delay=0.5)
    response = post_inbound(phone="+447700900123", to="+14155550001", body="hi")
    message = Message.objects.get(provider_sid=response.params["MessageSid"])
    barrier = threading.Barrier(2)
    results = []

    def worker():
        barrier.wait()
        try:
            results.append(turn_run(conversation_id=message.conversation_id, message_ids=[message.pk]))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(anthropic_stub.requests) == 2  # both asked the model...
    assert sum(result is not None for result in results) == 1  # ...one applied
    assert Message.objects.filter(direction="outbound").count() == 1
    assert Turn.objects.count() == 1
