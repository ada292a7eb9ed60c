"""The one door to Twilio: the REST client used by the sender and the media
downloader, and the webhook signature check.

``TWILIO_API_BASE_URL`` redirects every REST call (tests point the real SDK at
a local stub server); in production it stays empty and the SDK talks to
Twilio.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from twilio.http.http_client import TwilioHttpClient
from twilio.http.response import Response
from twilio.request_validator import RequestValidator
from twilio.rest import Client
from urllib3.exceptions import LocationParseError
from urllib3.util import Url, parse_url

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


class MediaUrlRefused(ValueError):
    """The media URL is not one we fetch; the message says why."""


@dataclass(frozen=True)
class MediaTarget:
    """A media URL as the library that connects reads it (urllib3's
    ``parse_url``, which ``requests`` uses), checked and rebuilt from its
    parts: ``url`` is what is fetched, never the string we were given."""

    scheme: str
    host: str
    port: int | None
    path: str
    query: str | None
    # Twilio's own media path on api.twilio.com over HTTPS: the only URL that
    # may be sent our account credentials.
    twilio: bool

    @property
    def url(self) -> str:
        return Url(scheme=self.scheme, host=self.host, port=self.port, path=self.path, query=self.query).url


TWILIO_MEDIA_HOST = "api.twilio.com"
TWILIO_MEDIA_PATH = re.compile(r"/2010-04-01/Accounts/AC\w+/Messages/(?:MM|SM)\w+/Media/ME\w+", re.ASCII)
# Printable ASCII without spaces or backslashes: anything else is read
# differently by different parsers (a backslash ends the host for urllib3 and
# not for urlsplit; browsers turn it into a slash).
_URL_CHARS = re.compile(r"[!-\[\]-~]+")
_HOSTNAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")
_DEFAULT_PORTS = {"https": 443, "http": 80}
# Development only (MEDIA_FETCH_LOCAL): this machine, where `manage.py chat --media` serves its photo.
_LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def _ip_literal(host: str) -> bool:
    """True for an address in any notation a resolver or a browser accepts:
    IPv6 (bracketed or not), dotted IPv4, and the inet_aton forms (decimal
    ``2130706433``, hex ``0x7f000001``, octal ``0177.0.0.1``, short ``127.1``).
    A name whose last label is numeric counts too (WHATWG parses it as IPv4)."""
    if ":" in host or host.startswith("["):
        return True
    try:
        socket.inet_aton(host)
    except OSError:
        pass
    else:
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return _NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]) is not None
    return True


def media_url_check(url: str) -> MediaTarget:
    """Parse a media URL once, with the parser of the library that fetches it,
    and refuse anything two parsers could read differently: characters outside
    printable ASCII, backslashes, userinfo, fragments, percent-encoded or
    otherwise unusual hosts, non-default ports, IP literals, hosts off
    ``TWILIO_MEDIA_HOSTS``. Only ``MEDIA_FETCH_LOCAL`` (development, never in
    production) lets this machine through: plain 127.0.0.1 or localhost, over
    HTTP, on any port. Raises ``MediaUrlRefused``."""
    if not _URL_CHARS.fullmatch(url):
        raise MediaUrlRefused("characters outside printable ASCII, a space or a backslash")
    try:
        parts = parse_url(url)
    except LocationParseError as exc:
        raise MediaUrlRefused(f"unparseable: {exc}") from exc
    scheme, host = parts.scheme or "", parts.host or ""
    if scheme not in _DEFAULT_PORTS or not host:
        raise MediaUrlRefused("not an http(s) URL with a host")
    if parts.auth is not None:
        raise MediaUrlRefused("userinfo in the URL")
    if parts.fragment is not None:
        raise MediaUrlRefused("a fragment in the URL")
    # The authority must be written exactly as parsed: no percent-encoding,
    # no empty or zero-padded port, nothing the parser had to normalise.
    prefix = f"{scheme}://{host}" + ("" if parts.port is None else f":{parts.port}")
    if url[: len(prefix)].lower() != prefix or url[len(prefix) : len(prefix) + 1] not in ("", "/", "?"):
        raise MediaUrlRefused("the host is not written plainly")
    local = settings.MEDIA_FETCH_LOCAL and host in _LOCAL_HOSTS and host in settings.TWILIO_MEDIA_HOSTS
    if not local:
        if _ip_literal(host):
            raise MediaUrlRefused("an IP address, not a host name")
        if _HOSTNAME.fullmatch(host) is None or host == "localhost" or host.endswith(".localhost"):
            raise MediaUrlRefused("not a plain host name")
        if scheme != "https":
            raise MediaUrlRefused("not HTTPS")
        if parts.port not in (None, _DEFAULT_PORTS[scheme]):
            raise MediaUrlRefused("a non-default port")
        if not any(host == allowed or host.endswith("." + allowed) for allowed in settings.TWILIO_MEDIA_HOSTS):
            raise MediaUrlRefused("host not on TWILIO_MEDIA_HOSTS")
    path = parts.path or "/"
    twilio = (
        scheme == "https"
        and host == TWILIO_MEDIA_HOST
        and parts.port in (None, 443)
        and parts.query is None
        and TWILIO_MEDIA_PATH.fullmatch(path) is not None
    )
    port = None if parts.port == _DEFAULT_PORTS[scheme] else parts.port
    return MediaTarget(scheme=scheme, host=host, port=port, path=path, query=parts.query, twilio=twilio)


def media_host_allowed(url: str) -> bool:
    """Only Twilio's media hosts (and their CDN) may be fetched: a forged
    MediaUrl must not make us call an internal address (``media_url_check``)."""
    try:
        media_url_check(url)
    except MediaUrlRefused:
        return False
    return True


def twilio_media_url(url: str) -> bool:
    """True for Twilio's own media path on api.twilio.com over HTTPS: the only
    URL that may be sent our account credentials."""
    try:
        return media_url_check(url).twilio
    except MediaUrlRefused:
        return False


def phone_mask(value: str) -> str:
    """``whatsapp:+447700900123`` -> ``whatsapp:+44*******123`` for logs."""
    prefix, _, number = value.rpartition(":")
    masked = number[:3] + "*" * max(0, len(number) - 6) + number[-3:] if len(number) > 6 else "***"
    return f"{prefix}:{masked}" if prefix else masked
