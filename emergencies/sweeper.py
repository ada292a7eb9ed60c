"""Finish emergency work that Redis or a worker lost: messages nobody screened,
safety texts written but not sent, validations still pending and landlord
emails not yet sent; and a conversation's alert stamp
(``emergency_alerted_at``) that an alert did not move.

An alert's lost work is queued again under a lease (``queued_at``), as the
channel's sweeper does, so a backlog is not multiplied by every sweep; after
SWEEP_MAX_REQUEUES re-queues the sweeper stops and logs why."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from config.tasks import EMERGENCY_NOTIFY_EMAIL, EMERGENCY_VALIDATE, queue_task
from conversations.models import Conversation
from conversations.sweeper import lease_take
from emergencies.alerts import VALIDATED_SOURCES
from emergencies.models import EmergencyAlert
from emergencies.screening import safety_unsent_send, unscreened_screen

logger = logging.getLogger(__name__)


def emergency_sweep() -> dict[str, int]:
    screened = unscreened_screen()
    resent = safety_unsent_send()
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.EMERGENCY_SWEEP_GRACE_SECONDS)
    unvalidated = Q(
        status=EmergencyAlert.Status.PENDING,
        source__in=VALIDATED_SOURCES,
        created_at__gte=now - timedelta(hours=settings.EMERGENCY_VALIDATE_MAX_AGE_HOURS),
    )
    unnotified = Q(landlord_notified_at__isnull=True)
    lost = EmergencyAlert.objects.filter(unvalidated | unnotified, created_at__lt=cutoff)
    leased, over = lease_take(lost, now=now, limit=200)
    validate = notify = 0
    to_validate = set(EmergencyAlert.objects.filter(unvalidated, pk__in=leased).values_list("pk", flat=True))
    for alert in EmergencyAlert.objects.filter(pk__in=leased).order_by("id"):
        tasks = []
        if alert.pk in to_validate:
            tasks.append(EMERGENCY_VALIDATE)
            validate += 1
        if alert.landlord_notified_at is None:
            tasks.append(EMERGENCY_NOTIFY_EMAIL)
            notify += 1
        if not all([queue_task(name, [alert.pk]) for name in tasks]):  # broker down: the next sweep tries again
            EmergencyAlert.objects.filter(pk=alert.pk).update(queued_at=None, requeues=F("requeues") - 1)
    if over:
        EmergencyAlert.objects.filter(pk__in=over).update(queued_at=now)  # said once per lease, not every sweep
        logger.error(
            "emergency alerts %s still unvalidated or unnotified after %d re-queues; is the emergency worker up?",
            over,
            settings.SWEEP_MAX_REQUEUES,
        )
    return {
        "screened": screened,
        "safety_sent": resent,
        "validate": validate,
        "notify": notify,
        "stamped": alert_stamps_repair(),
    }


def alert_stamps_repair() -> int:
    """Give each conversation whose latest alert of the report window is later
    than its ``emergency_alerted_at`` that alert's time: an alert written by a
    process older than the column (a rolling deploy), or two alerts committed
    out of order. The turn looks for an emergency report only within
    ``GATHERING_STALE_HOURS`` of the stamp. Returns how many were moved."""
    since = timezone.now() - timedelta(hours=settings.GATHERING_STALE_HOURS)
    latest = Subquery(
        EmergencyAlert.objects.filter(conversation=OuterRef("pk"), created_at__gte=since)
        .order_by("-created_at")
        .values("created_at")[:1]
    )
    behind = (
        Conversation.objects.filter(pk__in=EmergencyAlert.objects.filter(created_at__gte=since).values("conversation"))
        .annotate(latest=latest)
        .filter(Q(emergency_alerted_at__isnull=True) | Q(emergency_alerted_at__lt=F("latest")))
    )
    return Conversation.objects.filter(pk__in=behind.values("pk")).update(emergency_alerted_at=latest)
