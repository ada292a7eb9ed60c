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
