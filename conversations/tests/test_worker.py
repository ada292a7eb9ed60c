"""The channel with a real Celery worker on real Redis and the real twilio SDK."""

import time

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils.html import escape

from conftest import wait_for
from conversations.models import Message
from conversations.outbound import outbound_text_queue
from conversations.testing.twilio_stub import TwilioReply
from conversations.tests.factories import ConversationFactory, MessageFactory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def settle(predicate, seconds: float = 3.0) -> None:
    """Wait a little longer to see that nothing more happens (a retry would
    come within two seconds)."""
    time.sleep(seconds)
    assert predicate()


def test_worker_sends_queued_messages_in_order_and_retries_transient_errors(twilio_stub, celery_worker_process):
    conversation = ConversationFactory()
    MessageFactory(conversation=conversation, to_address="whatsapp:+14155550009")
    twilio_stub.queue(TwilioReply(status=503))  # the first attempt fails
    with transaction.atomic():
        messages = outbound_text_queue(
            conversation=conversation, body=("First part. " * 150) + "\n\nSecond part.", author="assistant"
        )
    assert len(messages) == 2
    wait_for(
        lambda: Message.objects.filter(pk__in=[m.pk for m in messages], status="queued").count() == 2,
        timeout=60,
        message="both parts sent",
    )
    bodies = [form["Body"] for form in twilio_stub.sent]
    assert len(bodies) == 3  # one failed attempt, then both parts in order
    assert bodies[1].startswith("First part.") and bodies[2].endswith("Second part.")
    assert bodies[0] == bodies[1]  # the retry resent the part that failed


def test_worker_records_a_permanent_send_error_without_retrying_and_the_page_shows_it(
    twilio_stub, celery_worker_process, client, django_user_model
):
    conversation = ConversationFactory()
    MessageFactory(conversation=conversation, to_address="whatsapp:+14155550009")
    twilio_stub.queue(TwilioReply(status=400, code=21211, message="The 'To' number is not a valid phone number."))
    with transaction.atomic():
        [message] = outbound_text_queue(conversation=conversation, body="Your repair is booked.", author="assistant")
    wait_for(lambda: Message.objects.filter(pk=message.pk, status="failed").exists(), timeout=60, message="send failed")
    settle(lambda: len(twilio_stub.sent) == 1)  # permanent: no retry comes
    message.refresh_from_db()
    assert message.error_code == "21211" and message.send_attempts == 1
    assert "not a valid phone number" in message.error_message

    client.force_login(django_user_model.objects.create_superuser("owner", "owner@example.com", "pw-not-used"))
    html = client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk])).content.decode()
    assert f'id="send-error-{message.pk}">not delivered (21211): Twilio 400:' in html
    assert escape("The 'To' number is not a valid phone number.") in html


def test_simultaneous_different_messages_for_one_conversation_get_one_reply_in_order(
    twilio_stub, celery_worker_factory, settings
):
    """Five different messages from one tenant posted at the same moment: one
    row each, one turn over all five in arrival (id) order, one reply."""
    from conftest import deliver_concurrently
    from conversations.testing.signing import inbound_params
    from llm.scripted import scripted_clear, scripted_queue
    from orchestration.models import Turn
    from properties.tests.factories import WhatsAppNumberFactory

    WhatsAppNumberFactory(number="+14155550011")
    phone = "+447700900555"
    celery_worker_factory(INBOUND_COALESCE_SECONDS="2").start()
    scripted_queue(phone=phone, calls=[{"tool": "respond", "input": {"message": "Thanks, I have all of that."}}])
    burst = [inbound_params(phone=phone, to="+14155550011", body=f"part {n}") for n in range(5)]
    try:
        assert deliver_concurrently(burst) == [200] * len(burst)
        wait_for(lambda: len(twilio_stub.sent) >= 1, timeout=60, message="the reply sent")
        settle(lambda: len(twilio_stub.sent) == 1 and Turn.objects.count() == 1)
    finally:
        scripted_clear(phone=phone)
    inbound = list(Message.objects.filter(direction="inbound").order_by("id"))
    assert sorted(m.provider_sid for m in inbound) == sorted(p["MessageSid"] for p in burst)  # one row each
    assert all(m.processed_at is not None for m in inbound)
    assert len({m.conversation_id for m in inbound}) == 1
    assert Turn.objects.get().message_ids == [m.pk for m in inbound]
    assert twilio_stub.sent[0]["Body"] == "Thanks, I have all of that."
