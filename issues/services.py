"""Writes on an issue that a report produces: create it (or add to an open
duplicate), attach the report's photos, and tell the landlord."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import TrigramSimilarity
from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone

from conversations.models import Conversation, Media
from conversations.twilio_client import phone_mask
from issues.deadlines import issue_clocks_sync
from issues.dispatch import dispatch_auto
from issues.landlord import landlord_tell
from issues.models import Issue, IssuePhoto, IssueUpdate
from properties.linking import PhoneLink, tenancy_link_phone
from properties.selectors import tenancies_current

logger = logging.getLogger(__name__)


def issue_reference_new() -> str:
    return f"R{timezone.now():%y%m}-{secrets.token_hex(3).upper()}"


def issue_duplicate_find(*, conversation: Conversation, title: str, description: str, location: str) -> Issue | None:
    """An open issue at the same property, reported recently, about the same
    problem: its title or its description alone must be similar enough
    (``ISSUE_DUPLICATE_MIN_SIMILARITY``); the same room is an extra condition
    (``ISSUE_DUPLICATE_MIN_LOCATION_SIMILARITY`` when both have a location),
    never a reason on its own. A number with no tenancy at the property
    (unverified) is matched against its own conversation's issues only: it must
    not learn of, or write into, the tenants' reports."""
    since = timezone.now() - timedelta(days=settings.ISSUE_DUPLICATE_WINDOW_DAYS)
    scope = Q(property=conversation.property)
    if not _tenancy_on_record(conversation):
        scope &= Q(conversation=conversation)
    candidates = (
        Issue.objects.filter(scope, status__in=Issue.OPEN_STATUSES, created_at__gte=since)
        .annotate(
            problem=Greatest(TrigramSimilarity("title", title), TrigramSimilarity("description", description)),
            place=TrigramSimilarity("location", location or ""),
        )
        .filter(problem__gte=settings.ISSUE_DUPLICATE_MIN_SIMILARITY)
    )
    if location.strip():
        candidates = candidates.filter(Q(location="") | Q(place__gte=settings.ISSUE_DUPLICATE_MIN_LOCATION_SIMILARITY))
    return candidates.order_by("-problem", "-place").first()


def issue_create(
    *,
    conversation: Conversation,
    title: str,
    description: str,
    category: str,
    urgency: str,
    location: str,
    photo: str,
    photo_findings: str = "",
) -> tuple[Issue, bool]:
    """Create the issue, or add to an open duplicate. Returns (issue, created).
    ``photo_findings`` is what the assistant saw in the tenant's photos; on a
    duplicate it goes into the update and is added to the issue's own."""
    photo_findings = photo_findings.strip()
    duplicate = issue_duplicate_find(conversation=conversation, title=title, description=description, location=location)
    if duplicate is not None:
        body = f"{description}\n\nSeen in the photos: {photo_findings}" if photo_findings else description
        IssueUpdate.objects.create(
            issue=duplicate, author=IssueUpdate.Author.TENANT, conversation=conversation, body=body
        )
        # Another tenant's findings stay in their update: the issue's own field is its tenant's.
        same_tenant = duplicate.conversation_id == conversation.pk
        if same_tenant and photo_findings and photo_findings not in duplicate.photo_findings:
            duplicate.photo_findings = f"{duplicate.photo_findings}\n{photo_findings}".strip()
            duplicate.save(update_fields=["photo_findings", "updated_at"])
        _photos_attach(issue=duplicate, conversation=conversation)
        return duplicate, False
    if conversation.property is None:  # gating allows create_issue only once the property is confirmed
        raise ValueError(f"conversation {conversation.pk} has no confirmed property to report an issue for")
    issue = Issue.objects.create(
        organization_id=conversation.organization_id,
        property=conversation.property,
        tenant=conversation.tenant,
        conversation=conversation,
        reference=issue_reference_new(),
        title=title[:200],
        description=description,
        category=category,
        urgency=urgency,
        location=location[:200],
        photo=photo,
        photo_findings=photo_findings,
        tenant_unverified=not _tenancy_on_record(conversation),
    )
    _photos_attach(issue=issue, conversation=conversation)
    issue_clocks_sync(issue=issue)
    landlord_notify_issue(issue=issue)
    dispatch_auto(issue, tell_landlord=True)
    return issue, True


def _tenancy_on_record(conversation: Conversation) -> bool:
    """Whether the number has a current tenancy at the conversation's property
    (rather than having named an address we matched)."""
    if conversation.tenant is None:
        return False
    return any(t.property_id == conversation.property_id for t in tenancies_current(tenant=conversation.tenant))


PHOTO_USABLE_STATES = (Media.DownloadState.PENDING, Media.DownloadState.DOWNLOADED)


def report_photos(*, conversation: Conversation, message_ids: Sequence[int] = ()) -> QuerySet[Media]:
    """The photos of the report being gathered: images sent since it started
    (or in ``message_ids``, this turn's messages) that are not on an issue yet.
    A download that was rejected or failed is not a photo; one still
    downloading is. A photo already attached to an issue belongs to that
    report, never to the next one."""
    since = conversation.gathering_started_at or (timezone.now() - timedelta(hours=settings.GATHERING_STALE_HOURS))
    return Media.objects.filter(
        Q(message__created_at__gte=since) | Q(message_id__in=list(message_ids)),
        message__conversation=conversation,
        content_type__startswith="image/",
        download_state__in=PHOTO_USABLE_STATES,
        issue_photos__isnull=True,
    ).exclude(message__kind="sticker")


def _photos_attach(*, issue: Issue, conversation: Conversation) -> None:
    media = report_photos(conversation=conversation)
    IssuePhoto.objects.bulk_create([IssuePhoto(issue=issue, media=m) for m in media], ignore_conflicts=True)


def landlord_notify_issue(*, issue: Issue) -> None:
    """Tell the organization about a new issue."""
    subject = f"[{issue.get_urgency_display()}] {issue.reference}: {issue.title}"
    body = (
        f"{issue.title}\nProperty: {issue.property}\nWhere: {issue.location}\nUrgency: {issue.urgency}\n\n"
        f"{issue.description}"
    )
    if issue.photo_findings:
        body += f"\n\nSeen in the tenant's photos: {issue.photo_findings}"
    if issue.tenant_unverified:
        phone = issue.conversation.phone if issue.conversation is not None else "unknown"
        body += f"\n\nUnverified: reported from {phone}, a number with no tenancy at this property. Check who it is."
    whatsapp = f"New repair {subject}" + (
        f"\nSeen in the photos: {issue.photo_findings[:300]}" if issue.photo_findings else ""
    )
    landlord_tell(organization=issue.organization, subject=subject, body=body, whatsapp=whatsapp)


class IssueLinkError(Exception):
    """The issue has no number to link (no conversation and no tenant)."""


@dataclass(frozen=True)
class IssueNumberLink:
    phone: str
    # None when the issue was not unverified: nothing was linked.
    link: PhoneLink | None
    # References of the issues that stopped being unverified now.
    verified: list[str]

    @property
    def changed(self) -> bool:
        return bool(self.verified) or (self.link is not None and self.link.changed)


def issue_number_link(*, issue: Issue, actor: Any, name: str = "") -> IssueNumberLink:
    """The landlord's one click on an unverified issue: the number it came from
    becomes a tenant with a current tenancy at the issue's property
    (``properties.linking``), the conversation with that number knows its
    tenant (its next issues are not unverified), and this issue and the
    number's other open issues at that property stop being unverified, each
    with a line in its history naming who linked it. An issue that is not
    unverified (never was, or was linked already) changes nothing, so a second
    click records nothing. The caller checks that ``actor`` may change ``issue``."""
    with transaction.atomic():
        issue = (
            Issue.objects.select_for_update(of=("self",), no_key=True)
            .select_related("conversation", "tenant", "property")
            .get(pk=issue.pk)
        )
        # A retired conversation's number is someone else's now: never the one to link.
        reported_from = issue.conversation
        phone = reported_from.phone if reported_from is not None and reported_from.retired_at is None else ""
        phone = phone or (issue.tenant.phone if issue.tenant is not None else "")
        if not issue.tenant_unverified:
            return IssueNumberLink(phone=phone, link=None, verified=[])
        if not phone:
            raise IssueLinkError(
                f"{issue.reference} has no phone number to link: it came from no conversation, "
                "or from a number that is no longer the reporter's."
            )
        number = Conversation.objects.filter(
            organization_id=issue.organization_id, phone=phone, retired_at__isnull=True
        )
        list(number.select_for_update().values_list("pk"))  # before the tenant, as the webhook and the turn lock
        link = tenancy_link_phone(property=issue.property, phone=phone, name=name)
        number.exclude(tenant=link.tenant).update(tenant=link.tenant, updated_at=timezone.now())
        # A retired conversation from the number was someone else's when it was live.
        from_number = Q(conversation__phone=link.tenant.phone, conversation__retired_at__isnull=True) | Q(
            tenant=link.tenant
        )
        flagged = list(
            Issue.objects.select_for_update(of=("self",), no_key=True)
            .filter(from_number, property=issue.property, tenant_unverified=True)
            .filter(Q(status__in=Issue.OPEN_STATUSES) | Q(pk=issue.pk))
            .order_by("pk")
        )
        who = (actor.get_username() if actor is not None else "") or "the landlord"
        for each in flagged:
            Issue.objects.filter(pk=each.pk).update(
                tenant_unverified=False, tenant=each.tenant or link.tenant, updated_at=timezone.now()
            )
            IssueUpdate.objects.create(
                issue=each,
                author=IssueUpdate.Author.LANDLORD,
                user=actor if actor is not None and actor.pk else None,
                body=f"Number {link.tenant.phone} linked by {who} to {link.tenant.name}, a tenant at "
                f"{issue.property.code} since {link.tenancy.start_date:%d %b %Y}: no longer unverified.",
            )
    verified = [each.reference for each in flagged]
    logger.info(
        "number %s linked to %s by %s: tenant %s%s, tenancy %s%s, verified %s",
        phone_mask(link.tenant.phone),
        issue.property.code,
        who,
        link.tenant.pk,
        " (new)" if link.tenant_created else "",
        link.tenancy.pk,
        " (new)" if link.tenancy_created else "",
        ", ".join(verified) or "none",
    )
    return IssueNumberLink(phone=link.tenant.phone, link=link, verified=verified)
