"""Where outbound WhatsApp messages go: ``twilio`` (the real API) or
``console`` (development: printed, never sent). ``WHATSAPP_SENDER`` chooses."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from dataclasses import dataclass
from typing import Any

import requests
import urllib3
from django.conf import settings
from twilio.base.exceptions import TwilioException, TwilioRestException

from conversations.twilio_client import twilio_client

logger = logging.getLogger(__name__)


@dataclass
class OutgoingMessage:
    to: str
    from_: str
    messaging_service_sid: str
    body: str
    template_sid: str = ""
    template_variables: dict[str, Any] | None = None
    # Our Message id: the status callback URL carries it, so a callback that
    # arrives before Twilio's answer to the send still finds the message.
    message_id: int | None = None


@dataclass
class SendReceipt:
    provider_sid: str | None  # Twilio's SID, None only if its answer had none
    status: str


class SendError(Exception):
    """``outcome_unknown``: the request reached Twilio and no answer came back,
    so the message may have been accepted (sending it again could deliver it twice)."""

    def __init__(self, message: str, *, transient: bool, code: str = "", outcome_unknown: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
        self.code = code
        self.outcome_unknown = outcome_unknown


class ConsoleSender:
    def send(self, outgoing: OutgoingMessage) -> SendReceipt:
        label = f"template {outgoing.template_sid}" if outgoing.template_sid else "text"
        sys.stdout.write(f"\n[whatsapp -> {outgoing.to} ({label})]\n{outgoing.body}\n")
        sys.stdout.flush()
        return SendReceipt(provider_sid=f"CONSOLE{uuid.uuid4().hex}", status="sent")


def status_callback_url(message_id: int | None) -> str:
    url = f"{settings.PUBLIC_BASE_URL}/webhooks/twilio/status"
    return f"{url}?mid={message_id}" if message_id is not None else url


class TwilioSender:
    def send(self, outgoing: OutgoingMessage) -> SendReceipt:
        kwargs: dict[str, str] = {"to": outgoing.to, "status_callback": status_callback_url(outgoing.message_id)}
        if outgoing.messaging_service_sid:
            kwargs["messaging_service_sid"] = outgoing.messaging_service_sid
        else:
            kwargs["from_"] = outgoing.from_
        if outgoing.template_sid:
            kwargs["content_sid"] = outgoing.template_sid
            kwargs["content_variables"] = json.dumps(outgoing.template_variables or {})
        else:
            kwargs["body"] = outgoing.body
        try:
            message = twilio_client().messages.create(**kwargs)
        except TwilioRestException as exc:
            transient = exc.status == 429 or exc.status >= 500
            raise SendError(
                f"Twilio {exc.status}: {exc.msg}", transient=transient, code=str(exc.code or exc.status)
            ) from exc
        except TwilioException as exc:  # connection errors, timeouts
            raise SendError(f"Twilio unreachable: {exc}", transient=True) from exc
        except requests.exceptions.ReadTimeout as exc:  # sent, and no answer in time
            raise SendError(f"Twilio did not answer in time: {exc}", transient=True, outcome_unknown=True) from exc
        except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
            if _after_sending(exc):  # the request went; the connection broke before the whole answer came
                raise SendError(f"Twilio's answer was cut off: {exc}", transient=True, outcome_unknown=True) from exc
            raise SendError(f"Twilio unreachable: {exc}", transient=True) from exc
        except OSError as exc:
            raise SendError(f"Twilio unreachable: {exc}", transient=True) from exc
        return SendReceipt(provider_sid=message.sid, status=message.status or "queued")


def _after_sending(exc: requests.exceptions.RequestException) -> bool:
    """True when the request had reached Twilio: the connection was dropped
    while we waited for the answer (urllib3's ProtocolError, "Connection
    aborted") or while reading it; False when no connection was made."""
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return True
    reason = exc.args[0] if exc.args else None
    return isinstance(reason, urllib3.exceptions.ProtocolError)


def sender() -> ConsoleSender | TwilioSender:
    return TwilioSender() if settings.WHATSAPP_SENDER == "twilio" else ConsoleSender()
