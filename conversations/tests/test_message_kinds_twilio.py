"""The kinds Twilio's WhatsApp webhook posts that need more than MessageType:
contacts as vCards, stickers told from photos, and the button fields."""

from __future__ import annotations

import pytest

from conversations.message_kinds import CONTACTS, DOCUMENT, IMAGE, STICKER, UNSUPPORTED, media_kind, message_parts

MEDIA = "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"


@pytest.mark.parametrize(
    ("params", "kind"),
    [
        # A shared contact reaches the webhook as a vCard attachment.
        ({"MediaUrl0": MEDIA, "MediaContentType0": "text/vcard"}, CONTACTS),
        ({"MediaUrl0": MEDIA, "MediaContentType0": "text/x-vcard; charset=utf-8"}, CONTACTS),
        # Without MessageType a lone WebP is a sticker: WhatsApp sends photos as JPEG.
        ({"MediaUrl0": MEDIA, "MediaContentType0": "image/webp"}, STICKER),
        ({"MediaUrl0": MEDIA, "MediaContentType0": "image/jpeg"}, IMAGE),
        # MessageType wins over the guess: an image/webp posted as an image is an image.
        ({"MessageType": "image", "MediaUrl0": MEDIA, "MediaContentType0": "image/webp"}, IMAGE),
        ({"MessageType": "sticker", "MediaUrl0": MEDIA, "MediaContentType0": "image/webp"}, STICKER),
        ({"MediaUrl0": MEDIA, "MediaContentType0": "application/pdf"}, DOCUMENT),
        # Types WhatsApp adds later (polls, edits) are unsupported, never a crash.
        ({"MessageType": "poll_creation", "Body": ""}, UNSUPPORTED),
        ({"MessageType": "EDIT"}, UNSUPPORTED),
    ],
)
def test_kinds_from_the_fields_twilio_posts(params, kind):
    assert message_parts(params).kind == kind


def test_a_tapped_button_keeps_its_payload_and_text_cut_to_the_column():
    parts = message_parts({"MessageType": "button", "ButtonPayload": "x" * 300, "ButtonText": "Yes"})
    assert parts.kind == "button" and len(parts.button_payload) == 256 and parts.button_text == "Yes"


def test_media_kind_reads_parameters_and_case():
    assert media_kind("Text/VCard") == CONTACTS and media_kind("image/JPEG") == IMAGE
