from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Message
from conversations.sweeper import channel_sweep
from conversations.tests.factories import ConversationFactory, MediaFactory, MessageFactory

pytestmark = pytest.mark.django_db


def age(message, seconds):
    type(message).objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(seconds=seconds))


def test_requeues_the_newest_unprocessed_message_of_each_conversation(queued, settings):
    settings.INBOUND_SWEEP_GRACE_SECONDS = 60
    conversation = ConversationFactory()
    older, newer = MessageFactory(conversation=conversation), MessageFactory(conversation=conversation)
    fresh = MessageFactory()  # still inside its grace period
    done = MessageFactory(processed_at=timezone.now())
    for message in (older, newer, done):
        age(message, 120)
    counts = channel_sweep()
    assert ("inbound.process", [newer.pk], "inbound") in queued
    assert all(args != [older.pk] and args != [fresh.pk] and args != [done.pk] for _, args, _ in queued)
    assert counts["inbound"] == 1


def test_requeues_pending_and_stale_sending_outbound_in_order(queued, settings):
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    conversation = ConversationFactory()
    first = MessageFactory(conversation=conversation, direction="outbound", author="assistant", status="pending")
    second = MessageFactory(conversation=conversation, direction="outbound", author="assistant", status="sending")
    sent = MessageFactory(conversation=conversation, direction="outbound", author="assistant", status="sent")
    for message in (first, second, sent):
        age(message, 300)
    Message.objects.filter(pk=second.pk).update(status_updated_at=timezone.now() - timedelta(seconds=300))
    counts = channel_sweep()
    assert ("outbound.send", [[first.pk, second.pk]], "outbound") in queued
    assert counts["stale_sending"] == 1


def test_requeues_pending_media(queued, settings):
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    media = MediaFactory()
    type(media).objects.filter(pk=media.pk).update(created_at=timezone.now() - timedelta(seconds=300))
    channel_sweep()
    assert ("media.download", [media.pk], "default") in queued


def test_a_burst_whose_clocks_disagree_with_arrival_order_is_not_stalled(queued, settings):
    """created_at comes from the web server's clock, ids from PostgreSQL's
    sequence. When a later arrival carries an earlier timestamp the sweeper
    (highest id) and the pipeline (its newest message does the work) must
    still agree on which message that is, or the conversation never moves."""
    from llm.scripted import scripted_clear, scripted_queue
    from orchestration.models import Turn
    from orchestration.pipeline import inbound_process

    settings.INBOUND_SWEEP_GRACE_SECONDS = 60
    settings.INBOUND_COALESCE_SECONDS = 0
    conversation = ConversationFactory()
    first = MessageFactory(conversation=conversation, body="the boiler is off")
    second = MessageFactory(conversation=conversation, body="and no hot water")
    age(first, 120)
    age(second, 130)  # arrived later, stamped earlier by a web server whose clock is behind
    channel_sweep()
    [(name, [message_id], _)] = queued
    assert (name, message_id) == ("inbound.process", second.pk)
    scripted_queue(phone=conversation.phone, calls=[{"tool": "respond", "input": {"message": "Sorry to hear it."}}])
    try:
        inbound_process(message_id=message_id)
    finally:
        scripted_clear(phone=conversation.phone)
    assert not Message.objects.filter(pk__in=[first.pk, second.pk], processed_at__isnull=True).exists()
    assert Turn.objects.get(conversation=conversation).message_ids == [first.pk, second.pk]
