"""The database is the source of truth; Redis may lose a task. The sweeper
re-queues what PostgreSQL says is unfinished: inbound messages not processed,
outbound messages not sent, media not downloaded. Handling is idempotent, so
a task queued twice does its work once."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from config.tasks import INBOUND_PROCESS, MEDIA_DOWNLOAD, OUTBOUND_SEND, queue_task
from conversations.models import Media, Message

logger = logging.getLogger(__name__)


def channel_sweep(*, now=None) -> dict[str, int]:
    now = now or timezone.now()
    inbound_cutoff = now - timedelta(seconds=settings.INBOUND_SWEEP_GRACE_SECONDS)
    outbound_cutoff = now - timedelta(seconds=settings.OUTBOUND_SWEEP_GRACE_SECONDS)

    # One task per conversation: the newest unprocessed message's task handles
    # the whole backlog in order.
    newest = (
        Message.objects.filter(
            direction=Message.Direction.INBOUND,
            processed_at__isnull=True,
            conversation__isnull=False,
            created_at__lt=inbound_cutoff,
        )
        .values("conversation_id")
        .annotate(last=Max("id"))
    )
    inbound = [row["last"] for row in newest]
    for message_id in inbound:
        queue_task(INBOUND_PROCESS, [message_id])

    # A worker that died between claiming and recording a send leaves
    # "sending" behind: send again (at least once beats never).
    stale_sending = Message.objects.filter(
        direction=Message.Direction.OUTBOUND, status=Message.Status.SENDING, status_updated_at__lt=outbound_cutoff
    ).update(status=Message.Status.PENDING)
    pending = list(
        Message.objects.filter(
            direction=Message.Direction.OUTBOUND, status=Message.Status.PENDING, created_at__lt=outbound_cutoff
        )
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:1000]
    )
    if pending:
        queue_task(OUTBOUND_SEND, [pending])

    media = list(
        Media.objects.filter(download_state=Media.DownloadState.PENDING, created_at__lt=outbound_cutoff).values_list(
            "id", flat=True
        )[:500]
    )
    for media_id in media:
        queue_task(MEDIA_DOWNLOAD, [media_id])

    counts = {"inbound": len(inbound), "outbound": len(pending), "stale_sending": stale_sending, "media": len(media)}
    if any(counts.values()):
        logger.info("sweeper re-queued %s", counts)
    return counts
