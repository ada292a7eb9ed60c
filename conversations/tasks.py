"""Celery adapters for the channel: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from config.tasks import CHANNEL_SWEEP, MEDIA_DOWNLOAD, OUTBOUND_SEND
from conversations.delivery import SendRetry, message_send
from conversations.media import MediaRetry, media_download, media_mark_failed
from conversations.sweeper import channel_sweep


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
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc


@shared_task(name=CHANNEL_SWEEP, acks_late=True)
def sweep() -> dict[str, int]:
    return channel_sweep()
