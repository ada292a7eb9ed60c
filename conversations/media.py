"""Downloading the photos and voice notes tenants send, in a task, never in the webhook.

Only Twilio's media hosts are fetched (``TWILIO_MEDIA_HOSTS``). Each URL, the
first and every redirect, is parsed once with the parser ``requests`` connects
with and fetched as rebuilt from its checked parts (``media_url_check``). The
account's credentials go only to Twilio's own media path on api.twilio.com, on
the first hop: never to the CDN it redirects to, never on a redirect. Media of
a message that is unrouted or malformed are not fetched at all. Downloads are
streamed with a size cap (``MEDIA_MAX_AUDIO_BYTES`` for audio,
``MEDIA_MAX_IMAGE_BYTES`` for the rest) and a content-type allowlist; the file
is stored with its SHA-256.

A voice note's length is read from the file (``conversations.audio``); one
longer than ``MEDIA_MAX_AUDIO_SECONDS`` is kept but not transcribed. Every
other downloaded voice note is queued for transcription
(``conversations.transcription``).
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import re
import time
from urllib.parse import urljoin

import requests
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from urllib3.util import parse_url

from config.tasks import MEDIA_TRANSCRIBE
from conversations.audio import audio_duration
from conversations.message_kinds import AUDIO, media_kind
from conversations.models import Media, Message, TranscriptionState
from conversations.sweeper import queue_leased
from conversations.transcription import transcription_kick_turn
from conversations.twilio_client import MediaUrlRefused, media_url_check

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 3


# Any query, however the URL around it is written ("... with url: /ME1.jpg?X-Amz-Security-Token=...",
# "https:\\host\\x?sig=..."): the error texts that quote URLs never need one.
_URL_QUERY = re.compile(r"\?[^\s'\")]+")


class MediaRetry(Exception):
    """Transient failure (timeout, 5xx): try again later."""


class MediaRejected(Exception):
    """Permanent: the file is not something we keep."""


def media_download(*, media_id: int) -> Media | None:
    media = Media.objects.select_related("message").filter(pk=media_id).first()
    if media is None or media.download_state != Media.DownloadState.PENDING:
        return media
    try:
        _check_message(media.message)
        content, content_type = _fetch(media.provider_url)
    except MediaRejected as exc:
        return _reject(media, exc)
    with transaction.atomic():
        # The message's media locked together: a run that overlapped this one
        # (a sweeper's re-queue), an erasure since the fetch, and the message's
        # other downloads, whose stored bytes count towards its total cap, are
        # settled one at a time.
        rows = list(Media.objects.select_for_update().filter(message_id=media.message_id).order_by("pk"))
        if not any(row.pk == media.pk and row.download_state == Media.DownloadState.PENDING for row in rows):
            logger.info("media %s: no longer pending when its download finished; nothing stored", media.pk)
            return Media.objects.filter(pk=media.pk).first()
        stored = sum(row.size or 0 for row in rows if row.download_state == Media.DownloadState.DOWNLOADED)
        if stored + len(content) > settings.MEDIA_MAX_TOTAL_BYTES:
            limit = settings.MEDIA_MAX_TOTAL_BYTES
            return _reject(media, MediaRejected(f"the message's media exceed MEDIA_MAX_TOTAL_BYTES ({limit} bytes)"))
        _store(media, content, content_type)
    return media


def _reject(media: Media, exc: MediaRejected) -> Media | None:
    # Only while still pending: an overlapping run that stored it, or an erasure, stands.
    if Media.objects.filter(pk=media.pk, download_state=Media.DownloadState.PENDING).update(
        download_state=Media.DownloadState.REJECTED, error=str(exc)
    ):
        logger.warning("media %s rejected: %s", media.pk, exc)
        _audio_gone(media)
    return Media.objects.filter(pk=media.pk).first()


def _store(media: Media, content: bytes, content_type: str) -> None:
    extension = _EXTENSIONS.get(content_type) or mimetypes.guess_extension(content_type) or ""
    media.sha256 = hashlib.sha256(content).hexdigest()
    media.file.save(f"{media.sha256[:32]}{extension}", ContentFile(content), save=False)
    media.content_type = content_type
    media.size = len(content)
    media.download_state = Media.DownloadState.DOWNLOADED
    media.downloaded_at = timezone.now()
    media.error = ""
    fields = ["file", "content_type", "size", "sha256", "download_state", "downloaded_at", "error"]
    if media_kind(content_type) == AUDIO:
        fields += _audio_prepare(media, content)
    media.save(update_fields=fields)
    if media.transcription_state == TranscriptionState.PENDING:
        transaction.on_commit(lambda: queue_leased(MEDIA_TRANSCRIBE, [media.pk], Media, [media.pk]))
    elif media.transcription_state:
        transcription_kick_turn(media=media)  # nothing to wait for: the turn may go on now


def media_mark_failed(*, media_id: int, reason: str) -> None:
    updated = Media.objects.filter(pk=media_id, download_state=Media.DownloadState.PENDING).update(
        download_state=Media.DownloadState.FAILED, error=reason[:1000]
    )
    media = Media.objects.select_related("message").filter(pk=media_id).first()
    if updated and media is not None:
        _audio_gone(media)


# mimetypes does not know every audio type WhatsApp sends, or names them oddly.
_EXTENSIONS = {
    "audio/ogg": ".ogg",
    "audio/opus": ".opus",
    "audio/mpeg": ".mp3",
    "audio/mp4": ".m4a",
    "audio/aac": ".aac",
    "audio/amr": ".amr",
}


def _audio_prepare(media: Media, content: bytes) -> list[str]:
    """A downloaded voice note: its length, and whether it is transcribed.
    Returns the fields set."""
    media.duration_seconds = audio_duration(content, media.content_type)
    if settings.TRANSCRIPTION_BACKEND == "off":
        media.transcription_state = TranscriptionState.OFF
        media.transcription_error = "transcription is off (TRANSCRIPTION_BACKEND=off)"
    elif media.duration_seconds is not None and media.duration_seconds > settings.MEDIA_MAX_AUDIO_SECONDS:
        media.transcription_state = TranscriptionState.FAILED
        media.transcription_error = (
            f"the voice note is {media.duration_seconds:.0f} s long, over MEDIA_MAX_AUDIO_SECONDS "
            f"({settings.MEDIA_MAX_AUDIO_SECONDS} s): kept, not transcribed"
        )
    else:
        media.transcription_state = TranscriptionState.PENDING
        media.transcription_error = ""
        # The lease now covers the transcription task (the sweeper's re-queues counted afresh).
        media.queued_at, media.requeues = timezone.now(), 0
        return ["duration_seconds", "transcription_state", "transcription_error", "queued_at", "requeues"]
    return ["duration_seconds", "transcription_state", "transcription_error"]


def _audio_gone(media: Media) -> None:
    """A voice note that will never be downloaded will never be transcribed
    either: the turn waiting for it may go on."""
    if media_kind(media.content_type) == AUDIO or media.message.kind == AUDIO:
        transcription_kick_turn(media=media)


def _fetch(url: str) -> tuple[bytes, str]:
    """GET the media. Every hop's URL is parsed once with urllib3's parser
    (the one ``requests`` connects with), checked (``media_url_check``) and
    the request built from the checked parts. Our credentials go only on the
    first hop and only to Twilio's own media path; redirects are followed
    here, checked again, and never carry them. A 404 (Twilio sometimes
    answers before the file is ready) is retried a few times with a short
    backoff."""
    not_found = 0
    redirects = 0
    with requests.Session() as session:
        while True:
            try:
                target = media_url_check(url)
            except MediaUrlRefused as exc:
                raise MediaRejected(_without_query(f"media URL not allowed ({exc}): {url[:120]}")) from None
            credentials = target.twilio and redirects == 0
            request_url = target.url
            if target.twilio and settings.TWILIO_API_BASE_URL:
                # Tests and the stack point Twilio's API at a local stub; the path is the checked one.
                request_url = settings.TWILIO_API_BASE_URL.rstrip("/") + target.path
            response = _send(session, request_url, credentials=credentials)
            if response.is_redirect:
                response.close()
                redirects += 1
                if redirects > MAX_REDIRECTS:
                    raise MediaRejected("too many redirects")
                location = response.headers["Location"]
                if "\\" in location:
                    raise MediaRejected(
                        f"media URL not allowed (a backslash in a redirect): {_without_query(location)[:120]}"
                    )
                url = urljoin(target.url, location)
                continue
            if response.status_code == 404 and not_found < settings.MEDIA_NOT_FOUND_RETRIES:
                response.close()
                time.sleep(settings.MEDIA_NOT_FOUND_BACKOFF_SECONDS * 2**not_found)
                not_found += 1
                continue
            return _read(response, not_found)


def _send(session: requests.Session, url: str, *, credentials: bool) -> requests.Response:
    """Prepare the request, make sure ``requests`` will connect where the
    checked URL says, and send it without following redirects."""
    auth = (settings.TWILIO_ACCOUNT_SID, settings.TWILIO_AUTH_TOKEN) if credentials else None
    prepared = requests.Request("GET", url, auth=auth).prepare()
    expected, sent = parse_url(url), parse_url(prepared.url or "")
    if (sent.scheme, sent.host, sent.port, sent.auth) != (expected.scheme, expected.host, expected.port, None):
        raise MediaRejected(f"media URL not allowed (prepared differently): {_without_query(url)[:120]}")
    try:
        return session.send(prepared, stream=True, allow_redirects=False, timeout=settings.TWILIO_TIMEOUT_SECONDS)
    except requests.RequestException as exc:
        raise MediaRetry(_without_query(str(exc))) from None


def _read(response: requests.Response, not_found: int) -> tuple[bytes, str]:
    with response:
        if response.status_code == 429 or response.status_code >= 500:
            raise MediaRetry(f"HTTP {response.status_code}")
        if response.status_code != 200:
            tries = f" after {not_found + 1} tries" if response.status_code == 404 else ""
            raise MediaRejected(f"HTTP {response.status_code} fetching media{tries}")
        content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type not in settings.MEDIA_ALLOWED_TYPES:
            raise MediaRejected(f"content type {content_type or 'unknown'} is not accepted")
        cap, cap_name = settings.MEDIA_MAX_IMAGE_BYTES, "MEDIA_MAX_IMAGE_BYTES"
        if media_kind(content_type) == AUDIO:
            cap, cap_name = settings.MEDIA_MAX_AUDIO_BYTES, "MEDIA_MAX_AUDIO_BYTES"
        chunks, size = [], 0
        try:
            for chunk in response.iter_content(64 * 1024):
                size += len(chunk)
                if size > cap:
                    raise MediaRejected(f"larger than {cap_name} ({cap} bytes)")
                chunks.append(chunk)
        except requests.RequestException as exc:  # the connection broke or stalled mid-file
            raise MediaRetry(_without_query(str(exc))) from None
        return b"".join(chunks), content_type


def _without_query(text: str) -> str:
    """``text`` with every URL's query taken out: a redirect's signed CDN link
    carries a token that fetches the tenant's file, and error texts go to logs
    and to ``Media.error`` (raised ``from None``, so that no traceback shows
    the original)."""
    return _URL_QUERY.sub("?...", text)


def _check_message(message: Message) -> None:
    """Media of a message that reached no organization, or that we could not
    read, are never fetched: nobody will look at them, and an unsigned-looking
    payload must not make us call out."""
    if "malformed" in (message.flags or []):
        raise MediaRejected("the message is malformed: its media are not downloaded")
    if message.organization_id is None or message.conversation_id is None:
        raise MediaRejected("the message is unrouted: its media are not downloaded")
