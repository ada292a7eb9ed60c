from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Media, Message
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


def test_pending_outbound_goes_in_one_task_per_recipient_in_the_order_written(queued, settings):
    """A number Twilio keeps refusing holds only its own messages: one task
    carried every pending message, and its first failure held them all."""
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    amira, ben = "whatsapp:+447700900001", "whatsapp:+447700900002"
    first = MessageFactory(direction="outbound", author="assistant", status="pending", to_address=amira)
    other = MessageFactory(direction="outbound", author="assistant", status="pending", to_address=ben)
    then = MessageFactory(direction="outbound", author="assistant", status="pending", to_address=amira)
    for message in (first, other, then):
        age(message, 300)
    assert channel_sweep()["outbound"] == 3
    sends = [args for name, args, _ in queued if name == "outbound.send"]
    assert sorted(sends) == sorted([[[first.pk, then.pk]], [[other.pk]]])


def test_requeues_pending_media(queued, settings):
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    media = MediaFactory()
    type(media).objects.filter(pk=media.pk).update(created_at=timezone.now() - timedelta(seconds=300))
    channel_sweep()
    assert ("media.download", [media.pk], "media") in queued


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


def test_a_backlog_gets_one_queued_download_per_media_per_lease(queued, settings):
    """Sweeps back to back while downloads wait in a long queue: each photo is
    queued once per lease, not once per sweep, and given up after the cap."""
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    settings.SWEEP_LEASE_SECONDS = 300
    settings.SWEEP_MAX_REQUEUES = 2
    backlog = [MediaFactory() for _ in range(30)]
    Media.objects.update(created_at=timezone.now() - timedelta(seconds=600))
    start = timezone.now()
    for second in range(0, 300, 30):  # ten sweeps inside one lease
        channel_sweep(now=start + timedelta(seconds=second))
    downloads = [args[0] for name, args, _ in queued if name == "media.download"]
    assert sorted(downloads) == sorted(media.pk for media in backlog)  # one each
    channel_sweep(now=start + timedelta(seconds=301))  # the lease ran out: once more each
    assert len([name for name, *_ in queued if name == "media.download"]) == 60
    counts = channel_sweep(now=start + timedelta(seconds=602))  # the cap: given up, with the reason
    assert len([name for name, *_ in queued if name == "media.download"]) == 60
    assert counts["gave_up"] == 30
    assert set(Media.objects.values_list("download_state", flat=True)) == {Media.DownloadState.FAILED}
    assert "re-queues" in Media.objects.first().error


def test_media_queued_by_the_webhook_holds_its_lease(
    post_inbound, queued, settings, django_capture_on_commit_callbacks
):
    from conversations.testing.signing import inbound_params
    from properties.tests.factories import WhatsAppNumberFactory

    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    settings.INBOUND_SWEEP_GRACE_SECONDS = 60
    settings.SWEEP_LEASE_SECONDS = 300
    WhatsAppNumberFactory(number="+14155550001")
    params = inbound_params(phone="+447700900123", to="+14155550001", body="")
    params.update(NumMedia="1", MediaUrl0="https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME0")
    with django_capture_on_commit_callbacks(execute=True):
        post_inbound(params)
    assert [name for name, *_ in queued] == ["inbound.process", "media.download"]
    channel_sweep(now=timezone.now() + timedelta(seconds=200))  # past the grace, inside the lease
    assert len(queued) == 2
    channel_sweep(now=timezone.now() + timedelta(seconds=301))
    assert sorted(name for name, *_ in queued) == ["inbound.process"] * 2 + ["media.download"] * 2


def test_an_unprocessed_conversation_is_queued_once_per_lease_and_flagged_at_the_cap(queued, settings):
    settings.INBOUND_SWEEP_GRACE_SECONDS = 60
    settings.SWEEP_LEASE_SECONDS = 300
    settings.SWEEP_MAX_REQUEUES = 1
    message = MessageFactory(conversation=ConversationFactory())
    age(message, 120)
    start = timezone.now()
    for second in range(0, 300, 30):
        channel_sweep(now=start + timedelta(seconds=second))
    assert queued == [("inbound.process", [message.pk], "inbound")]
    counts = channel_sweep(now=start + timedelta(seconds=301))
    assert len(queued) == 1 and counts["gave_up"] == 1
    message.refresh_from_db()
    assert "requeue_limit" in message.flags and message.processed_at is None
    channel_sweep(now=start + timedelta(seconds=1000))
    assert len(queued) == 1


def test_pending_outbound_is_queued_once_per_lease_and_fails_at_the_cap(queued, settings):
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    settings.SWEEP_LEASE_SECONDS = 300
    settings.SWEEP_MAX_REQUEUES = 1
    message = MessageFactory(direction="outbound", author="assistant", status="pending")
    age(message, 300)
    start = timezone.now()
    for second in range(0, 300, 30):
        channel_sweep(now=start + timedelta(seconds=second))
    assert queued == [("outbound.send", [[message.pk]], "outbound")]
    channel_sweep(now=start + timedelta(seconds=301))
    message.refresh_from_db()
    assert len(queued) == 1 and message.status == "failed" and message.error_code == "requeue_limit"


def test_a_broker_outage_gives_the_lease_back(queued, settings, monkeypatch):
    from config.celery import app

    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    settings.BROKER_RETRY_AFTER_SECONDS = 0  # back at once (the pause: config/tests/test_queue_task.py)
    media = MediaFactory()
    Media.objects.update(created_at=timezone.now() - timedelta(seconds=300))

    def down(*args, **kwargs):
        raise ConnectionError("redis down")

    with monkeypatch.context() as patch:
        patch.setattr(app, "send_task", down)
        assert channel_sweep()["media"] == 0
    media.refresh_from_db()
    assert media.queued_at is None and media.requeues == 0
    assert channel_sweep()["media"] == 1  # the broker is back: no lease to wait for
    assert ("media.download", [media.pk], "media") in queued
