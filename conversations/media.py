"""Downloading the photos tenants send, in a task, never in the webhook.

Only Twilio's media hosts are fetched (``TWILIO_MEDIA_HOSTS``, checked again at
every redirect). The account's credentials go only to Twilio's own media path
on api.twilio.com, never to the CDN it redirects to. Downloads are streamed
with a size cap and a content-type allowlist; the file is stored with its
SHA-256.
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import time
from urllib.parse import urljoin

import requests
from django.conf import settings
from django.core.files.base import ContentFile
from django.db.models import Sum
from django.utils import timezone

from conversations.models import Media
from conversations.twilio_client import TWILIO_API_ORIGIN, media_host_allowed, twilio_media_url

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 3


class MediaRetry(Exception):
    """Transient failure (timeout, 5xx): try again later."""


class MediaRejected(Exception):
    """Permanent: the file is not something we keep."""


def media_download(*, media_id: int) -> Media | None:
    media = Media.objects.select_related("message").filter(pk=media_id).first()
    if media is None or media.download_state != Media.DownloadState.PENDING:
        return media
    try:
        content, content_type = _fetch(media.provider_url)
        _check(media, content, content_type)
    except MediaRejected as exc:
        media.download_state = Media.DownloadState.REJECTED
        media.error = str(exc)
        media.save(update_fields=["download_state", "error"])
        logger.warning("media %s rejected: %s", media.pk, exc)
        return media
    extension = mimetypes.guess_extension(content_type) or ""
    media.sha256 = hashlib.sha256(content).hexdigest()
    media.file.save(f"{media.sha256[:32]}{extension}", ContentFile(content), save=False)
    media.content_type = content_type
    media.size = len(content)
    media.download_state = Media.DownloadState.DOWNLOADED
    media.downloaded_at = timezone.now()
    media.error = ""
    media.save(update_fields=["file", "content_type", "size", "sha256", "download_state", "downloaded_at", "error"])
    return media


def media_mark_failed(*, media_id: int, reason: str) -> None:
    Media.objects.filter(pk=media_id, download_state=Media.DownloadState.PENDING).update(
        download_state=Media.DownloadState.FAILED, error=reason[:1000]
    )


def _fetch(url: str) -> tuple[bytes, str]:
    """GET the media: our credentials only on Twilio's own media path, the
    redirect to the CDN followed without them, every hop's host checked, and
    a 404 (Twilio sometimes answers before the file is ready) retried a few
    times with a short backoff."""
    not_found = 0
    redirects = 0
    while True:
        if not media_host_allowed(url):
            raise MediaRejected(f"media host not allowed: {url[:120]}")
        twilio = twilio_media_url(url)
        request_url = url
        if twilio and settings.TWILIO_API_BASE_URL:
            request_url = settings.TWILIO_API_BASE_URL.rstrip("/") + url[len(TWILIO_API_ORIGIN) :]
        try:
            response = requests.get(
                request_url,
                auth=(settings.TWILIO_ACCOUNT_SID, settings.TWILIO_AUTH_TOKEN) if twilio else None,
                stream=True,
                allow_redirects=False,
                timeout=settings.TWILIO_TIMEOUT_SECONDS,
            )
        except requests.RequestException as exc:
            raise MediaRetry(str(exc)) from exc
        if response.is_redirect:
            response.close()
            redirects += 1
            if redirects > MAX_REDIRECTS:
                raise MediaRejected("too many redirects")
            url = urljoin(url, response.headers["Location"])
            continue
        if response.status_code == 404 and not_found < settings.MEDIA_NOT_FOUND_RETRIES:
            response.close()
            time.sleep(settings.MEDIA_NOT_FOUND_BACKOFF_SECONDS * 2**not_found)
            not_found += 1
            continue
        if response.status_code == 429 or response.status_code >= 500:
            raise MediaRetry(f"HTTP {response.status_code}")
        if response.status_code != 200:
            tries = f" after {not_found + 1} tries" if response.status_code == 404 else ""
            raise MediaRejected(f"HTTP {response.status_code} fetching media{tries}")
        content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type not in settings.MEDIA_ALLOWED_TYPES:
            raise MediaRejected(f"content type {content_type or 'unknown'} is not accepted")
        chunks, size = [], 0
        for chunk in response.iter_content(64 * 1024):
            size += len(chunk)
            if size > settings.MEDIA_MAX_IMAGE_BYTES:
                response.close()
                raise MediaRejected(f"larger than MEDIA_MAX_IMAGE_BYTES ({settings.MEDIA_MAX_IMAGE_BYTES} bytes)")
            chunks.append(chunk)
        return b"".join(chunks), content_type


def _check(media: Media, content: bytes, content_type: str) -> None:
    stored = (
        Media.objects.filter(message=media.message, download_state=Media.DownloadState.DOWNLOADED).aggregate(
            total=Sum("size")
        )["total"]
        or 0
    )
    if stored + len(content) > settings.MEDIA_MAX_TOTAL_BYTES:
        raise MediaRejected(
            f"the message's media exceed MEDIA_MAX_TOTAL_BYTES ({settings.MEDIA_MAX_TOTAL_BYTES} bytes)"
        )
