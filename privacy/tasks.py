from __future__ import annotations

from celery import shared_task

from config.tasks import PRIVACY_RETENTION_APPLY
from privacy.media_orphans import media_orphans_delete
from privacy.retention import retention_apply, unrouted_messages_delete


@shared_task(name=PRIVACY_RETENTION_APPLY, acks_late=True)
def retention_apply_task() -> dict[str, int]:
    """Beat, daily: every organization's retention policy (idempotent), then
    the unrouted messages past their days, the media files no row names. An organization whose run failed is logged
    and counted in the result."""
    report = retention_apply()
    totals = report.total()
    if report.failed:
        totals["organizations failed"] = len(report.failed)
    if unrouted := unrouted_messages_delete():
        totals["unrouted messages"] = unrouted
    if orphans := media_orphans_delete():
        totals["orphaned media files"] = len(orphans)
    return totals
