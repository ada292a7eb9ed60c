"""Finish emergency work that Redis or a worker lost: messages nobody screened,
validations still pending and landlord emails not yet sent."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from config.tasks import EMERGENCY_NOTIFY_EMAIL, EMERGENCY_VALIDATE, queue_task
from emergencies.models import EmergencyAlert
from emergencies.screening import unscreened_screen


def emergency_sweep() -> dict[str, int]:
    screened = unscreened_screen()
    cutoff = timezone.now() - timedelta(seconds=settings.EMERGENCY_SWEEP_GRACE_SECONDS)
    old = EmergencyAlert.objects.filter(created_at__lt=cutoff)
    pending = list(
        old.filter(status=EmergencyAlert.Status.PENDING, source=EmergencyAlert.Source.KEYWORD).values_list(
            "id", flat=True
        )[:200]
    )
    unnotified = list(old.filter(landlord_notified_at__isnull=True).values_list("id", flat=True)[:200])
    for alert_id in pending:
        queue_task(EMERGENCY_VALIDATE, [alert_id])
    for alert_id in unnotified:
        queue_task(EMERGENCY_NOTIFY_EMAIL, [alert_id])
    return {"screened": screened, "validate": len(pending), "notify": len(unnotified)}
