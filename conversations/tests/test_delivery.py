"""Outbound sending through the real twilio SDK against a local stub."""

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.delivery import SendRetry, message_send, message_status_update
from conversations.models import Conversation, Message
from conversations.outbound import outbound_text_queue
from conversations.testing.twilio_stub import TwilioReply
from properties.tests.factories import OrganizationFactory, WhatsAppNumberFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation():
    number = WhatsAppNumberFactory(number="+14155550001")
    conversation = Conversation.objects.create(
        organization=number.organization,
        phone="+447700900123",
        whatsapp_id="whatsapp:+447700900123",
        last_inbound_at=timezone.now(),
    )
    Message.objects.create(
        organization=number.organization,
        conversation=conversation,
        direction="inbound",
        author="tenant",
        body="hi",
        provider_sid="SMin1",
        to_address="whatsapp:+14155550001",
        status="received",
    )
    return conversation


def queue(conversation, body="We have logged your repair.", purpose="generic"):
    [message] = outbound_text_queue(conversation=conversation, body=body, author="assistant", purpose=purpose)
    return message


def test_send_inside_the_window_posts_text_from_the_number_the_tenant_wrote_to(conversation, twilio_stub):
    message = message_send(message_id=queue(conversation).pk)
    [sent] = twilio_stub.sent
    assert sent["To"] == "whatsapp:+447700900123"
    assert sent["From"] == "whatsapp:+14155550001"
    assert sent["Body"] == "We have logged your repair."
    assert sent["StatusCallback"] == "https://repairs.example.com/webhooks/twilio/status"
    assert message.status == Message.Status.QUEUED
    assert message.provider_sid.startswith("SM") and message.sent_at is not None
    assert twilio_stub.requests[0]["auth_user"].startswith("AC")


def test_messaging_service_is_used_when_the_organization_has_one(conversation, twilio_stub):
    conversation.organization.messaging_service_sid = "MG" + "b" * 32
    conversation.organization.save()
    message_send(message_id=queue(conversation).pk)
    assert twilio_stub.sent[0]["MessagingServiceSid"] == "MG" + "b" * 32
    assert "From" not in twilio_stub.sent[0]


def test_a_message_is_sent_once_however_often_its_task_runs(conversation, twilio_stub):
    message = queue(conversation)
    message_send(message_id=message.pk)
    assert message_send(message_id=message.pk) is None
    assert len(twilio_stub.sent) == 1


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_leave_the_message_pending_for_a_retry(conversation, twilio_stub, status):
    twilio_stub.queue(TwilioReply(status=status, code=20429))
    message = queue(conversation)
    with pytest.raises(SendRetry):
        message_send(message_id=message.pk)
    message.refresh_from_db()
    assert message.status == Message.Status.PENDING and message.send_attempts == 1
    message_send(message_id=message.pk)  # the retry succeeds
    message.refresh_from_db()
    assert message.status == Message.Status.QUEUED and message.send_attempts == 2


def test_permanent_errors_are_recorded_on_the_message(conversation, twilio_stub):
    twilio_stub.queue(TwilioReply(status=400, code=63016, message="Outside the allowed window"))
    message = message_send(message_id=queue(conversation).pk)
    message.refresh_from_db()
    assert message.status == Message.Status.FAILED
    assert message.error_code == "63016"
    assert "Outside the allowed window" in message.error_message


def test_outside_the_window_a_template_is_sent(conversation, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"issue_update": "HX" + "1" * 32}
    Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=timezone.now() - timedelta(hours=25))
    message = message_send(message_id=queue(conversation, body="Your repair is booked", purpose="issue_update").pk)
    [sent] = twilio_stub.sent
    assert sent["ContentSid"] == "HX" + "1" * 32
    assert '"1": "Your repair is booked"' in sent["ContentVariables"]
    assert "Body" not in sent
    assert message.template_sid == "HX" + "1" * 32


def test_outside_the_window_without_a_template_nothing_is_sent_and_the_reason_recorded(
    conversation, twilio_stub, settings
):
    settings.WHATSAPP_TEMPLATES = {}
    Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=timezone.now() - timedelta(hours=25))
    message = message_send(message_id=queue(conversation).pk)
    assert twilio_stub.sent == []
    assert message.status == Message.Status.FAILED and message.error_code == "window_closed"
    assert "24-hour window" in message.error_message


def test_console_sender_prints_and_marks_sent(conversation, capsys, settings):
    settings.WHATSAPP_SENDER = "console"
    message = message_send(message_id=queue(conversation, body="Hello from the console").pk)
    assert "Hello from the console" in capsys.readouterr().out
    assert message.status == Message.Status.SENT


def test_bare_number_messages_go_to_the_emergency_contact(twilio_stub):
    organization = OrganizationFactory()
    WhatsAppNumberFactory(organization=organization, number="+14155550002")
    [message] = outbound_text_queue(
        organization=organization, to="+447700900999", body="Gas alert", author="system", purpose="emergency_alert"
    )
    message_send(message_id=message.pk)
    assert twilio_stub.sent[0]["To"] == "whatsapp:+447700900999"
    assert twilio_stub.sent[0]["From"] == "whatsapp:+14155550002"


def test_status_callbacks_only_move_forward(conversation, twilio_stub):
    message = message_send(message_id=queue(conversation).pk)
    assert message_status_update(provider_sid=message.provider_sid, status="delivered")
    assert not message_status_update(provider_sid=message.provider_sid, status="sent")  # late, out of order
    message.refresh_from_db()
    assert message.status == "delivered"
    assert message_status_update(provider_sid=message.provider_sid, status="read")
    assert not message_status_update(provider_sid="SMunknown", status="read")
    assert not message_status_update(provider_sid=message.provider_sid, status="exploded")


def test_status_callback_endpoint_is_signed_and_records_errors(conversation, twilio_stub, client):
    from conftest import AUTH_TOKEN
    from conversations.testing.signing import STATUS_PATH, twilio_signature

    message = message_send(message_id=queue(conversation).pk)
    params = {"MessageSid": message.provider_sid, "MessageStatus": "undelivered", "ErrorCode": "63024"}
    assert client.post(STATUS_PATH, params, HTTP_X_TWILIO_SIGNATURE="forged").status_code == 403
    sig = twilio_signature(auth_token=AUTH_TOKEN, url="https://repairs.example.com" + STATUS_PATH, params=params)
    assert client.post(STATUS_PATH, params, HTTP_X_TWILIO_SIGNATURE=sig).status_code == 204
    message.refresh_from_db()
    assert message.status == "undelivered" and message.error_code == "63024"
