"""The one door to Twilio: the REST client used by the sender and the media
downloader, and the webhook signature check.

``TWILIO_API_BASE_URL`` redirects every REST call (tests point the real SDK at
a local stub server); in production it stays empty and the SDK talks to
Twilio.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from twilio.http.http_client import TwilioHttpClient
from twilio.http.response import Response
from twilio.request_validator import RequestValidator
from twilio.rest import Client

TWILIO_API_ORIGIN = "https://api.twilio.com"


class _RedirectingHttpClient(TwilioHttpClient):
    """Sends the SDK's requests for api.twilio.com to ``base_url`` instead."""

    def __init__(self, base_url: str, *, timeout: float | None = None) -> None:
        super().__init__(timeout=timeout)
        self.base_url = base_url.rstrip("/")

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Response:
        if url.startswith(TWILIO_API_ORIGIN):
            url = self.base_url + url[len(TWILIO_API_ORIGIN) :]
        return super().request(method, url, *args, **kwargs)


@lru_cache(maxsize=2)
def _client(account_sid: str, auth_token: str, base_url: str, timeout: float) -> Client:
    http_client = _RedirectingHttpClient(base_url, timeout=timeout) if base_url else TwilioHttpClient(timeout=timeout)
    return Client(account_sid, auth_token, http_client=http_client)


def twilio_client() -> Client:
    return _client(
        settings.TWILIO_ACCOUNT_SID,
        settings.TWILIO_AUTH_TOKEN,
        settings.TWILIO_API_BASE_URL,
        settings.TWILIO_TIMEOUT_SECONDS,
    )


def twilio_signature_valid(*, path: str, params: Mapping[str, Any], signature: str) -> bool:
    """Check ``X-Twilio-Signature`` over the public URL Twilio called (from
    ``PUBLIC_BASE_URL``, never the Host header) and every posted parameter.
    The validator also accepts the URL with or without the default port.
    ``params`` may be Django's ``QueryDict``: the validator signs every value
    of a repeated key (``getlist``), as Twilio does."""
    if not signature or not settings.TWILIO_AUTH_TOKEN:
        return False
    url = f"{settings.PUBLIC_BASE_URL}{path}"
    return RequestValidator(settings.TWILIO_AUTH_TOKEN).validate(url, params, signature)


def media_host_allowed(url: str) -> bool:
    """Only Twilio's media hosts (and their CDN) may be fetched with our
    credentials: a forged MediaUrl must not make us call an internal address."""
    parts = urlsplit(url)
    if parts.scheme not in {"https", "http"} or not parts.hostname:
        return False
    if parts.scheme == "http" and parts.hostname not in {"127.0.0.1", "localhost"}:
        return False
    host = parts.hostname.lower()
    return any(host == allowed or host.endswith("." + allowed) for allowed in settings.TWILIO_MEDIA_HOSTS)


TWILIO_MEDIA_PATH = re.compile(r"/2010-04-01/Accounts/AC\w+/Messages/(?:MM|SM)\w+/Media/ME\w+")


def twilio_media_url(url: str) -> bool:
    """True for Twilio's own media path on api.twilio.com over HTTPS: the only
    URL that may be sent our account credentials."""
    parts = urlsplit(url)
    return (
        parts.scheme == "https"
        and (parts.hostname or "").lower() == "api.twilio.com"
        and parts.port in (None, 443)
        and TWILIO_MEDIA_PATH.fullmatch(parts.path) is not None
    )


def phone_mask(value: str) -> str:
    """``whatsapp:+447700900123`` -> ``whatsapp:+44*******123`` for logs."""
    prefix, _, number = value.rpartition(":")
    masked = number[:3] + "*" * max(0, len(number) - 6) + number[-3:] if len(number) > 6 else "***"
    return f"{prefix}:{masked}" if prefix else masked
