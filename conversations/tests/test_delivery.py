"""Outbound sending through the real twilio SDK against a local stub."""

import json
from datetime import timedelta

import pytest
from django.db import connection
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
    assert sent["StatusCallback"] == f"https://repairs.example.com/webhooks/twilio/status?mid={message.pk}"
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


def test_a_send_whose_connection_broke_before_the_answer_is_not_sent_again_at_once(conversation, twilio_stub):
    """Twilio took the request and the connection closed before its answer
    (a load balancer's reset): as after a read timeout, the outcome is
    unknown, so no retry now (it used to be retried at once, a second copy)."""
    twilio_stub.queue(TwilioReply(drop=True))
    message = queue(conversation)
    message_send(message_id=message.pk)  # no SendRetry
    message.refresh_from_db()
    assert message.status == Message.Status.SENDING and "cut off" in message.error_message
    assert len(twilio_stub.sent) == 1


def test_a_send_that_could_not_connect_is_retried(conversation, twilio_stub, settings):
    """No connection was made, so Twilio has nothing: pending again, for a retry."""
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        settings.TWILIO_API_BASE_URL = f"http://127.0.0.1:{closed.getsockname()[1]}"
    message = queue(conversation)
    with pytest.raises(SendRetry):
        message_send(message_id=message.pk)
    message.refresh_from_db()
    assert message.status == Message.Status.PENDING and "unreachable" in message.error_message


def test_a_send_twilio_took_without_answering_in_time_is_not_sent_again_at_once(
    conversation, twilio_stub, settings, queued
):
    """The request reached Twilio and the answer did not come back: a retry now
    could deliver the message twice. The status callback settles it; without
    one the sweeper sends it again later (at least once)."""
    import time

    from conversations.sweeper import channel_sweep

    settings.TWILIO_TIMEOUT_SECONDS = 0.3
    twilio_stub.before_reply = lambda form, sid: time.sleep(1.0)
    message = queue(conversation)
    message_send(message_id=message.pk)  # no SendRetry: nothing to retry yet
    message.refresh_from_db()
    assert message.status == Message.Status.SENDING and len(twilio_stub.sent) == 1
    assert "did not answer in time" in message.error_message

    twilio_stub.before_reply = None
    assert message_status_update(status="sent", provider_sid="SMlate", message_id=message.pk)  # it did go
    settings.OUTBOUND_SWEEP_GRACE_SECONDS = -1
    channel_sweep()
    message.refresh_from_db()
    assert message.status == Message.Status.SENT and message.provider_sid == "SMlate"

    silent = queue(conversation, body="Another message")
    twilio_stub.before_reply = lambda form, sid: time.sleep(1.0)
    message_send(message_id=silent.pk)
    twilio_stub.before_reply = None
    channel_sweep()  # no callback came: pending again, and queued to be sent again
    silent.refresh_from_db()
    assert silent.status == Message.Status.PENDING

    safety = queue(conversation, body="Leave the building and ring 999.", purpose="safety")
    twilio_stub.before_reply = lambda form, sid: time.sleep(1.0)
    with pytest.raises(SendRetry):  # a second copy costs less than minutes without it
        message_send(message_id=safety.pk)
    message_send(message_id=safety.pk)  # not a copy per timeout: after the first, it waits like the others
    safety.refresh_from_db()
    assert safety.status == Message.Status.SENDING and len(twilio_stub.sent) == 4
    twilio_stub.before_reply = None


def test_a_turns_messages_go_in_one_task_per_recipient_in_the_order_written(
    conversation, queued, django_capture_on_commit_callbacks
):
    """One task per recipient: a landlord's number Twilio refuses for a while
    must not hold the tenant's reply behind it."""
    from django.db import transaction

    from conversations.outbound import outbound_sent_together

    with django_capture_on_commit_callbacks(execute=True), transaction.atomic(), outbound_sent_together():
        first = queue(conversation, body="one")
        [landlord] = outbound_text_queue(organization=conversation.organization, to="+447700900555", body="ALERT")
        second = queue(conversation, body="two")
    sends = [args for name, args, _ in queued if name == "outbound.send"]
    assert sends == [[[first.pk, second.pk]], [[landlord.pk]]]


def test_permanent_errors_are_recorded_on_the_message_and_not_retried(conversation, twilio_stub):
    twilio_stub.queue(TwilioReply(status=400, code=21211, message="Invalid 'To' Phone Number"))
    message = message_send(message_id=queue(conversation).pk)
    message.refresh_from_db()
    assert message.status == Message.Status.FAILED
    assert message.error_code == "21211"
    assert "Invalid 'To' Phone Number" in message.error_message
    assert len(twilio_stub.sent) == 1 and message.send_attempts == 1


def test_63016_inside_the_believed_window_falls_back_to_the_template_once(conversation, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"issue_update": "HX" + "2" * 32}
    twilio_stub.queue(TwilioReply(status=400, code=63016, message="Outside the allowed window"))
    message = message_send(message_id=queue(conversation, body="Plumber on Tuesday", purpose="issue_update").pk)
    text, template = twilio_stub.sent
    assert text["Body"] == "Plumber on Tuesday" and "ContentSid" not in text
    assert template["ContentSid"] == "HX" + "2" * 32
    assert json.loads(template["ContentVariables"]) == {"1": "Plumber on Tuesday"}
    assert "Body" not in template
    assert template["StatusCallback"].endswith(f"?mid={message.pk}")
    assert message.status == Message.Status.QUEUED and message.template_sid == "HX" + "2" * 32
    assert message.error_code == "" and message.send_attempts == 2
    assert "window_closed" in message.flags
    [refused] = message.raw_payload["attempts"]
    assert refused["kind"] == "text" and refused["error_code"] == "63016"
    assert "Outside the allowed window" in refused["error"]


def test_63016_without_a_template_fails_with_the_reason(conversation, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {}
    twilio_stub.queue(TwilioReply(status=400, code=63016, message="Outside the allowed window"))
    message = message_send(message_id=queue(conversation).pk)
    assert len(twilio_stub.sent) == 1
    assert message.status == Message.Status.FAILED and message.error_code == "63016"
    assert "Outside the allowed window" in message.error_message and "WHATSAPP_TEMPLATES" in message.error_message
    assert message.raw_payload["attempts"][0]["error_code"] == "63016"


def test_63016_for_the_template_too_is_not_tried_again(conversation, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "3" * 32}
    twilio_stub.queue(*[TwilioReply(status=400, code=63016, message="Outside the allowed window")] * 2)
    message = message_send(message_id=queue(conversation).pk)
    assert len(twilio_stub.sent) == 2 and "ContentSid" in twilio_stub.sent[1]
    assert message.status == Message.Status.FAILED and message.error_code == "63016"


def test_a_transient_error_after_63016_retries_with_the_template_straight_away(conversation, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "4" * 32}
    twilio_stub.queue(TwilioReply(status=400, code=63016), TwilioReply(status=503))
    message = queue(conversation)
    with pytest.raises(SendRetry):
        message_send(message_id=message.pk)
    message_send(message_id=message.pk)
    assert ["ContentSid" in form for form in twilio_stub.sent] == [False, True, True]
    message.refresh_from_db()
    assert message.status == Message.Status.QUEUED and message.send_attempts == 3


def test_unknown_window_tries_text_then_falls_back_to_the_template(twilio_stub, settings):
    """A bare number (the landlord's emergency contact) has no conversation, so
    we cannot know its window: free text first, the template on 63016."""
    settings.WHATSAPP_TEMPLATES = {"emergency_alert": "HX" + "5" * 32}
    organization = OrganizationFactory()
    WhatsAppNumberFactory(organization=organization, number="+14155550003")
    [message] = outbound_text_queue(
        organization=organization, to="+447700900998", body="Gas alert", author="system", purpose="emergency_alert"
    )
    twilio_stub.queue(TwilioReply(status=400, code=63016, message="Outside the allowed window"))
    message = message_send(message_id=message.pk)
    text, template = twilio_stub.sent
    assert text["Body"] == "Gas alert"
    assert template["ContentSid"] == "HX" + "5" * 32 and json.loads(template["ContentVariables"]) == {"1": "Gas alert"}
    assert message.status == Message.Status.QUEUED and message.raw_payload["attempts"][0]["error_code"] == "63016"


def test_outside_the_window_a_template_is_sent(conversation, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"issue_update": "HX" + "1" * 32}
    Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=timezone.now() - timedelta(hours=25))
    message = message_send(message_id=queue(conversation, body="Your repair is booked", purpose="issue_update").pk)
    [sent] = twilio_stub.sent
    assert sent["ContentSid"] == "HX" + "1" * 32
    assert '"1": "Your repair is booked"' in sent["ContentVariables"]
    assert "Body" not in sent
    assert message.template_sid == "HX" + "1" * 32


def test_a_template_variable_goes_on_one_line(conversation, twilio_stub, settings):
    """WhatsApp refuses a template variable with a line break, a tab or five spaces in a row."""
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "1" * 32}
    Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=timezone.now() - timedelta(hours=25))
    message_send(message_id=queue(conversation, body="Hi\nCan't get in,\tkey safe      code wrong").pk)
    [sent] = twilio_stub.sent
    assert json.loads(sent["ContentVariables"]) == {"1": "Hi Can't get in, key safe code wrong"}


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


def signed_status(client, message, path, **params):
    from conftest import AUTH_TOKEN
    from conversations.testing.signing import twilio_signature

    sig = twilio_signature(auth_token=AUTH_TOKEN, url="https://repairs.example.com" + path, params=params)
    return client.post(path, params, HTTP_X_TWILIO_SIGNATURE=sig)


def test_status_callback_finds_the_message_by_our_id_in_the_signed_url(conversation, twilio_stub, client):
    message = message_send(message_id=queue(conversation).pk)
    path = twilio_stub.sent[0]["StatusCallback"].removeprefix("https://repairs.example.com")
    assert path == f"/webhooks/twilio/status?mid={message.pk}"
    response = signed_status(client, message, path, MessageSid=message.provider_sid, MessageStatus="delivered")
    assert response.status_code == 204
    message.refresh_from_db()
    assert message.status == "delivered"
    # The query string is part of what Twilio signs: another id is another URL.
    params = {"MessageSid": message.provider_sid, "MessageStatus": "read"}
    from conftest import AUTH_TOKEN
    from conversations.testing.signing import twilio_signature

    sig = twilio_signature(auth_token=AUTH_TOKEN, url="https://repairs.example.com" + path, params=params)
    forged = client.post(f"/webhooks/twilio/status?mid={message.pk + 1}", params, HTTP_X_TWILIO_SIGNATURE=sig)
    assert forged.status_code == 403


def test_a_callback_for_an_earlier_sid_of_the_message_changes_nothing(conversation, twilio_stub):
    message = message_send(message_id=queue(conversation).pk)
    assert not message_status_update(message_id=message.pk, provider_sid="SMsomethingelse", status="failed")
    message.refresh_from_db()
    assert message.status == Message.Status.QUEUED


@pytest.mark.parametrize("twilio_status", ["queued", "accepted", "sending"])
def test_a_send_whose_answer_was_lost_is_not_sent_again_once_twilio_says_it_has_it(
    conversation, twilio_stub, settings, twilio_status
):
    """The send timed out (the message stays in our "sending" claim), and
    Twilio's only word is that it holds the message: the sweeper used to take
    the claim for a dead worker's and send it again, a second copy."""
    from datetime import timedelta

    from django.utils import timezone

    from conversations.sweeper import channel_sweep

    settings.OUTBOUND_SWEEP_GRACE_SECONDS = 60
    message = queue(conversation)
    long_ago = timezone.now() - timedelta(seconds=300)
    Message.objects.filter(pk=message.pk).update(status="sending", status_updated_at=long_ago, created_at=long_ago)
    assert message_status_update(message_id=message.pk, provider_sid="SM" + "7" * 32, status=twilio_status)
    message.refresh_from_db()
    assert message.status == Message.Status.QUEUED and message.provider_sid == "SM" + "7" * 32
    Message.objects.filter(pk=message.pk).update(status_updated_at=long_ago)
    assert channel_sweep()["stale_sending"] == 0
    message.refresh_from_db()
    assert message.status == Message.Status.QUEUED
    assert message_status_update(message_id=message.pk, provider_sid="SM" + "7" * 32, status="delivered")


@pytest.mark.django_db(transaction=True)
def test_a_callback_that_beats_the_send_answer_is_kept(conversation, twilio_stub, live_server):
    """Twilio may call the status URL before its answer to the send reaches us:
    the callback finds the message by its id (no SID stored yet) and the later
    'queued' from the send answer does not overwrite 'delivered'."""
    import requests

    from conftest import AUTH_TOKEN
    from conversations.testing.signing import twilio_signature

    seen = []

    def deliver_callback(form, sid):
        params = {"MessageSid": sid, "MessageStatus": "delivered", "AccountSid": "AC" + "1" * 32}
        url = form["StatusCallback"]
        sig = twilio_signature(auth_token=AUTH_TOKEN, url=url, params=params)
        local = live_server.url + url.removeprefix("https://repairs.example.com")
        seen.append(requests.post(local, data=params, headers={"X-Twilio-Signature": sig}, timeout=10).status_code)
        try:
            seen.append(Message.objects.filter(provider_sid=sid).values_list("status", flat=True).first())
        finally:
            connection.close()  # this runs in the stub server's thread

    twilio_stub.before_reply = deliver_callback
    message = message_send(message_id=queue(conversation).pk)
    assert seen == [204, "delivered"]  # recorded while our send call was still waiting
    assert message.status == Message.Status.DELIVERED
    assert message.provider_sid.startswith("SM")
    assert message.sent_at is not None and message.from_address == "whatsapp:+14155550001"


def test_63016_reported_by_a_status_callback_sends_the_template_instead(
    conversation, twilio_stub, client, settings, queued, django_capture_on_commit_callbacks
):
    """Twilio usually accepts the free text and reports 63016 later, in the
    status callback: the message goes out again as its template, once."""
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "6" * 32}
    message = message_send(message_id=queue(conversation, body="The plumber comes at 9").pk)
    first_sid = message.provider_sid
    path = f"/webhooks/twilio/status?mid={message.pk}"
    refused = {"MessageSid": first_sid, "MessageStatus": "undelivered", "ErrorCode": "63016"}
    with django_capture_on_commit_callbacks(execute=True):
        assert signed_status(client, message, path, **refused).status_code == 204
    message.refresh_from_db()
    assert message.status == Message.Status.PENDING and "window_closed" in message.flags
    assert message.raw_payload["attempts"][0]["provider_sid"] == first_sid
    assert [args for name, args, _ in queued if name == "outbound.send"][-1] == [[message.pk]]

    message = message_send(message_id=message.pk)
    assert twilio_stub.sent[1]["ContentSid"] == "HX" + "6" * 32 and "Body" not in twilio_stub.sent[1]
    assert message.status == Message.Status.QUEUED and message.provider_sid != first_sid

    # A late or repeated callback for the first attempt changes nothing.
    with django_capture_on_commit_callbacks(execute=True):
        assert signed_status(client, message, path, **{**refused, "MessageStatus": "failed"}).status_code == 204
    message.refresh_from_db()
    assert message.status == Message.Status.QUEUED

    # The template refused too: that failure stands, nothing is queued again.
    sends = len([name for name, *_ in queued if name == "outbound.send"])
    with django_capture_on_commit_callbacks(execute=True):
        signed_status(client, message, path, **{**refused, "MessageSid": message.provider_sid})
    message.refresh_from_db()
    assert message.status == Message.Status.UNDELIVERED and message.error_code == "63016"
    assert len([name for name, *_ in queued if name == "outbound.send"]) == sends


def test_63016_for_a_message_erased_since_it_went_sends_nothing_again(
    conversation, twilio_stub, client, settings, queued, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "6" * 32}
    message = message_send(message_id=queue(conversation, body="The plumber comes at 9").pk)
    Message.objects.filter(pk=message.pk).update(body="[erased]", raw_payload={})  # the tenant was erased
    refused = {"MessageSid": message.provider_sid, "MessageStatus": "undelivered", "ErrorCode": "63016"}
    with django_capture_on_commit_callbacks(execute=True):
        signed_status(client, message, f"/webhooks/twilio/status?mid={message.pk}", **refused)
    message.refresh_from_db()
    assert message.status == Message.Status.UNDELIVERED and message.raw_payload == {}
    assert not [args for name, args, _ in queued if name == "outbound.send"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("MessageSid", "SM\x00" + "1" * 32),
        ("ErrorMessage", "Unreachable\x00 destination"),
        ("ErrorCode", "630\x0024"),
        ("MessageStatus", "undeliv\x00ered"),
    ],
)
def test_a_status_callback_with_a_nul_byte_is_cleaned_not_a_500(conversation, twilio_stub, client, field, value):
    message = message_send(message_id=queue(conversation).pk)
    path = f"/webhooks/twilio/status?mid={message.pk}"
    params = {"MessageSid": message.provider_sid, "MessageStatus": "undelivered", "ErrorCode": "63024"}
    params[field] = value
    response = signed_status(client, message, path, **params)
    assert response.status_code in (204, 400)
    message.refresh_from_db()
    assert "\x00" not in message.error_message and "\x00" not in (message.provider_sid or "")
    if field != "MessageSid":
        assert response.status_code == 204
        assert message.status == "undelivered"
        assert message.error_message == params.get("ErrorMessage", "").replace("\x00", "")


@pytest.mark.parametrize("mid", [True, False])
def test_a_300_character_sid_is_answered_400_not_a_500(conversation, twilio_stub, client, mid):
    message = message_send(message_id=queue(conversation).pk)
    path = f"/webhooks/twilio/status?mid={message.pk}" if mid else "/webhooks/twilio/status"
    response = signed_status(client, message, path, MessageSid="SM" + "7" * 298, MessageStatus="delivered")
    assert response.status_code == 400 and b"longer than 64" in response.content
    message.refresh_from_db()
    assert message.status == "queued" and message.provider_sid != "SM" + "7" * 298


def test_the_status_service_itself_cleans_its_input(conversation, twilio_stub):
    message = message_send(message_id=queue(conversation).pk)
    assert not message_status_update(provider_sid="SM" + "7" * 298, message_id=message.pk, status="delivered")
    assert message_status_update(
        provider_sid=message.provider_sid, status="failed", error_code="3\x00" * 20, error_message="bad\x00" * 400
    )
    message.refresh_from_db()
    assert message.status == "failed" and message.error_code == "3" * 16
    assert message.error_message == ("bad" * 400)[:1000]


def test_an_erasure_during_the_send_is_not_written_over(conversation, twilio_stub, settings, monkeypatch):
    """The tenant is erased while Twilio has the message: what the send
    records afterwards (the refused attempt, the template's variables) must
    not bring the words back."""
    import conversations.delivery as delivery

    settings.WHATSAPP_TEMPLATES = {"issue_update": "HX" + "2" * 32}
    twilio_stub.queue(TwilioReply(status=400, code=63016, message="Outside the allowed window"))
    message = queue(conversation, body="Plumber on Tuesday", purpose="issue_update")
    real = delivery.sender

    class ErasedMeanwhile:
        def send(self, outgoing):
            Message.objects.filter(pk=message.pk).update(
                body="[erased]", raw_payload={}, template_variables={}, status="failed"
            )
            return real().send(outgoing)

    monkeypatch.setattr(delivery, "sender", ErasedMeanwhile)
    message_send(message_id=message.pk)
    message.refresh_from_db()
    assert (message.body, message.raw_payload, message.template_variables) == ("[erased]", {}, {})
