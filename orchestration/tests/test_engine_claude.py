"""The turn engine with the real anthropic SDK against the local stub."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from conversations.models import Message
from orchestration.models import Turn
from orchestration.testing.anthropic_stub import StubReply, error_reply, tool_use_response
from orchestration.testing.fixtures import conversation_for

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
    from llm.anthropic_backend import _client

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


def _content(request) -> str:
    return request["json"]["messages"][0]["content"]


def test_the_request_carries_the_prompt_tools_and_history_in_the_organizations_time(home, tenant_says, anthropic_stub):
    from zoneinfo import ZoneInfo

    from django.utils import timezone

    from orchestration.prompt import SYSTEM_PROMPT
    from orchestration.tool_definitions import TOOLS

    home.timezone = "America/New_York"  # never the same as UTC
    home.save()
    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "Is there an error code?"}),
        tool_use_response("ask_for_photo", {"message": "Could you send a photo?"}),
    )
    tenant_says("My boiler is not working")
    before = timezone.now()
    tenant_says("F22 on the display, since this morning")
    after = timezone.now()
    request = anthropic_stub.requests[1]["json"]
    assert request["system"] == [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
    assert "identity_status" in request["system"][0]["text"] and "exactly one tool" in request["system"][0]["text"]
    assert request["tools"] == TOOLS and request["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert request["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert request["model"] == "claude-haiku-4-5"  # a gathering turn in which no issue can be created yet
    content = request["messages"][0]["content"]
    zone = ZoneInfo("America/New_York")
    nows = {f"Now: {timezone.localtime(t, zone):%Y-%m-%d %H:%M} (America/New_York" for t in (before, after)}
    assert any(now in content for now in nows)
    first, reply, new = Message.objects.order_by("id")[:3]
    assert f"[{timezone.localtime(first.created_at, zone):%Y-%m-%d %H:%M}] Tenant: My boiler is not working" in content
    assert f"[{timezone.localtime(reply.created_at, zone):%Y-%m-%d %H:%M}] You: Is there an error code?" in content
    stamp = f"[{timezone.localtime(new.created_at, zone):%Y-%m-%d %H:%M}] Tenant: F22 on the display"
    assert (
        content.index("Conversation so far:") < content.index("New message(s) from the tenant:") < content.index(stamp)
    )
    assert "Agency: Harbour Lettings" in content and "Property: FLAT-1 - Flat 1, 12 Harbour Street" in content


PHOTO = [("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", "image/jpeg")]


def test_gathering_turns_use_the_small_model_and_issue_turns_the_large(home, tenant_says, anthropic_stub):
    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "Which tap?"}),
        tool_use_response("ask_for_details", {"question": "Since when?"}),
        tool_use_response("ask_for_photo", {"message": "Photo?"}),
        tool_use_response("respond", {"message": "No rush."}),
    )
    tenant_says("The kitchen tap is leaking")  # first turn: large
    tenant_says("the cold one")  # gathering, no issue possible: small
    tenant_says("", media=PHOTO)  # gathering with a photo: create_issue possible, large
    tenant_says("ok give me a minute")  # awaiting a photo: the tenant may decline, large
    models = [r["json"]["model"] for r in anthropic_stub.requests]
    assert models == ["claude-sonnet-4-6", "claude-haiku-4-5", "claude-sonnet-4-6", "claude-sonnet-4-6"]
    assert list(Turn.objects.values_list("model", flat=True)) == ["claude-sonnet-4-5"] * 4  # what the stub says


@pytest.fixture
def boiler_guide(home):
    from retrieval.services import document_ingest

    return document_ingest(
        organization=home,
        title="Flat 1 home guide",
        source_name="home-guide.md",
        content="# Heating\n\n## Repressurising the boiler\n\nIf the pressure gauge shows below 1 bar, open the "
        "silver filling loop under the boiler until the needle reaches 1.5 bar, then close it.\n\n"
        "# Bins\n\n## Collection days\n\nGeneral waste goes out on Tuesday evening, recycling on Friday.",
        embed_now=True,
    )


def test_first_messages_of_an_idle_conversation_skip_retrieval(home, tenant_says, anthropic_stub, boiler_guide):
    anthropic_stub.queue(tool_use_response("respond", {"message": "Hello!"}))
    tenant_says("how do I repressurise the boiler")
    assert "landlord's documents that may help" not in _content(anthropic_stub.requests[0])
    turn = Turn.objects.get()
    assert turn.retrieval_hits == [] and turn.latency_retrieval_ms is None


def test_later_turns_carry_the_propertys_passages(home, tenant_says, anthropic_stub, boiler_guide, settings):
    settings.TURN_KNOWLEDGE_HITS = 1
    anthropic_stub.queue(
        tool_use_response("respond", {"message": "Hello! How can I help?"}),
        tool_use_response("respond", {"message": "Open the filling loop until 1.5 bar."}),
    )
    tenant_says("hi")
    tenant_says("how do I repressurise the boiler? pressure is low")
    content = _content(anthropic_stub.requests[1])
    assert "Flat 1 home guide > Heating > Repressurising the boiler" in content
    assert "silver filling loop" in content and "recycling on Friday" not in content
    turn = Turn.objects.latest("id")
    [hit] = turn.retrieval_hits
    assert hit["via"] == "context" and hit["document"] == "Flat 1 home guide" and hit["chunk_id"]
    assert {"vector_rank", "keyword_rank", "score"} <= set(hit)
    assert turn.latency_retrieval_ms is not None


def test_a_question_the_documents_do_not_answer_gets_no_passages_to_guess_from(
    home, tenant_says, anthropic_stub, boiler_guide, settings
):
    import json

    from llm.types import NO_ANSWER

    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = 1.0  # the head is never that sure: nothing answers
    anthropic_stub.queue(
        tool_use_response("respond", {"message": "Hello! How can I help?"}),
        tool_use_response("search_documents", {"query": "may I keep a dog in the flat"}),
        tool_use_response("respond", {"message": "The documents don't say; I'll ask your landlord."}),
    )
    tenant_says("hi")
    tenant_says("can I keep a dog in the flat?")
    assert "Collection days" not in _content(anthropic_stub.requests[1])  # context retrieval added nothing
    tool_result = json.dumps(anthropic_stub.requests[2]["json"]["messages"][-1])
    assert NO_ANSWER.split(".")[0] in tool_result and "filling loop" not in tool_result
    turn = Turn.objects.latest("id")
    assert turn.retrieval_hits and not any(hit["answers"] for hit in turn.retrieval_hits)
    assert all(0.0 <= hit["answerability"] <= 1.0 for hit in turn.retrieval_hits)  # the head decided, and why

    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = 0.0  # the same question, every passage taken as an answer
    anthropic_stub.queue(
        tool_use_response("search_documents", {"query": "may I keep a dog in the flat"}),
        tool_use_response("respond", {"message": "..."}),
    )
    tenant_says("and a dog?")
    tool_result = json.dumps(anthropic_stub.requests[4]["json"]["messages"][-1])
    assert NO_ANSWER.split(".")[0] not in tool_result and "Flat 1 home guide" in tool_result


def test_a_document_search_that_fails_is_told_to_the_model_and_the_turn_goes_on(
    home, tenant_says, anthropic_stub, monkeypatch
):
    """Not the fallback, the escalation and a paused assistant for a search
    that broke: the model hears it failed and answers without it."""
    import json

    import orchestration.knowledge

    def broken(**kwargs):
        raise RuntimeError("embedding engine crashed")

    anthropic_stub.queue(
        tool_use_response("respond", {"message": "Hello! How can I help?"}),
        tool_use_response("search_documents", {"query": "bin collection day"}),
        tool_use_response("respond", {"message": "I'll check the bin day with your landlord."}),
    )
    tenant_says("hi")
    monkeypatch.setattr(orchestration.knowledge, "knowledge_search", broken)
    assert tenant_says("which day are the bins collected?") == ["I'll check the bin day with your landlord."]
    tool_result = json.dumps(anthropic_stub.requests[2]["json"]["messages"][-1])
    assert "document search is not working" in tool_result and '"is_error": true' in tool_result
    turn = Turn.objects.latest("id")
    assert turn.outcome == "tool" and "embedding engine crashed" in turn.error
    assert not conversation_for().bot_paused


def test_a_stale_report_is_closed_the_tenant_told_and_identity_kept(home, tenant_says, anthropic_stub):
    from datetime import timedelta

    from django.utils import timezone

    from conversations.models import Conversation

    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "Which tap?"}),
        tool_use_response("respond", {"message": "Your earlier report was closed. What's the problem now?"}),
    )
    tenant_says("tap leaking")
    long_ago = timezone.now() - timedelta(days=3)
    Conversation.objects.update(last_turn_at=long_ago, gathering_started_at=long_ago)
    tenant_says("hi again")
    content = _content(anthropic_stub.requests[1])
    assert "gathering_state: idle" in content and "identity_status: confirmed" in content
    assert "left unfinished for more than 24 hours and has been closed" in content
    assert "Tell the tenant so in your reply" in content
    conversation = conversation_for()
    assert (conversation.identity_status, conversation.property.code) == ("confirmed", "FLAT-1")
    turn = Turn.objects.latest("id")
    assert (turn.gathering_before, turn.gathering_after) == ("gathering_details", "idle")


def test_a_database_error_in_a_handler_ends_in_the_fallback_without_more_model_calls(
    home, tenant_says, anthropic_stub, monkeypatch, settings
):
    settings.EMERGENCY_CLASSIFIER = "off"  # only the model calls it an emergency: the error is in its handler
    from issues import services
    from issues.models import Issue
    from properties.tests.factories import IssueFactory

    IssueFactory(organization=home, reference="R-TAKEN", title="Something else entirely")
    monkeypatch.setattr(services, "issue_reference_new", lambda: "R-TAKEN")  # a real UNIQUE violation in Postgres
    anthropic_stub.queue(
        tool_use_response(
            "create_issue",
            {
                "title": "Burst pipe under the sink",
                "description": "Water spraying from the pipe under the kitchen sink.",
                "category": "plumbing",
                "urgency": "emergency",
                "location": "kitchen sink",
                "photo": "not_needed",
                "message": "I've logged this as an emergency.",
            },
        )
    )
    [reply] = tenant_says("water spraying from the pipe under the kitchen sink")
    assert "passed your message" in reply
    turn = Turn.objects.get()
    assert turn.outcome == "fallback" and "IntegrityError" in turn.error
    assert turn.tool_calls[0]["name"] == "create_issue" and turn.input_tokens > 0
    conversation = conversation_for()
    assert conversation.escalated_at is not None and conversation.bot_paused
    assert Issue.objects.filter(conversation=conversation).count() == 0
    assert Message.objects.get(direction="inbound").processed_at is not None
    # The escalated conversation is not sent to the model again.
    assert tenant_says("hello?") == []
    assert len(anthropic_stub.requests) == 1
