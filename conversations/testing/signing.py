"""Signed Twilio webhook requests, as Twilio sends them: used by tests, the
golden-scenario runner, the demo and the terminal chat."""

from __future__ import annotations

import uuid

from twilio.request_validator import RequestValidator

WEBHOOK_PATH = "/webhooks/twilio/whatsapp"
STATUS_PATH = "/webhooks/twilio/status"


def twilio_signature(*, auth_token: str, url: str, params: dict[str, str]) -> str:
    return RequestValidator(auth_token).compute_signature(url, params)


def inbound_params(
    *,
    phone: str,
    to: str,
    body: str = "",
    media: list[tuple[str, str]] | None = None,
    sid: str | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """The form Twilio posts for a WhatsApp message. ``media`` is a list of
    (url, content type); ``extra`` adds or replaces fields (MessageType,
    Latitude, ButtonPayload, ...)."""
    params = {
        "MessageSid": sid or f"SM{uuid.uuid4().hex}",
        "AccountSid": "AC" + "0" * 32,
        "From": phone if phone.startswith("whatsapp:") else f"whatsapp:{phone}",
        "To": to if to.startswith("whatsapp:") else f"whatsapp:{to}",
        "Body": body,
        "NumMedia": str(len(media or [])),
        "ProfileName": "Tenant",
    }
    for index, (url, content_type) in enumerate(media or []):
        params[f"MediaUrl{index}"] = url
        params[f"MediaContentType{index}"] = content_type
    params.update(extra or {})
    return params
