"""Retention: each organization's policy applied to its conversations.

A conversation's clock is the later of its last message and its last issue's
resolution; a conversation with an issue still open is never touched. After
``message_content_months`` its words go (message bodies, payloads,
transcripts, turn traces, alert reasoning; the rows, dates and states stay);
after ``media_months`` its photo and voice-note files are deleted. The
organization's own alert messages with no conversation (new-issue alerts to
the landlord's number) follow the message clock by their own date. Issues
themselves are the landlord's repair records and stay (erasure removes their
words when a tenant asks).

Messages to a number no organization owned when they came (*unrouted*) are
nobody's record and no landlord's policy reaches them: they are deleted once
``UNROUTED_MESSAGE_RETENTION_DAYS`` old (``unrouted_messages_delete``).

An organization without a ``RetentionPolicy`` keeps everything. Every run is
idempotent (it only touches what still holds content) and records what it did
in a ``RetentionRun``; it works in batches of ``BATCH_CONVERSATIONS``
conversations, one short transaction each; a dry run does the same work in
transactions that are rolled back, so its counts are exact and nothing changes.
"""

from __future__ import annotations

import calendar
import datetime
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from conversations.models import Conversation, Media, Message
from emergencies.models import EmergencyAlert
from issues.models import Issue
from orchestration.models import Turn
from privacy.audit import audit_record
from privacy.erasure import conversation_content_redact, media_files_delete
from privacy.models import AuditEvent, RetentionPolicy, RetentionRun

logger = logging.getLogger(__name__)

RETAINED = "[removed after the retention period]"


def months_before(moment: datetime.datetime, months: int) -> datetime.datetime:
    """The same day and time ``months`` calendar months earlier (the month's last day when shorter)."""
    month_index = moment.year * 12 + (moment.month - 1) - months
    year, month = divmod(month_index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


@dataclass
class RetentionReport:
    dry_run: bool
    organizations: dict[int, dict[str, int]] = field(default_factory=dict)
    failed: list[int] = field(default_factory=list)  # organizations whose run raised (logged)

    def total(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for counts in self.organizations.values():
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
        return totals


def _expired_conversations(organization_id: int, cutoff: datetime.datetime):
    open_issue = Issue.objects.filter(conversation=OuterRef("pk"), status__in=Issue.OPEN_STATUSES)
    last_message = Message.objects.filter(conversation=OuterRef("pk")).order_by("-created_at").values("created_at")
    last_resolved = (
        Issue.objects.filter(conversation=OuterRef("pk"), resolved_at__isnull=False)
        .order_by("-resolved_at")
        .values("resolved_at")
    )
    return (
        Conversation.objects.filter(organization_id=organization_id)
        .annotate(
            last_message=Subquery(last_message[:1]),
            last_resolved=Subquery(last_resolved[:1]),
            has_open=Exists(open_issue),
        )
        .annotate(
            clock=Greatest(
                Coalesce("last_message", "created_at"),
                Coalesce("last_resolved", "created_at"),
            )
        )
        .filter(has_open=False, clock__lt=cutoff)
        .values("pk")
    )


def _still_expired(organization_id: int, cutoff: datetime.datetime, ids: list[int]) -> list[int]:
    if not ids:
        return []
    return list(_expired_conversations(organization_id, cutoff).filter(pk__in=ids).values_list("pk", flat=True))


# Conversations redacted per transaction: short transactions (row locks on a
# few thousand messages at most), and a crash loses at most one batch's work,
# which the next run (idempotent) does again.
BATCH_CONVERSATIONS = 200
BATCH_UNROUTED = 1000


def _batches(ids: list[int]) -> list[list[int]]:
    return [ids[start : start + BATCH_CONVERSATIONS] for start in range(0, len(ids), BATCH_CONVERSATIONS)]


def retention_apply_organization(
    *, policy: RetentionPolicy, now: datetime.datetime, dry_run: bool = False
) -> dict[str, int]:
    counts: dict[str, int] = {}
    try:
        _redact(policy=policy, now=now, dry_run=dry_run, counts=counts)
    finally:  # after a failure too: the batches already committed are on record
        _run_record(policy=policy, now=now, dry_run=dry_run, counts=counts)
    return counts


def _redact(*, policy: RetentionPolicy, now: datetime.datetime, dry_run: bool, counts: dict[str, int]) -> None:
    organization_id = policy.organization_id
    content_cutoff = months_before(now, policy.message_content_months)
    media_cutoff = months_before(now, policy.media_months)
    conversation_ids = list(_expired_conversations(organization_id, content_cutoff).values_list("pk", flat=True))
    media_ids = list(_expired_conversations(organization_id, media_cutoff).values_list("pk", flat=True))
    content_ids, file_ids = set(conversation_ids), set(media_ids)
    touched = 0
    for batch in _batches(sorted(content_ids | file_ids)):
        with transaction.atomic():
            # Locked, then checked again: a message that came in since the list
            # was made (the webhook updates its conversation's row) keeps its
            # conversation, and one coming in now waits for this batch.
            list(Conversation.objects.select_for_update().filter(pk__in=batch).order_by("pk").values_list("pk"))
            content_batch = _still_expired(organization_id, content_cutoff, [pk for pk in batch if pk in content_ids])
            file_batch = _still_expired(organization_id, media_cutoff, [pk for pk in batch if pk in file_ids])
            before = sum(counts.values())
            conversation_content_redact(
                conversations=Conversation.objects.filter(pk__in=content_batch),
                messages=Message.objects.filter(organization_id=organization_id, conversation_id__in=content_batch),
                media=Media.objects.filter(message__conversation_id__in=content_batch),
                turns=Turn.objects.filter(conversation_id__in=content_batch),
                alerts=EmergencyAlert.objects.filter(conversation_id__in=content_batch),
                marker=RETAINED,
                counts=counts,
                files=False,  # by media_months, below
            )
            if sum(counts.values()) != before:
                touched += len(content_batch)
            media_files_delete(Media.objects.filter(message__conversation_id__in=file_batch), counts)
            if dry_run:
                transaction.set_rollback(True)
    with transaction.atomic():
        # The landlord's own alert messages (no conversation): by their own date.
        changed = (
            Message.objects.filter(
                organization_id=organization_id, conversation__isnull=True, created_at__lt=content_cutoff
            )
            .filter(~Q(body=RETAINED) & ~Q(body=""))
            .update(body=RETAINED, raw_payload={}, template_variables={})
        )
        if changed:
            counts["conversations.Message.body (no conversation)"] = changed
        if dry_run:
            transaction.set_rollback(True)
    if touched:
        counts["conversations"] = touched


def _run_record(*, policy: RetentionPolicy, now: datetime.datetime, dry_run: bool, counts: dict[str, int]) -> None:
    RetentionRun.objects.create(organization_id=policy.organization_id, dry_run=dry_run, ran_at=now, counts=counts)
    if counts and not dry_run:
        audit_record(
            organization_id=policy.organization_id,
            actor=None,
            via=AuditEvent.Via.SYSTEM,
            action=AuditEvent.Action.RETENTION,
            target_type="privacy.retentionpolicy",
            target_id=policy.pk,
            label=", ".join(f"{key.rsplit('.', 1)[-1]} {value}" for key, value in sorted(counts.items()))[:200],
        )


def retention_apply(*, now: datetime.datetime | None = None, dry_run: bool = False) -> RetentionReport:
    """Apply every organization's policy as of ``now`` (tests pass a frozen clock)."""
    now = now or timezone.now()
    report = RetentionReport(dry_run=dry_run)
    for policy in RetentionPolicy.objects.order_by("organization_id"):
        try:
            report.organizations[policy.organization_id] = retention_apply_organization(
                policy=policy, now=now, dry_run=dry_run
            )
        except Exception:  # one organization's failure must not leave the others' data kept
            logger.exception("retention for organization %s failed; the others go on", policy.organization_id)
            report.failed.append(policy.organization_id)
    logger.info("retention%s: %s", " (dry run)" if dry_run else "", report.total())
    return report


def unrouted_messages_delete(*, now: datetime.datetime | None = None, dry_run: bool = False) -> int:
    """Delete the unrouted messages older than ``UNROUTED_MESSAGE_RETENTION_DAYS``
    (0 keeps them). They hold a sender's number and words; the superusers who
    diagnose a number's set-up need days of them, not years. Their media were
    never downloaded, so only rows go. Returns how many (would) go."""
    days = settings.UNROUTED_MESSAGE_RETENTION_DAYS
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - datetime.timedelta(days=days)
    expired = Message.objects.filter(organization__isnull=True, created_at__lt=cutoff)
    if dry_run:
        return expired.count()
    deleted = 0
    while ids := list(expired.order_by("pk").values_list("pk", flat=True)[:BATCH_UNROUTED]):
        with transaction.atomic():
            deleted += Message.objects.filter(pk__in=ids).delete()[1].get("conversations.Message", 0)
    if deleted:
        logger.info("retention: %d unrouted messages older than %d days deleted", deleted, days)
    return deleted
