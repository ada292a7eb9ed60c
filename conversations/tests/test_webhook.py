import threading

import pytest
from django.db import connection
from django.dispatch import receiver
from django.test.utils import CaptureQueriesContext

from conversations.models import Conversation, Media, Message
from conversations.signals import inbound_stored
from conversations.testing.signing import inbound_params
from properties.tests.factories import OrganizationFactory, WhatsAppNumberFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def number():
    return WhatsAppNumberFactory(number="+14155550001")


def test_signed_message_is_stored_and_processing_queued(
    post_inbound, number, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_inbound(phone="+447700900123", to="+14155550001", body="My boiler is not working")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/xml"
    assert response.content.decode().endswith("<Response></Response>")
    message = Message.objects.get()
    assert message.body == "My boiler is not working"
    assert message.organization == number.organization
    assert message.conversation.phone == "+447700900123"
    assert message.raw_payload["MessageSid"] == message.provider_sid
    assert message.conversation.last_inbound_at == message.created_at
    # The turn, and the emergency screening on the queue that has workers of its own.
    assert queued == [("emergency.screen", [message.pk], "emergency"), ("inbound.process", [message.pk], "inbound")]


@pytest.mark.parametrize("signature", ["", "bm9wZQ=="])
def test_missing_or_forged_signature_is_403_and_stores_nothing(post_inbound, number, queued, signature):
    response = post_inbound(phone="+447700900123", to="+14155550001", body="hi", signature=signature)
    assert response.status_code == 403
    assert not Message.objects.exists()
    assert queued == []


def test_signature_covers_every_posted_parameter(client, number, queued):
    from django.conf import settings

    from conftest import AUTH_TOKEN
    from conversations.testing.signing import WEBHOOK_PATH, twilio_signature

    params = inbound_params(phone="+447700900123", to="+14155550001", body="hi")
    sig = twilio_signature(auth_token=AUTH_TOKEN, url=settings.PUBLIC_BASE_URL + WEBHOOK_PATH, params=params)
    params["SomeNewTwilioField"] = "added after signing"
    assert client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=sig).status_code == 403


def test_routes_by_messaging_service_before_number(post_inbound, number, queued):
    other = OrganizationFactory(messaging_service_sid="MG" + "a" * 32)
    params = inbound_params(phone="+447700900123", to="+14155550001", body="hi")
    params["MessagingServiceSid"] = "MG" + "a" * 32
    post_inbound(params)
    assert Message.objects.get().organization == other


def test_unrouted_message_is_stored_flagged_and_answered(post_inbound, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_inbound(phone="+447700900123", to="+19999999999", body="hello?")
    assert response.status_code == 200
    message = Message.objects.get()
    assert message.organization is None and message.conversation is None
    assert "unrouted" in message.flags
    assert message.to_address == "whatsapp:+19999999999"
    assert queued == []


def test_repeated_delivery_stores_one_row_and_queues_once(
    post_inbound, number, queued, django_capture_on_commit_callbacks
):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="Leak under the sink")
    with django_capture_on_commit_callbacks(execute=True):
        first = post_inbound(params)
    with django_capture_on_commit_callbacks(execute=True):
        second = post_inbound(params)
    assert first.status_code == second.status_code == 200
    assert Message.objects.count() == 1
    assert [name for name, *_ in queued] == ["emergency.screen", "inbound.process"]


@pytest.mark.django_db(transaction=True)
def test_simultaneous_deliveries_store_one_row_and_queue_once(number, queued):
    from django.test import Client

    from conftest import AUTH_TOKEN
    from conversations.testing.signing import WEBHOOK_PATH, twilio_signature

    params = inbound_params(phone="+447700900123", to="+14155550001", body="The kitchen tap is dripping")
    sig = twilio_signature(auth_token=AUTH_TOKEN, url="https://repairs.example.com" + WEBHOOK_PATH, params=params)
    barrier = threading.Barrier(5)
    statuses = []

    def deliver():
        barrier.wait()
        try:
            statuses.append(Client().post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=sig).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 5
    assert Message.objects.count() == 1
    assert Conversation.objects.count() == 1
    assert sorted(name for name, *_ in queued) == ["emergency.screen", "inbound.process"]


def test_nul_bytes_are_stripped_and_flagged(post_inbound, number, queued):
    post_inbound(phone="+447700900123", to="+14155550001", body="tap\x00 drips")
    message = Message.objects.get()
    assert message.body == "tap drips"
    assert "nul_bytes" in message.flags


def test_long_body_is_kept_whole_in_the_payload(post_inbound, number, queued, settings):
    settings.INBOUND_MAX_BODY_CHARS = 1600
    text = "x" * 2000
    post_inbound(phone="+447700900123", to="+14155550001", body=text)
    message = Message.objects.get()
    assert len(message.body) == 1600 and "body_truncated" in message.flags
    assert message.raw_payload["Body"] == text


def test_body_at_twilios_limit_is_accepted_whole(post_inbound, number, queued):
    post_inbound(phone="+447700900123", to="+14155550001", body="y" * 1600)
    assert Message.objects.get().body == "y" * 1600


def test_media_only_message_records_media_and_queues_download(
    post_inbound, number, queued, django_capture_on_commit_callbacks
):
    url = "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"
    with django_capture_on_commit_callbacks(execute=True):
        post_inbound(phone="+447700900123", to="+14155550001", body="", media=[(url, "image/jpeg")])
    media = Media.objects.get()
    assert media.message.body == ""
    assert media.provider_url == url and media.content_type == "image/jpeg"
    assert media.download_state == Media.DownloadState.PENDING
    assert ("media.download", [media.pk], "media") in queued


def test_media_from_a_foreign_host_is_rejected_not_fetched(
    post_inbound, number, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post_inbound(phone="+447700900123", to="+14155550001", media=[("http://169.254.169.254/latest", "image/jpeg")])
    media = Media.objects.get()
    assert media.download_state == Media.DownloadState.REJECTED
    assert all(name != "media.download" for name, *_ in queued)


def test_malformed_payload_is_stored_and_answered_400(post_inbound, number, queued):
    response = post_inbound({"Body": "no sid, no sender", "To": "whatsapp:+14155550001"})
    assert response.status_code == 400
    message = Message.objects.get()
    assert "malformed" in message.flags and message.conversation is None
    assert queued == []


def test_receiver_reply_goes_into_the_twiml(post_inbound, number, queued):
    @receiver(inbound_stored)
    def safety(sender, message, **kwargs):
        return "Leave the property & call 0800 111 999"

    try:
        response = post_inbound(phone="+447700900123", to="+14155550001", body="I smell gas")
    finally:
        inbound_stored.disconnect(safety)
    assert "<Message>Leave the property &amp; call 0800 111 999</Message>" in response.content.decode()


def test_a_failing_receiver_loses_nothing(post_inbound, number, queued):
    @receiver(inbound_stored)
    def broken(sender, message, **kwargs):
        raise RuntimeError("boom")

    try:
        response = post_inbound(phone="+447700900123", to="+14155550001", body="hello")
    finally:
        inbound_stored.disconnect(broken)
    assert response.status_code == 200
    assert Message.objects.count() == 1


def test_broker_down_still_answers_200_and_keeps_the_message(
    post_inbound, number, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    from config.celery import app

    def down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(app, "send_task", down)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_inbound(phone="+447700900123", to="+14155550001", body="hello")
    assert response.status_code == 200
    assert Message.objects.filter(processed_at__isnull=True).count() == 1


def test_a_message_in_a_known_conversation_costs_a_fixed_handful_of_queries(post_inbound, number, queued):
    """Routing, conversation, insert, last-inbound time, emergency rules'
    version (inside the test's transaction: savepoints instead of BEGIN/COMMIT)."""
    post_inbound(phone="+447700900123", to="+14155550001", body="hello")  # conversation exists from here on
    with CaptureQueriesContext(connection) as queries:
        post_inbound(phone="+447700900123", to="+14155550001", body="The kitchen tap is dripping")
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    assert len([s for s in statements if s not in {"SAVEPOINT", "RELEASE"}]) <= 5, statements


def signed_raw_post(client, body: bytes, signed_params):
    """POST ``body`` as it is; the signature covers ``signed_params``."""
    from django.conf import settings

    from conftest import AUTH_TOKEN
    from conversations.testing.signing import WEBHOOK_PATH, twilio_signature

    url = settings.PUBLIC_BASE_URL + WEBHOOK_PATH
    sig = twilio_signature(auth_token=AUTH_TOKEN, url=url, params=signed_params)
    return client.generic(
        "POST",
        WEBHOOK_PATH,
        body,
        content_type="application/x-www-form-urlencoded",
        HTTP_X_TWILIO_SIGNATURE=sig,
    )


def test_a_body_of_100_000_characters_is_stored_cut_and_flagged_with_the_whole_text_kept(
    post_inbound, number, queued, settings
):
    text = "the boiler makes a noise " * 4000
    assert len(text) == 100_000
    response = post_inbound(phone="+447700900123", to="+14155550001", body=text)
    assert response.status_code == 200
    message = Message.objects.get()
    assert len(message.body) == settings.INBOUND_MAX_BODY_CHARS and "body_truncated" in message.flags
    assert message.raw_payload["Body"] == text
    assert message.conversation is not None  # still processed


def test_percent_encoded_bytes_that_are_not_utf8_are_stored_and_flagged(client, number, queued):
    """Form data carries bytes percent-encoded; %E9 alone is Latin-1 'é', not
    UTF-8. Django decodes it to U+FFFD; the message is kept and flagged."""
    from urllib.parse import urlencode

    params = inbound_params(phone="+447700900123", to="+14155550001", body="PLACEHOLDER")
    raw = urlencode(params).replace("PLACEHOLDER", "caf%E9+au+lait").encode()
    response = signed_raw_post(client, raw, {**params, "Body": "caf\ufffd au lait"})
    assert response.status_code == 200
    message = Message.objects.get()
    assert message.body == "caf\ufffd au lait" and "undecodable_text" in message.flags
    assert message.conversation is not None


def test_a_raw_body_that_is_not_utf8_is_stored_and_flagged(client, number, queued):
    from urllib.parse import urlencode

    params = inbound_params(phone="+447700900123", to="+14155550001", body="PLACEHOLDER")
    raw = urlencode(params).encode().replace(b"PLACEHOLDER", b"caf\xe9")
    # Django falls back to Latin-1 for a body that is not UTF-8.
    response = signed_raw_post(client, raw, {**params, "Body": "café"})
    assert response.status_code == 200
    message = Message.objects.get()
    assert message.body == "café" and "undecodable_text" in message.flags


def test_a_request_signed_over_other_bytes_is_refused_not_a_500(client, number, queued):
    from urllib.parse import urlencode

    params = inbound_params(phone="+447700900123", to="+14155550001", body="PLACEHOLDER")
    raw = urlencode(params).replace("PLACEHOLDER", "caf%E9").encode()
    response = signed_raw_post(client, raw, {**params, "Body": "café"})  # what the sender meant
    assert response.status_code == 403
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    ("num_media", "present"),
    [("0", [0]), ("3", [0]), ("1", [0, 1]), ("two", [0]), ("", [0])],
)
def test_media_fields_present_are_recorded_whatever_num_media_says(post_inbound, number, queued, num_media, present):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="")
    params["NumMedia"] = num_media
    for index in present:
        params[f"MediaUrl{index}"] = f"https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME{index}"
        params[f"MediaContentType{index}"] = "image/jpeg"
    assert post_inbound(params).status_code == 200
    message = Message.objects.get()
    assert sorted(message.media.values_list("index", flat=True)) == present
    assert "num_media_mismatch" in message.flags
    assert message.conversation is not None


def test_a_gap_in_the_media_numbering_loses_no_photo(post_inbound, number, queued):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="")
    params.update(NumMedia="2", MediaUrl0="https://api.twilio.com/a/ME0", MediaUrl3="https://api.twilio.com/a/ME3")
    post_inbound(params)
    message = Message.objects.get()
    assert list(message.media.order_by("index").values_list("index", flat=True)) == [0, 3]
    assert "num_media_mismatch" not in message.flags


@pytest.mark.parametrize(
    ("sender", "flag"),
    [
        ("+447700900123", "from_not_whatsapp"),  # an SMS sender
        ("messenger:1234567890", "from_not_whatsapp"),
        ("whatsapp:", "from_invalid"),
        ("whatsapp:+" + "4" * 40, "from_invalid"),  # fits from_address, not the phone column
        ("whatsapp:+" + "4" * 200, "from_invalid"),
    ],
)
def test_a_sender_that_is_not_a_whatsapp_number_is_stored_flagged_and_answered_400(
    post_inbound, number, queued, sender, flag, django_capture_on_commit_callbacks
):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="hello")
    params["From"] = sender
    with django_capture_on_commit_callbacks(execute=True):
        response = post_inbound(params)
    assert response.status_code == 400 and flag in response.content.decode()
    message = Message.objects.get()
    assert {flag, "malformed"} <= set(message.flags)
    assert message.conversation is None and not Conversation.objects.exists()
    assert message.raw_payload["From"] == sender and message.from_address == sender[:64]
    assert queued == []


def test_an_over_long_sid_is_stored_flagged_and_its_repeat_is_recognised(post_inbound, number, queued):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="hello", sid="SM" + "a" * 98)
    first, second = post_inbound(params), post_inbound(params)
    assert first.status_code == second.status_code == 400
    message = Message.objects.get()
    assert {"sid_too_long", "malformed"} <= set(message.flags)
    assert message.provider_sid == params["MessageSid"][:64]
    assert message.raw_payload["MessageSid"] == params["MessageSid"]


def test_an_over_long_to_is_stored_unrouted_and_flagged(post_inbound, number, queued):
    response = post_inbound(phone="+447700900123", to="+1" + "5" * 100, body="hello")
    assert response.status_code == 200
    message = Message.objects.get()
    assert {"to_too_long", "unrouted"} <= set(message.flags)
    assert message.raw_payload["To"] == "whatsapp:+1" + "5" * 100


def test_repeated_keys_are_all_signed_and_all_kept(client, number, queued):
    """Twilio's validator signs every value of a repeated key; so must our check."""
    from django.conf import settings
    from django.utils.datastructures import MultiValueDict

    from conftest import AUTH_TOKEN
    from conversations.testing.signing import WEBHOOK_PATH, twilio_signature

    params = inbound_params(phone="+447700900123", to="+14155550001", body="hi")
    repeated = MultiValueDict({key: [value] for key, value in params.items()})
    repeated.setlist("AddOns", ["first", "second"])
    url = settings.PUBLIC_BASE_URL + WEBHOOK_PATH
    sig = twilio_signature(auth_token=AUTH_TOKEN, url=url, params=repeated)
    response = client.post(WEBHOOK_PATH, {**params, "AddOns": ["first", "second"]}, HTTP_X_TWILIO_SIGNATURE=sig)
    assert response.status_code == 200
    message = Message.objects.get()
    assert message.raw_payload["AddOns"] == ["first", "second"] and "repeated_keys" in message.flags
    # Signed over the last value only (what a plain dict would keep): refused.
    params["MessageSid"] = "SM" + "f" * 32
    last_only = twilio_signature(auth_token=AUTH_TOKEN, url=url, params={**params, "AddOns": "second"})
    forged = client.post(WEBHOOK_PATH, {**params, "AddOns": ["first", "second"]}, HTTP_X_TWILIO_SIGNATURE=last_only)
    assert forged.status_code == 403


def test_a_repeated_delivery_repeats_the_immediate_reply(post_inbound, number, queued):
    calls = []

    @receiver(inbound_stored)
    def safety(sender, message, repeat=False, **kwargs):
        calls.append((message.pk, repeat))
        return "Leave the property and call 0800 111 999"

    params = inbound_params(phone="+447700900123", to="+14155550001", body="I smell gas")
    try:
        first, second = post_inbound(params), post_inbound(params)
    finally:
        inbound_stored.disconnect(safety)
    assert "<Message>Leave the property and call 0800 111 999</Message>" in first.content.decode()
    assert "<Message>Leave the property and call 0800 111 999</Message>" in second.content.decode()
    message = Message.objects.get()
    assert calls == [(message.pk, False), (message.pk, True)]


def test_twilios_retry_of_an_emergency_gets_the_safety_message_again_and_one_alert(post_inbound, number, queued):
    """Twilio delivers again when our first answer did not reach it, so the
    retry must carry the safety message too; the alert is recorded once."""
    from emergencies.models import EmergencyAlert, EmergencyRule

    EmergencyRule.objects.create(
        organization=number.organization, country="", language="en", phrase="smell gas", category="gas"
    )
    params = inbound_params(phone="+447700900123", to="+14155550001", body="I can smell gas in the hall")
    first, second = post_inbound(params), post_inbound(params)
    first_twiml, second_twiml = first.content.decode(), second.content.decode()
    assert "<Message>" in first_twiml
    assert second_twiml == first_twiml
    assert EmergencyAlert.objects.count() == 1 and Message.objects.filter(direction="inbound").count() == 1


@pytest.mark.parametrize(
    "keys",
    [
        ["MediaUrl0", "MediaUrl00"],
        ["MediaUrl00", "MediaUrl0"],  # the canonical spelling wins whatever the order
        ["MediaUrl0", "MediaUrl00", "MediaUrl000"],
    ],
)
def test_two_media_keys_for_one_index_are_stored_and_flagged_not_a_500(
    post_inbound, number, queued, keys, django_capture_on_commit_callbacks
):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="photo of the leak")
    params["NumMedia"] = "1"
    for position, key in enumerate(keys):
        params[key] = f"https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME{key}x{position}"
    with django_capture_on_commit_callbacks(execute=True):
        response = post_inbound(params)
    assert response.status_code == 200
    message = Message.objects.get()
    assert "duplicate_media_index" in message.flags and message.conversation is not None
    [media] = message.media.all()
    assert media.index == 0 and media.provider_url == params["MediaUrl0"]
    assert all(message.raw_payload[key] == params[key] for key in keys)  # every URL kept
    assert ("inbound.process", [message.pk], "inbound") in queued
    assert post_inbound(params).status_code == 200  # Twilio's retry is a repeat, not a 500
    assert Message.objects.count() == 1


def test_digits_of_other_scripts_are_not_read_as_a_media_index(post_inbound, number, queued):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="")
    params.update(MediaUrl0="https://api.twilio.com/a/ME0", **{"MediaUrl\u0660": "https://api.twilio.com/a/MEx"})
    assert post_inbound(params).status_code == 200
    message = Message.objects.get()
    assert list(message.media.values_list("index", flat=True)) == [0]
    assert message.raw_payload["MediaUrl\u0660"] == "https://api.twilio.com/a/MEx"


def test_keys_that_are_one_once_nul_bytes_are_removed_keep_both_values(post_inbound, number, queued):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="first")
    params["Body\x00"] = "second"
    assert post_inbound(params).status_code == 200
    message = Message.objects.get()
    assert {"key_collision", "nul_bytes"} <= set(message.flags)
    assert message.raw_payload["Body"] == ["first", "second"]


def test_conflicting_message_sids_are_stored_and_flagged(post_inbound, number, queued):
    params = inbound_params(phone="+447700900123", to="+14155550001", body="hi")
    params["SmsMessageSid"] = "SM" + "9" * 32
    assert post_inbound(params).status_code == 200
    message = Message.objects.get()
    assert "sid_conflict" in message.flags and message.provider_sid == params["MessageSid"]


def test_a_media_row_the_database_refuses_keeps_the_message(post_inbound, number, queued, monkeypatch):
    from django.db import IntegrityError

    def refuse(*args, **kwargs):
        raise IntegrityError("duplicate key value violates unique constraint")

    monkeypatch.setattr(Media.objects, "bulk_create", refuse)
    params = inbound_params(phone="+447700900123", to="+14155550001", body="look")
    params.update(NumMedia="1", MediaUrl0="https://api.twilio.com/a/ME0")
    assert post_inbound(params).status_code == 200
    message = Message.objects.get()
    assert "media_unrecorded" in message.flags and message.raw_payload["MediaUrl0"] == params["MediaUrl0"]


@pytest.mark.parametrize("path", ["/webhooks/twilio/whatsapp", "/webhooks/twilio/status"])
def test_with_the_database_unreachable_both_webhooks_answer_503_for_twilio_to_retry(
    client, number, monkeypatch, settings, path
):
    from django.db import OperationalError

    from conftest import AUTH_TOKEN
    from conversations import views
    from conversations.testing.signing import twilio_signature

    def down(**kwargs):
        raise OperationalError("connection to server failed: the database system is shutting down")

    monkeypatch.setattr(views, "message_record_inbound", down)
    monkeypatch.setattr(views, "message_status_update", down)
    params = {**inbound_params(phone="+447700900123", to="+14155550001", body="gas!"), "MessageStatus": "sent"}
    signature = twilio_signature(auth_token=AUTH_TOKEN, url=f"{settings.PUBLIC_BASE_URL}{path}", params=params)
    response = client.post(path, params, HTTP_X_TWILIO_SIGNATURE=signature)
    assert response.status_code == 503 and response["Retry-After"] == str(settings.WEBHOOK_RETRY_AFTER_SECONDS)
