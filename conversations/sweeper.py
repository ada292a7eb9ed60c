"""The database is the source of truth; Redis may lose a task. The sweeper
re-queues what PostgreSQL says is unfinished: inbound messages not processed,
outbound messages not sent, media not downloaded, voice notes not transcribed. Handling is idempotent, so
a task queued twice does its work once.

Queued work holds a lease: ``queued_at`` is set whenever a task is queued for
a row, and the sweeper queues the row again only once SWEEP_LEASE_SECONDS
have passed, so a backlog (tasks waiting, or retrying with backoff) is not
multiplied by every sweep. Each re-queue is counted in ``requeues``; after
SWEEP_MAX_REQUEUES the sweeper gives up on the row and says why."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Model, Q, QuerySet
from django.utils import timezone

from config.tasks import INBOUND_PROCESS, MEDIA_DOWNLOAD, MEDIA_TRANSCRIBE, OUTBOUND_SEND, queue_task
from conversations.models import Media, Message, TranscriptionState

logger = logging.getLogger(__name__)

# Flag on an inbound message the sweeper stopped queueing.
REQUEUE_LIMIT = "requeue_limit"


def channel_sweep(*, now: datetime | None = None) -> dict[str, int]:
    now = now or timezone.now()
    inbound_cutoff = now - timedelta(seconds=settings.INBOUND_SWEEP_GRACE_SECONDS)
    outbound_cutoff = now - timedelta(seconds=settings.OUTBOUND_SWEEP_GRACE_SECONDS)
    gave_up = 0

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
    inbound, over = lease_take(
        Message.objects.filter(pk__in=[row["last"] for row in newest]).exclude(flags__contains=[REQUEUE_LIMIT]),
        now=now,
    )
    for message in Message.objects.filter(pk__in=over):
        message.flags = [*message.flags, REQUEUE_LIMIT]
        message.save(update_fields=["flags"])
        logger.error("inbound message %s still unprocessed after %d re-queues; flagged", message.pk, message.requeues)
    gave_up += len(over)
    inbound = [pk for pk in inbound if queue_leased(INBOUND_PROCESS, [pk], Message, [pk], requeue=True)]

    # A worker that died between claiming and recording a send leaves
    # "sending" behind: send again (at least once beats never), now.
    stale_sending = Message.objects.filter(
        direction=Message.Direction.OUTBOUND, status=Message.Status.SENDING, status_updated_at__lt=outbound_cutoff
    ).update(status=Message.Status.PENDING, queued_at=None)
    pending, over = lease_take(
        Message.objects.filter(
            direction=Message.Direction.OUTBOUND, status=Message.Status.PENDING, created_at__lt=outbound_cutoff
        ).order_by("created_at", "id"),
        now=now,
        limit=1000,
    )
    reason = f"not sent after {settings.SWEEP_MAX_REQUEUES} re-queues by the sweeper"
    gave_up += Message.objects.filter(pk__in=over, status=Message.Status.PENDING).update(
        status=Message.Status.FAILED, error_code=REQUEUE_LIMIT, error_message=reason, status_updated_at=now
    )
    # One task per recipient, in the order written, as outbound_sent_together queues them: a number
    # Twilio refuses for a while must not hold every other tenant's reply behind it.
    by_recipient: dict[str, list[int]] = {}
    for pk, to in Message.objects.filter(pk__in=pending).order_by("created_at", "id").values_list("pk", "to_address"):
        by_recipient.setdefault(to, []).append(pk)
    pending = [
        pk
        for ids in by_recipient.values()
        if queue_leased(OUTBOUND_SEND, [ids], Message, ids, requeue=True)
        for pk in ids
    ]

    media, over = lease_take(
        Media.objects.filter(download_state=Media.DownloadState.PENDING, created_at__lt=outbound_cutoff).order_by("id"),
        now=now,
        limit=500,
    )
    gave_up += Media.objects.filter(pk__in=over, download_state=Media.DownloadState.PENDING).update(
        download_state=Media.DownloadState.FAILED,
        error=f"not downloaded after {settings.SWEEP_MAX_REQUEUES} re-queues by the sweeper",
    )
    media = [pk for pk in media if queue_leased(MEDIA_DOWNLOAD, [pk], Media, [pk], requeue=True)]

    # Voice notes downloaded but not transcribed: the task was lost (or is
    # retrying: the lease keeps the sweeper from doubling it).
    voice, over = lease_take(
        Media.objects.filter(
            transcription_state=TranscriptionState.PENDING,
            download_state=Media.DownloadState.DOWNLOADED,
            downloaded_at__lt=outbound_cutoff,
        ).order_by("id"),
        now=now,
        limit=500,
    )
    gave_up += Media.objects.filter(pk__in=over, transcription_state=TranscriptionState.PENDING).update(
        transcription_state=TranscriptionState.FAILED,
        transcription_error=f"not transcribed after {settings.SWEEP_MAX_REQUEUES} re-queues by the sweeper",
    )
    voice = [pk for pk in voice if queue_leased(MEDIA_TRANSCRIBE, [pk], Media, [pk], requeue=True)]

    counts = {
        "inbound": len(inbound),
        "outbound": len(pending),
        "stale_sending": stale_sending,
        "media": len(media),
        "transcriptions": len(voice),
        "gave_up": gave_up,
    }
    if any(counts.values()):
        logger.info("sweeper re-queued %s", counts)
    return counts


def lease_take(queryset: QuerySet, *, now: datetime, limit: int | None = None) -> tuple[list[int], list[int]]:
    """Take the lease on the rows of ``queryset`` whose lease has run out (or
    that never had one): ``queued_at`` becomes ``now`` and ``requeues`` one
    more. Rows locked by a concurrent sweep are skipped, so two sweeps never
    queue one row twice. Returns (leased ids, ids already re-queued
    SWEEP_MAX_REQUEUES times, not leased)."""
    lease_cutoff = now - timedelta(seconds=settings.SWEEP_LEASE_SECONDS)
    expired = queryset.filter(Q(queued_at__isnull=True) | Q(queued_at__lt=lease_cutoff))
    with transaction.atomic():
        locked = expired.select_for_update(skip_locked=True).values_list("id", "requeues")
        rows = list(locked[:limit] if limit else locked)
        leased = [pk for pk, requeues in rows if requeues < settings.SWEEP_MAX_REQUEUES]
        over = [pk for pk, requeues in rows if requeues >= settings.SWEEP_MAX_REQUEUES]
        queryset.model.objects.filter(pk__in=leased).update(queued_at=now, requeues=F("requeues") + 1)
    return leased, over


def lease_renew(model: type[Model], ids: list[int]) -> None:
    """A task that retries still holds the work: its lease starts again, so
    the sweeper does not queue a second chain while a slow one (timeouts and
    backoff together can outlast ``SWEEP_LEASE_SECONDS``) is still trying."""
    model._default_manager.filter(pk__in=ids).update(queued_at=timezone.now())


def queue_leased(
    name: str,
    args: list,
    model: type[Model],
    ids: list[int],
    *,
    requeue: bool = False,
    countdown: float | None = None,
) -> bool:
    """Queue the task for rows whose lease (``queued_at``) is already taken;
    when the broker is down, give the lease back (and, for a re-queue, the
    count) so that the next sweep tries again without waiting for it."""
    if queue_task(name, args, countdown=countdown):
        return True
    undo: dict[str, Any] = {"queued_at": None}
    if requeue:
        undo["requeues"] = F("requeues") - 1
    model._default_manager.filter(pk__in=ids).update(**undo)
    return False
