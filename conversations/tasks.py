"""Celery adapters for the channel: take ids, call one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from config.tasks import CHANNEL_SWEEP, MEDIA_DOWNLOAD, MEDIA_TRANSCRIBE, OUTBOUND_SEND
from conversations.delivery import SendRetry, message_send
from conversations.media import MediaRetry, media_download, media_mark_failed
from conversations.models import Media
from conversations.sweeper import channel_sweep, lease_renew
from conversations.transcription import TranscriptionRetry, media_transcribe, media_transcription_fail


@shared_task(name=OUTBOUND_SEND, acks_late=True, bind=True, max_retries=5)
def send_outbound(self, message_ids: list[int]) -> None:
    """Send in order; on a transient failure retry from the failed message on."""
    for position, message_id in enumerate(message_ids):
        try:
            message_send(message_id=message_id)
        except SendRetry as exc:
            if self.request.retries >= self.max_retries:
                return  # still pending: the sweeper tries again later
            raise self.retry(args=[message_ids[position:]], exc=exc, countdown=2 ** (self.request.retries + 1)) from exc


@shared_task(name=MEDIA_DOWNLOAD, acks_late=True, bind=True, max_retries=4)
def download_media(self, media_id: int) -> None:
    try:
        media_download(media_id=media_id)
    except MediaRetry as exc:
        if self.request.retries >= self.max_retries:
            media_mark_failed(media_id=media_id, reason=f"gave up after retries: {exc}")
            return
        lease_renew(Media, [media_id])
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc


# The first retry of a transcription waits a second, then 2, 4, 8: a voice note's
# turn waits TRANSCRIPTION_WAIT_SECONDS (30 s by default) for it.
TRANSCRIPTION_BACKOFF_SECONDS = 1.0


@shared_task(name=MEDIA_TRANSCRIBE, acks_late=True, bind=True)
def transcribe_media(self, media_id: int) -> None:
    try:
        media_transcribe(media_id=media_id)
    except TranscriptionRetry as exc:
        retries = settings.TRANSCRIPTION_MAX_RETRIES
        if self.request.retries >= retries:
            media_transcription_fail(media_id=media_id, reason=f"gave up after {retries} retries: {exc}")
            return
        backoff = TRANSCRIPTION_BACKOFF_SECONDS * 2**self.request.retries
        lease_renew(Media, [media_id])
        raise self.retry(exc=exc, countdown=backoff, max_retries=retries) from exc


@shared_task(name=CHANNEL_SWEEP, acks_late=True)
def sweep() -> dict[str, int]:
    return channel_sweep()
