"""Voice notes to text: the one door to the transcriber.

The backend is chosen by ``TRANSCRIPTION_BACKEND``:

* ``http``: an OpenAI-compatible ``POST {TRANSCRIPTION_BASE_URL}/v1/audio/transcriptions``
  (hosted Whisper, faster-whisper-server, whisper.cpp's server): multipart
  ``file`` and ``model``, ``response_format=verbose_json`` (for the language
  and duration where the server gives them; a plain ``{"text": ...}`` is
  accepted too), ``Authorization: Bearer TRANSCRIPTION_API_KEY`` when a key is
  set, through ``requests``.
* ``off``: nothing is transcribed; the voice note is kept and the tenant is
  asked to type.

No offline backend: docs/whatsapp-voice-notes.md says what was looked at.

``media_transcribe`` is the service the ``media.transcribe`` task calls. A
timeout, a connection error, a 5xx or a 429 raises ``TranscriptionRetry``
(the task retries with backoff up to ``TRANSCRIPTION_MAX_RETRIES``, then
``media_transcription_fail``); anything else (a 4xx, a body that is not a
transcript) marks the voice note failed at once. A done transcript makes the
message be screened for an emergency again, on its words (``screened_at`` is
cleared and ``emergency.screen`` queued by name: the channel does not import
``emergencies``), and tells the turn waiting for it to go on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import requests
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from config.tasks import EMERGENCY_SCREEN, INBOUND_PROCESS, queue_task
from conversations.models import Media, Message, TranscriptionState
from conversations.signals import transcript_done

logger = logging.getLogger(__name__)


class TranscriptionRetry(Exception):
    """Transient: a timeout, a connection error, HTTP 5xx or 429."""


class TranscriptionFailed(Exception):
    """Permanent: retrying cannot help (a 4xx, an answer that is no transcript, misconfiguration)."""


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str = ""
    duration_seconds: float | None = None


def transcribe(*, content: bytes, filename: str, content_type: str) -> Transcript:
    """What the configured transcriber heard in ``content``."""
    backend = settings.TRANSCRIPTION_BACKEND
    if backend == "http":
        return _http_transcribe(content=content, filename=filename, content_type=content_type)
    raise TranscriptionFailed(f"transcription is off (TRANSCRIPTION_BACKEND={backend})")


def _http_transcribe(*, content: bytes, filename: str, content_type: str) -> Transcript:
    url = settings.TRANSCRIPTION_BASE_URL.rstrip("/") + "/v1/audio/transcriptions"
    headers = {"Authorization": f"Bearer {settings.TRANSCRIPTION_API_KEY}"} if settings.TRANSCRIPTION_API_KEY else {}
    try:
        response = requests.post(
            url,
            headers=headers,
            files={"file": (filename, content, content_type or "application/octet-stream")},
            data={"model": settings.TRANSCRIPTION_MODEL, "response_format": "verbose_json"},
            timeout=settings.TRANSCRIPTION_TIMEOUT_SECONDS,
        )
    except requests.RequestException as exc:  # timeouts and refused connections
        raise TranscriptionRetry(f"{type(exc).__name__}: {exc}") from exc
    if response.status_code == 429 or response.status_code >= 500:
        raise TranscriptionRetry(f"HTTP {response.status_code} from the transcriber")
    if response.status_code != 200:
        raise TranscriptionFailed(f"HTTP {response.status_code} from the transcriber: {response.text[:300]}")
    try:
        body = response.json()
    except ValueError as exc:
        raise TranscriptionFailed(f"the transcriber's answer is not JSON: {response.text[:200]}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        raise TranscriptionFailed(f"the transcriber's answer has no text: {str(body)[:200]}")
    duration = body.get("duration")
    return Transcript(
        text=body["text"].strip(),
        language=_language_code(body.get("language")),
        duration_seconds=float(duration) if isinstance(duration, int | float) else None,
    )


# verbose_json names the language in English ("english"); some servers give the code.
_LANGUAGE_NAMES = {
    "english": "en",
    "polish": "pl",
    "spanish": "es",
    "german": "de",
    "french": "fr",
    "italian": "it",
    "portuguese": "pt",
    "romanian": "ro",
    "ukrainian": "uk",
    "russian": "ru",
    "dutch": "nl",
    "arabic": "ar",
    "turkish": "tr",
    "hindi": "hi",
    "urdu": "ur",
    "chinese": "zh",
}


def _language_code(value: object) -> str:
    if not isinstance(value, str) or not value:
        return ""
    value = value.strip().lower()
    return _LANGUAGE_NAMES.get(value, value if len(value) <= 8 else "")


def media_transcribe(*, media_id: int) -> Media | None:
    """Transcribe one downloaded voice note whose transcription is pending.
    Raises ``TranscriptionRetry`` on a transient failure (the state stays
    pending); a permanent one marks it failed. No lock or transaction is held
    during the HTTP call; the result is stored only if the voice note is still
    pending, so a redelivered task stores nothing twice."""
    media = Media.objects.select_related("message").filter(pk=media_id).first()
    if media is None or media.transcription_state != TranscriptionState.PENDING:
        return media
    if settings.TRANSCRIPTION_BACKEND == "off":
        media_transcription_fail(media_id=media_id, reason="transcription is off", state=TranscriptionState.OFF)
        return Media.objects.get(pk=media_id)
    try:
        with media.file.open("rb") as handle:
            content = handle.read()
        filename = (media.file.name or "voice-note").rsplit("/", 1)[-1]
        heard = transcribe(content=content, filename=filename, content_type=media.content_type)
    except TranscriptionFailed as exc:
        media_transcription_fail(media_id=media_id, reason=str(exc))
        return Media.objects.get(pk=media_id)
    except (OSError, ValueError) as exc:  # the stored file is gone or unreadable
        media_transcription_fail(media_id=media_id, reason=f"the stored audio could not be read: {exc}")
        return Media.objects.get(pk=media_id)
    if not heard.text:
        media_transcription_fail(media_id=media_id, reason="the transcriber heard no words")
        return Media.objects.get(pk=media_id)
    with transaction.atomic():
        updated = Media.objects.filter(pk=media_id, transcription_state=TranscriptionState.PENDING).update(
            transcription_state=TranscriptionState.DONE,
            transcript=heard.text,
            transcript_language=heard.language,
            transcription_error="",
            transcribed_at=timezone.now(),
            duration_seconds=media.duration_seconds or heard.duration_seconds,
        )
        if updated:
            # Screened again on its words: the detector reads message_text, and
            # screening skips a message whose alert is already recorded.
            message_id = media.message_id
            Message.objects.filter(pk=message_id).update(screened_at=None)
            transaction.on_commit(lambda: queue_task(EMERGENCY_SCREEN, [message_id]))
            transcript_done.send(sender=Media, message_id=message_id)
            transcription_kick_turn(media=media)
    logger.info("voice note %s transcribed (%d characters, %s)", media_id, len(heard.text), heard.language or "?")
    return Media.objects.get(pk=media_id)


def media_transcription_fail(*, media_id: int, reason: str, state: str = TranscriptionState.FAILED) -> None:
    """The voice note cannot be transcribed: kept, marked with the reason, and
    the turn waiting for it goes on (and asks the tenant to type)."""
    updated = Media.objects.filter(pk=media_id, transcription_state=TranscriptionState.PENDING).update(
        transcription_state=state, transcription_error=reason[:1000]
    )
    if updated:
        logger.warning("voice note %s not transcribed: %s", media_id, reason)
        media = Media.objects.select_related("message").get(pk=media_id)
        transcription_kick_turn(media=media)


def transcription_kick_turn(*, media: Media) -> None:
    """The voice note's wait is over (transcribed, failed, never downloaded):
    queue the turn of its conversation's newest unprocessed message now,
    instead of letting it wait out ``TRANSCRIPTION_WAIT_SECONDS``. The turn is
    idempotent, so a kick that finds nothing to do costs one query."""
    conversation_id = media.message.conversation_id
    if conversation_id is None:
        return
    newest = Message.objects.filter(
        conversation_id=conversation_id, direction=Message.Direction.INBOUND, processed_at__isnull=True
    ).aggregate(newest=Max("id"))["newest"]
    if newest is not None:
        transaction.on_commit(lambda: queue_task(INBOUND_PROCESS, [newest]))
