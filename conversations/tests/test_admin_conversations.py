"""The conversation page a landlord reads and acts from, and the read-only traces."""

import pytest
from django.contrib.admin import helpers
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from conversations.models import Conversation, Message
from emergencies.models import EmergencyAlert
from properties.admin_paginator import COUNT_CAP, CappedCountPaginator
from properties.tests.factories import UserFactory
from properties.tests.persona import ConversationFactory, MessageFactory, TurnFactory, alice_and_bob

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(client):
    alice, _ = alice_and_bob()
    client.force_login(alice.user)
    return alice


def page(client, conversation, **params):
    response = client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk]), params)
    assert response.status_code == 200
    return response


def test_conversation_page_shows_transcript_photos_state_traces_and_alerts(client, alice):
    html = page(client, alice.conversation).content.decode()
    # transcript, in order, with the photo served through the scoped view
    assert html.index(escape(alice.inbound.body)) < html.index(escape(alice.outbound.body))
    assert reverse("admin:conversations_media_file", args=[alice.media.pk]) in html
    # identity and gathering state
    assert '<dd id="identity-status">Confirmed</dd>' in html
    assert '<dd id="gathering-state">Issue created</dd>' in html
    # the turn trace, readable: tool chosen, the rejection and why, retrieval hits, tokens, cost
    assert f'id="turn-{alice.turn.pk}"' in html
    assert "chose <strong>ask_for_details</strong>" in html
    assert "1 rejected" in html
    assert "identity is unidentified; confirm the property first" in html
    assert "Tenant handbook" in html
    assert "Plumbing &gt; Taps" in html
    assert "<td>no (32%)</td>" in html  # the passages were not taken to answer, and the head's probability
    assert "1234→56 tokens" in html
    assert "$0.004321" in html
    # the trace follows the inbound message it handled, before the reply
    assert html.index(escape(alice.inbound.body)) < html.index(f'id="turn-{alice.turn.pk}"')
    # emergency alert with its verdict
    assert "Active leak through a ceiling." in html
    assert "badge verdict-confirmed" in html
    # issues raised from it
    assert alice.emergency.reference in html
    # controls
    assert 'id="take-over"' in html
    assert 'id="send-message"' in html
    # no save buttons: the state changes only through the controls
    assert 'name="_save"' not in html


def test_a_trace_from_before_the_answerability_head_still_shows_its_hits(client, alice):
    hit = {"chunk_id": 2, "document": "Old guide", "heading": "Bins", "score": 0.02, "vector_rank": 1}
    turn = TurnFactory(
        conversation=alice.conversation, retrieval_hits=[hit, {**hit, "heading": "Keys", "answers": True}]
    )
    html = page(client, alice.conversation).content.decode()
    row = html[html.index(f'id="turn-{turn.pk}"') :]
    assert "<td>Bins</td>" in row and "<td>—</td></tr>" in row  # no verdict recorded: a dash
    assert "<td>yes</td>" in row  # a verdict without the head's probability


def test_a_reply_that_could_not_be_sent_is_shown_with_its_reason(client, alice):
    alice.outbound.status = Message.Status.FAILED
    alice.outbound.error_code = "63016"
    alice.outbound.error_message = "Outside the 24-hour window and no template is configured"
    alice.outbound.save()
    html = page(client, alice.conversation).content.decode()
    assert f'id="send-error-{alice.outbound.pk}">not delivered (63016): Outside the 24-hour window' in html


def test_take_over_hand_back_and_send_as_landlord(client, alice, django_capture_on_commit_callbacks):
    conversation = alice.conversation
    assert client.get(reverse("admin:conversations_conversation_takeover", args=[conversation.pk])).status_code == 405

    client.post(reverse("admin:conversations_conversation_takeover", args=[conversation.pk]))
    conversation.refresh_from_db()
    assert conversation.bot_paused is True
    html = page(client, conversation).content.decode()
    assert 'id="hand-back"' in html
    assert "a person (assistant paused)" in html

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("admin:conversations_conversation_send", args=[conversation.pk]),
            {"body": "Hi, it's your landlord. A plumber is on the way."},
            follow=True,
        )
    assert "Message queued for sending" in response.content.decode()
    sent = Message.objects.get(conversation=conversation, author="landlord")
    assert sent.body == "Hi, it's your landlord. A plumber is on the way."
    assert sent.raw_payload["sent_by_user_id"] == alice.user.pk
    assert len(callbacks) == 1
    assert escape(sent.body) in page(client, conversation).content.decode()

    client.post(reverse("admin:conversations_conversation_handback", args=[conversation.pk]))
    conversation.refresh_from_db()
    assert conversation.bot_paused is False


def test_empty_landlord_message_is_refused(client, alice):
    response = client.post(
        reverse("admin:conversations_conversation_send", args=[alice.conversation.pk]), {"body": "  "}, follow=True
    )
    assert "Not sent" in response.content.decode()
    assert not Message.objects.filter(author="landlord").exists()


def test_list_actions_take_over_and_hand_back(client, alice):
    url = reverse("admin:conversations_conversation_changelist")
    client.post(url, {"action": "take_over", helpers.ACTION_CHECKBOX_NAME: [alice.conversation.pk]})
    assert Conversation.objects.get(pk=alice.conversation.pk).bot_paused is True
    html = client.get(url).content.decode()
    assert "person (taken over)" in html
    assert ">EMERGENCY<" in html
    client.post(url, {"action": "hand_back", helpers.ACTION_CHECKBOX_NAME: [alice.conversation.pk]})
    assert Conversation.objects.get(pk=alice.conversation.pk).bot_paused is False


def test_dismissed_alert_is_not_flagged_in_the_list(client, alice):
    EmergencyAlert.objects.update(status=EmergencyAlert.Status.DISMISSED)
    html = client.get(reverse("admin:conversations_conversation_changelist")).content.decode()
    assert ">EMERGENCY<" not in html


def test_long_transcript_shows_the_recent_messages_unless_asked(client, alice):
    for n in range(205):
        MessageFactory(conversation=alice.conversation, body=f"message number {n:03d}")
    response = page(client, alice.conversation)
    assert response.context["messages_hidden"] == 207 - 200
    assert "message number 204" in response.content.decode()
    assert "message number 000" not in response.content.decode()
    assert "message number 000" in page(client, alice.conversation, all="1").content.decode()


def test_turn_admin_is_read_only_and_readable(client, alice):
    url = reverse("admin:orchestration_turn_change", args=[alice.turn.pk])
    response = client.get(url)
    html = response.content.decode()
    assert "identity is unidentified; confirm the property first" in html
    assert '<details class="turn" id="turn-' in html and " open>" in html
    assert client.post(url, {}).status_code == 403
    changelist = client.get(reverse("admin:orchestration_turn_changelist"))
    assert changelist.context["cl"].show_full_result_count is False
    assert "ask_for_details" in changelist.content.decode()


def test_alert_admin_shows_verdicts_read_only(client, alice):
    response = client.get(reverse("admin:emergencies_emergencyalert_changelist"))
    assert "verdict-confirmed" in response.content.decode()
    url = reverse("admin:emergencies_emergencyalert_change", args=[alice.alert.pk])
    assert client.post(url, {}).status_code == 403


def test_unrouted_messages_are_for_superusers_only(client, alice):
    unrouted = Message.objects.create(
        direction="inbound", author="tenant", status="received", body="wrong number", flags=["unrouted"]
    )
    url = reverse("admin:conversations_message_changelist")
    landlord_view = client.get(url)
    assert unrouted not in landlord_view.context["cl"].result_list
    assert landlord_view.context["cl"].show_full_result_count is False

    client.force_login(UserFactory(is_superuser=True))
    response = client.get(url, {"routing": "unrouted"})
    assert list(response.context["cl"].result_list) == [unrouted]


def test_capped_paginator_stops_counting():
    assert CappedCountPaginator(list(range(COUNT_CAP + 50)), 100).count == COUNT_CAP + 50
    conversation = ConversationFactory()
    for _ in range(3):
        MessageFactory(conversation=conversation)
    with CaptureQueriesContext(connection) as queries:
        assert CappedCountPaginator(Message.objects.order_by("id"), 2).count == 3
    assert "LIMIT 10001" in queries[0]["sql"]


CONVERSATION_LIST_QUERY_BUDGET = 12


def test_conversation_list_query_count_stays_flat(client, alice, django_assert_max_num_queries):
    def queries():
        with CaptureQueriesContext(connection) as captured:
            response = client.get(reverse("admin:conversations_conversation_changelist"))
        return len(captured), len(response.context["cl"].result_list)

    small, small_rows = queries()
    for _ in range(30):
        conversation = ConversationFactory(
            organization=alice.organization, tenant=alice.tenant, property=alice.property
        )
        MessageFactory(conversation=conversation)
        TurnFactory(conversation=conversation)
        EmergencyAlert.objects.create(organization=alice.organization, conversation=conversation, category="gas")
    large, large_rows = queries()
    print(f"conversation list: {small} queries for {small_rows} rows, {large} for {large_rows}")
    assert large_rows == 31
    assert large == small
    with django_assert_max_num_queries(CONVERSATION_LIST_QUERY_BUDGET):
        client.get(reverse("admin:conversations_conversation_changelist"))


def test_conversation_page_query_count_does_not_grow_with_messages(client, alice):
    def queries():
        with CaptureQueriesContext(connection) as captured:
            page(client, alice.conversation)
        return len(captured)

    small = queries()
    for _ in range(40):
        MessageFactory(conversation=alice.conversation)
        TurnFactory(conversation=alice.conversation)
    assert queries() == small


MESSAGE_LIST_QUERY_BUDGET = 10


def test_message_list_query_count_stays_flat(client, alice, django_assert_max_num_queries):
    def queries():
        with CaptureQueriesContext(connection) as captured:
            response = client.get(reverse("admin:conversations_message_changelist"))
        return len(captured), len(response.context["cl"].result_list)

    small, small_rows = queries()
    for _ in range(20):
        MessageFactory(conversation=ConversationFactory(organization=alice.organization))
    large, large_rows = queries()
    assert (small_rows, large_rows) == (2, 22)
    assert large == small
    with django_assert_max_num_queries(MESSAGE_LIST_QUERY_BUDGET):
        client.get(reverse("admin:conversations_message_changelist"))


def test_turn_filters_find_rejections_and_errors(client, alice):
    clean = TurnFactory(conversation=alice.conversation, gating_rejections=0, tool_calls=[], retrieval_hits=[])
    broken = TurnFactory(conversation=alice.conversation, gating_rejections=0, error="model timed out")
    url = reverse("admin:orchestration_turn_changelist")

    def shown(**params):
        return {t.pk for t in client.get(url, params).context["cl"].result_list}

    assert shown(trouble="rejected") == {alice.turn.pk}
    assert shown(trouble="error") == {broken.pk}
    assert clean.pk in shown(gathering_after="gathering_details")
