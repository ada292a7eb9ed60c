"""What kind of WhatsApp message arrived, read from the fields Twilio posts,
and stored on the message and conversation by the webhook."""

from __future__ import annotations

from decimal import Decimal

import pytest

from conversations.message_kinds import message_parts
from conversations.models import Conversation, Message
from orchestration.testing.fixtures import ORG_NUMBER, PHONE


@pytest.mark.parametrize(
    ("params", "kind"),
    [
        ({"Body": "hello"}, "text"),
        ({"MessageType": "text", "Body": "hello"}, "text"),
        ({"MessageType": "audio", "MediaContentType0": "audio/ogg"}, "audio"),
        ({"MediaUrl0": "https://api.twilio.com/x", "MediaContentType0": "audio/ogg"}, "audio"),
        ({"MediaUrl0": "https://api.twilio.com/x", "MediaContentType0": "image/jpeg"}, "image"),
        ({"MessageType": "sticker", "MediaContentType0": "image/webp"}, "sticker"),
        ({"MediaUrl0": "https://api.twilio.com/x", "MediaContentType0": "application/pdf"}, "document"),
        ({"Latitude": "51.5", "Longitude": "-0.12"}, "location"),
        ({"MessageType": "location", "Latitude": "51.5", "Longitude": "-0.12"}, "location"),
        ({"ButtonPayload": "yes", "ButtonText": "Yes"}, "button"),
        ({"MessageType": "interactive", "ButtonPayload": "yes"}, "button"),
        ({"MessageType": "reaction", "Body": "👍"}, "reaction"),
        ({"MessageType": "something_new"}, "unsupported"),
    ],
)
def test_the_kind_comes_from_message_type_or_the_fields_posted(params, kind):
    assert message_parts(params).kind == kind


@pytest.mark.parametrize(
    ("latitude", "longitude"), [("91", "0"), ("0", "-180.5"), ("nan", "1"), ("51.5", ""), ("north", "west")]
)
def test_a_pin_that_cannot_be_read_is_flagged_and_not_a_location(latitude, longitude):
    parts = message_parts({"Latitude": latitude, "Longitude": longitude, "Body": "here"})
    assert parts.kind == "text" and parts.latitude is None and parts.flags == ("bad_location",)


@pytest.mark.django_db
def test_the_webhook_stores_a_pin_a_button_and_the_senders_profile(home, post_inbound, queued):
    pin = {"Latitude": "51.501364", "Longitude": "-0.14189", "Label": "Flat 3", "Address": "12 Elm Road"}
    post_inbound(phone=PHONE, to=ORG_NUMBER, extra={**pin, "ProfileName": "Ana", "WaId": PHONE.lstrip("+")})
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="Yes", extra={"ButtonPayload": "confirm:yes", "ButtonText": "Yes"})

    location, button = Message.objects.order_by("id")
    assert location.kind == "location" and location.location_name == "Flat 3, 12 Elm Road"
    assert (location.latitude, location.longitude) == (Decimal("51.501364"), Decimal("-0.141890"))
    assert (button.kind, button.button_payload, button.button_text) == ("button", "confirm:yes", "Yes")
    conversation = Conversation.objects.get()
    # The second message's profile is the test default ("Tenant"): the newest name wins.
    assert (conversation.profile_name, conversation.wa_id) == ("Tenant", PHONE.lstrip("+"))
