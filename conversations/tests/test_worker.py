"""The channel with a real Celery worker on real Redis and the real twilio SDK."""

import pytest
from django.db import transaction

from conftest import wait_for
from conversations.models import Message
from conversations.outbound import outbound_text_queue
from conversations.testing.twilio_stub import TwilioReply
from conversations.tests.factories import ConversationFactory, MessageFactory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


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
