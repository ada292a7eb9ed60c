"""A tenant's phone for the terminal: sends signed webhook requests to a
running server exactly as Twilio would, and reads the replies the product
stores for that phone. Used by ``manage.py chat`` and ``make demo``."""

from __future__ import annotations

import mimetypes
import shutil
import tempfile
import threading
import time
import uuid
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.etree import ElementTree

import requests
from django.conf import settings

from conversations.models import Message
from conversations.testing.signing import WEBHOOK_PATH, inbound_params, twilio_signature


class MediaServer:
    """Serves files on 127.0.0.1 the way Twilio serves media URLs, so the
    product's media download task fetches them for real."""

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="repairs-chat-media-"))
        handler = partial(_QuietHandler, directory=str(self.directory))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def publish(self, path: Path) -> tuple[str, str]:
        name = f"{uuid.uuid4().hex}{path.suffix}"
        shutil.copyfile(path, self.directory / name)
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/{name}", content_type

    def close(self) -> None:
        self.httpd.shutdown()
        shutil.rmtree(self.directory, ignore_errors=True)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


class LineError(ValueError):
    """A chat command that cannot be sent as written."""


def pin_fields(argument: str) -> dict[str, str]:
    """``/pin 53.7960,-1.5470 Flat 1``: the fields WhatsApp posts for a location."""
    coordinates, _, label = argument.strip().partition(" ")
    latitude, _, longitude = coordinates.partition(",")
    try:
        if not (-90 <= float(latitude) <= 90 and -180 <= float(longitude) <= 180):
            raise ValueError
    except ValueError:
        raise LineError("/pin LATITUDE,LONGITUDE [label], e.g. /pin 53.7960,-1.5470 home") from None
    fields = {"MessageType": "location", "Latitude": latitude.strip(), "Longitude": longitude.strip()}
    return {**fields, "Label": label.strip()} if label.strip() else fields


def tap_fields(argument: str, choices: list[dict[str, str]]) -> tuple[str, dict[str, str]]:
    """``/tap 1``: the text and fields WhatsApp posts when the first button of
    the latest question is tapped."""
    if not choices:
        raise LineError("/tap: the latest message has no buttons to tap")
    try:
        choice = choices[int(argument) - 1]
    except (ValueError, IndexError):
        raise LineError(f"/tap 1 to {len(choices)}") from None
    return choice["title"], {
        "MessageType": "button",
        "ButtonPayload": choice["payload"],
        "ButtonText": choice["title"],
    }


class TenantPhone:
    def __init__(self, *, phone: str, to: str, server_url: str) -> None:
        self.phone = phone
        self.to = to
        self.server_url = server_url.rstrip("/")
        self.media = MediaServer()
        self.last_seen = (
            Message.objects.filter(direction=Message.Direction.OUTBOUND, to_address=f"whatsapp:{phone}")
            .order_by("-id")
            .values_list("id", flat=True)
            .first()
            or 0
        )

    def send(self, text: str, *, media: list[Path] | None = None, extra: dict[str, str] | None = None) -> list[str]:
        """Post one message (``extra``: more Twilio fields, a pin's or a
        tapped button's); returns the immediate replies in the TwiML."""
        params = inbound_params(
            phone=self.phone,
            to=self.to,
            body=text,
            media=[self.media.publish(p) for p in media or []],
            extra=extra,
        )
        signature = twilio_signature(
            auth_token=settings.TWILIO_AUTH_TOKEN, url=f"{settings.PUBLIC_BASE_URL}{WEBHOOK_PATH}", params=params
        )
        response = requests.post(
            f"{self.server_url}{WEBHOOK_PATH}", data=params, headers={"X-Twilio-Signature": signature}, timeout=10
        )
        response.raise_for_status()
        twiml = ElementTree.fromstring(response.content)  # noqa: S314 - our own server's TwiML
        return [node.text or "" for node in twiml.iter("Message")]

    def latest_choices(self) -> list[dict[str, str]]:
        """The tap-to-answer choices of the newest question sent to this phone."""
        latest = (
            Message.objects.filter(direction=Message.Direction.OUTBOUND, to_address=f"whatsapp:{self.phone}")
            .order_by("-id")
            .values_list("raw_payload", flat=True)
            .first()
        )
        return list((latest or {}).get("choices") or [])

    def new_replies(self) -> list[Message]:
        """Outbound messages to this phone stored since the last call."""
        replies = list(
            Message.objects.filter(
                direction=Message.Direction.OUTBOUND, to_address=f"whatsapp:{self.phone}", id__gt=self.last_seen
            ).order_by("id")
        )
        if replies:
            self.last_seen = replies[-1].id
        return replies

    def wait_replies(self, *, timeout: float = 60.0, settle: float = 1.5) -> list[Message]:
        """Replies to the last message: waits for the first, then until none
        has arrived for ``settle`` seconds."""
        deadline = time.monotonic() + timeout
        replies: list[Message] = []
        quiet_since = 0.0  # when the last reply arrived; read only once there is one
        while time.monotonic() < deadline:
            batch = self.new_replies()
            if batch:
                replies += batch
                quiet_since = time.monotonic()
            elif replies and time.monotonic() - quiet_since >= settle:
                break
            time.sleep(0.2)
        return replies

    def close(self) -> None:
        self.media.close()
