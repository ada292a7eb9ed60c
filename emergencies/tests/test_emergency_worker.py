"""The classifier's half of the safety path, end to end: a real Celery worker
on the ``emergency`` queue screens the message and sends the safety text
through the real twilio SDK (to the local stub); the sweeper covers a worker
that is down."""

from __future__ import annotations

import pytest

from conftest import wait_for
from emergencies.models import EmergencyAlert
from emergencies.sweeper import emergency_sweep
from emergencies.testing import safety_texts, screen_waiting
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

# No rule knows this wording: only the classifier can catch it.
NEWBORN_NO_HEAT = "the boilers packed in, theres ice on the inside of the windows and my daughter is 3 weeks old"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_emergency_worker_sends_the_safety_text_through_twilio(
    home, post_inbound, twilio_stub, celery_worker_factory
):
    celery_worker_factory().start()
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body=NEWBORN_NO_HEAT)
    assert response.content.decode().endswith("<Response></Response>")  # the request did not wait for it

    sent = wait_for(lambda: twilio_stub.sent, timeout=60, message="the safety text to reach Twilio")
    alert = EmergencyAlert.objects.get()
    assert (alert.source, alert.category) == ("classifier", "no_heat_vulnerable")
    assert sent[0]["To"] == f"whatsapp:{PHONE}" and sent[0]["Body"] == alert.safety_reply


@pytest.mark.django_db
def test_with_the_emergency_worker_down_the_sweeper_screens_after_the_grace_period(
    home, post_inbound, queued, settings
):
    post_inbound(phone=PHONE, to=ORG_NUMBER, body=NEWBORN_NO_HEAT)  # queued, but nobody takes the task
    assert emergency_sweep()["screened"] == 0  # still within EMERGENCY_SCREEN_GRACE_SECONDS
    assert not EmergencyAlert.objects.exists()

    settings.EMERGENCY_SCREEN_GRACE_SECONDS = -1
    assert emergency_sweep()["screened"] == 1
    assert EmergencyAlert.objects.get().category == "no_heat_vulnerable"
    assert len(safety_texts(PHONE)) == 1
    assert emergency_sweep()["screened"] == 0  # once


@pytest.mark.django_db
def test_a_turn_never_runs_before_its_messages_are_screened(home, tenant_says, queued):
    """The model is not asked until the emergency is known, even when the
    screening task is stuck behind a dead worker."""
    replies = tenant_says(NEWBORN_NO_HEAT)
    alert = EmergencyAlert.objects.get()
    assert alert.category == "no_heat_vulnerable"
    assert safety_texts(PHONE) == [alert.safety_reply]
    assert replies[0] == alert.safety_reply  # sent before the turn's own reply


@pytest.mark.django_db
def test_a_turn_that_screens_first_leaves_the_request_nothing_to_send(
    home, post_inbound, queued, settings, monkeypatch
):
    """The turn is queued when the message commits, before the request screens
    it; with no coalescing wait a worker can get there first. Exactly one of
    them decides and one safety text goes out (the CI failure of 2026-11-25)."""
    import emergencies.receiver as receiver
    from emergencies.screening import message_screen, message_screen_in_request

    settings.EMERGENCY_CLASSIFIER = "off"  # the rules decide in the request

    def turn_wins_the_race(message):
        message_screen(message_id=message.pk, stage="turn")
        return message_screen_in_request(message)

    monkeypatch.setattr(receiver, "message_screen_in_request", turn_wins_the_race)
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body="I can smell gas in the hallway")

    alert = EmergencyAlert.objects.get()
    assert safety_texts(PHONE) == [alert.safety_reply]  # sent once, by the turn
    assert alert.safety_reply not in response.content.decode()


@pytest.mark.django_db
def test_a_safety_text_written_but_never_sent_goes_out_at_the_next_emergency_sweep(
    home, post_inbound, queued, twilio_stub, settings, monkeypatch
):
    """The worker died between the screening's commit and the send: the
    emergency sweeper sends it within seconds, not when the outbound lease
    runs out, and only once."""
    import emergencies.screening
    from conversations.models import Message

    post_inbound(phone=PHONE, to=ORG_NUMBER, body=NEWBORN_NO_HEAT)
    monkeypatch.setattr(emergencies.screening, "_send_now", lambda message_ids: None)  # the crash
    screen_waiting()
    safety = Message.objects.get(direction="outbound", raw_payload__purpose="safety")
    assert safety.status == "pending" and twilio_stub.sent == []

    assert emergency_sweep()["safety_sent"] == 0  # within EMERGENCY_SCREEN_GRACE_SECONDS: the worker may still send it
    settings.EMERGENCY_SCREEN_GRACE_SECONDS = -1
    assert emergency_sweep()["safety_sent"] == 1
    assert [sent["Body"] for sent in twilio_stub.sent] == [safety.body]
    assert emergency_sweep()["safety_sent"] == 0 and len(twilio_stub.sent) == 1


@pytest.mark.django_db
def test_the_emergency_sweep_stops_sending_at_twilios_first_refusal(home, post_inbound, queued, twilio_stub, settings):
    """A Twilio that is down costs a sweep one timeout, not one per waiting text."""
    from conversations.models import Conversation
    from conversations.outbound import outbound_text_queue
    from conversations.testing.twilio_stub import TwilioReply

    post_inbound(phone=PHONE, to=ORG_NUMBER, body="hello")
    conversation = Conversation.objects.get()
    for n in range(2):
        outbound_text_queue(conversation=conversation, body=f"Safety {n}", purpose="safety", queue=False)
    settings.EMERGENCY_SCREEN_GRACE_SECONDS = -1
    twilio_stub.queue(TwilioReply(status=503))
    assert emergency_sweep()["safety_sent"] == 1 and len(twilio_stub.sent) == 1
    assert emergency_sweep()["safety_sent"] == 2
    assert [sent["Body"] for sent in twilio_stub.sent] == ["Safety 0", "Safety 0", "Safety 1"]


@pytest.mark.django_db
def test_a_safety_text_in_parts_goes_to_the_outbound_task_whole_at_the_first_refusal(
    home, post_inbound, queued, twilio_stub
):
    """Part one refused for now, part two sent inline: the tenant would read
    the second half first. The parts left go on together, in order."""
    from conversations.models import Message
    from conversations.testing.twilio_stub import TwilioReply
    from emergencies.models import SafetyMessage

    sentences = [f"Step {n}: keep the heater on and the baby in the warmest room." for n in range(30)]
    SafetyMessage.objects.create(
        organization=home, country="GB", category="no_heat_vulnerable", language="en", body=" ".join(sentences)
    )
    post_inbound(phone=PHONE, to=ORG_NUMBER, body=NEWBORN_NO_HEAT)
    twilio_stub.queue(TwilioReply(status=503))
    screen_waiting()
    parts = list(
        Message.objects.filter(direction="outbound", raw_payload__purpose="safety")
        .order_by("id")
        .values_list("pk", flat=True)
    )
    assert len(parts) == 2 and len(twilio_stub.sent) == 1  # the second part was not sent ahead of the first
    assert ("outbound.send", [parts]) in [(name, args) for name, args, _ in queued]
