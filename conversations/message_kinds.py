"""What kind of WhatsApp message a Twilio webhook carries, and its structured parts.

Twilio posts ``MessageType`` with WhatsApp messages (text, image, audio, video,
document, location, sticker, button, interactive, reaction, contacts,
unsupported, ...); when it is missing (older payloads, the SMS-shaped tests)
the kind is read from the fields that are there: ``Latitude``/``Longitude``
for a pin, ``ButtonPayload``/``ButtonText`` for a tapped button,
``MediaContentType0`` for media (a shared contact comes as a vCard,
``text/vcard``; a lone ``image/webp`` is a sticker, since WhatsApp sends
photos as JPEG). An unknown ``MessageType`` is ``unsupported``, never a
crash. docs/whatsapp-pins-buttons.md lists every field relied on and what
Twilio's documentation says of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

TEXT = "text"
IMAGE = "image"
AUDIO = "audio"
VIDEO = "video"
DOCUMENT = "document"
STICKER = "sticker"
LOCATION = "location"
BUTTON = "button"
REACTION = "reaction"
CONTACTS = "contacts"
UNSUPPORTED = "unsupported"

# Twilio's MessageType values we know, mapped to ours ("interactive" is a
# tapped list or reply button, "file" an older name for a document).
KNOWN_TYPES = {
    "text": TEXT,
    "image": IMAGE,
    "audio": AUDIO,
    "voice": AUDIO,
    "video": VIDEO,
    "document": DOCUMENT,
    "file": DOCUMENT,
    "sticker": STICKER,
    "location": LOCATION,
    "button": BUTTON,
    "interactive": BUTTON,
    "reaction": REACTION,
    "contacts": CONTACTS,
    "unsupported": UNSUPPORTED,
    "unknown": UNSUPPORTED,
}

NAME_MAX_CHARS = 300
BUTTON_MAX_CHARS = 256


@dataclass(frozen=True)
class Parts:
    kind: str
    latitude: Decimal | None = None
    longitude: Decimal | None = None
    location_name: str = ""
    button_payload: str = ""
    button_text: str = ""
    flags: tuple[str, ...] = ()


# A shared contact card (WhatsApp "contacts" reach Twilio's webhook as a vCard attachment).
VCARD_TYPES = frozenset({"text/vcard", "text/x-vcard", "text/directory"})
# WhatsApp stickers are WebP; photos are sent as JPEG (or PNG), never WebP.
STICKER_TYPES = frozenset({"image/webp"})


def media_kind(content_type: str) -> str:
    """image, audio, video, contacts or document, from a MIME type."""
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in VCARD_TYPES:
        return CONTACTS
    major = mime.split("/", 1)[0]
    return {"image": IMAGE, "audio": AUDIO, "video": VIDEO}.get(major, DOCUMENT)


def message_parts(params: Mapping[str, str]) -> Parts:
    """The kind of message and its structured parts; a pin with coordinates
    we cannot read is kept as text and flagged ``bad_location``."""
    flags: list[str] = []
    latitude, longitude = _coordinate(params.get("Latitude"), 90), _coordinate(params.get("Longitude"), 180)
    has_pin = bool(params.get("Latitude") or params.get("Longitude"))
    if has_pin and (latitude is None or longitude is None):
        flags.append("bad_location")
        latitude = longitude = None
    posted = params.get("MessageType", "").strip().lower()
    kind = KNOWN_TYPES.get(posted, UNSUPPORTED if posted else "")
    if not kind:
        kind = _inferred(params, pin=latitude is not None)
    if kind == LOCATION and latitude is None:
        kind = TEXT if params.get("Body") else UNSUPPORTED
    name = params.get("Label") or params.get("Address") or ""
    if params.get("Label") and params.get("Address") and params["Label"] != params["Address"]:
        name = f"{params['Label']}, {params['Address']}"
    return Parts(
        kind=kind,
        latitude=latitude if kind == LOCATION else None,
        longitude=longitude if kind == LOCATION else None,
        location_name=name[:NAME_MAX_CHARS] if kind == LOCATION else "",
        button_payload=params.get("ButtonPayload", "")[:BUTTON_MAX_CHARS],
        button_text=params.get("ButtonText", "")[:BUTTON_MAX_CHARS],
        flags=tuple(flags),
    )


def _inferred(params: Mapping[str, str], *, pin: bool) -> str:
    if pin:
        return LOCATION
    if params.get("ButtonPayload") or params.get("ButtonText"):
        return BUTTON
    content_type = params.get("MediaContentType0", "")
    if content_type or params.get("MediaUrl0"):
        if content_type.split(";", 1)[0].strip().lower() in STICKER_TYPES and not params.get("MediaUrl1"):
            return STICKER
        return media_kind(content_type)
    return TEXT


def _coordinate(value: str | None, limit: int) -> Decimal | None:
    if not value:
        return None
    try:
        number = Decimal(value.strip())
    except InvalidOperation:
        return None
    if not number.is_finite() or abs(number) > limit:
        return None
    return number.quantize(Decimal("0.000001"))
