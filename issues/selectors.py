"""Reads of issues that the admin and the API share."""

from __future__ import annotations

import datetime
from collections.abc import Collection
from typing import Any

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from django.utils import timezone

from conversations.models import Conversation
from issues.models import Issue, IssueClock, IssuePhoto
from properties.models import Contractor
from properties.scoping import queryset_for_organizations_or_all


def issue_list(*, organization_ids: Collection[int] | None) -> QuerySet[Issue]:
    """Issues of ``organization_ids`` (every organization when None) with their
    property, tenant, photos (oldest first, each with its media) and deadline
    clocks loaded. ``next_due`` (when the first unmet clock runs out) is
    annotated only where it is filtered or ordered by (``with_next_due``):
    PostgreSQL evaluates it for every row before a sort and a limit, about
    100 ms over 20 000 issues; a page reads it from the prefetched clocks
    (``first_due``)."""
    queryset = Issue.objects.select_related("property", "tenant").prefetch_related(
        Prefetch("photos", queryset=IssuePhoto.objects.select_related("media").order_by("created_at", "pk")),
        Prefetch("clocks", queryset=IssueClock.objects.order_by("due_at", "pk")),
    )
    return queryset_for_organizations_or_all(queryset, organization_ids)


def first_due(issue: Issue) -> datetime.datetime | None:
    """When the issue's first unmet clock runs out, from its prefetched clocks."""
    return min((c.due_at for c in issue.clocks.all() if c.met_at is None), default=None)


def with_next_due(queryset: QuerySet[Any]) -> QuerySet[Any]:
    return queryset.annotate(next_due=next_due())


def next_due() -> Subquery:
    """When the issue's first unmet clock runs out (None: no clock running)."""
    running = IssueClock.objects.filter(issue=OuterRef("pk"), met_at__isnull=True).order_by("due_at")
    return Subquery(running.values("due_at")[:1])


DUE_SOON_HOURS = 24  # "due soon": the list's amber badge and the deadline filter


def issues_by_deadline(queryset: QuerySet[Any], which: str) -> QuerySet[Any]:
    """``issue_list`` rows narrowed by their first unmet clock: ``overdue``,
    ``soon`` (within DUE_SOON_HOURS) or ``running`` (any); closed issues' clocks are stopped."""
    running = with_next_due(queryset).exclude(status=Issue.Status.CLOSED).filter(next_due__isnull=False)
    now = timezone.now()
    if which == "overdue":
        return running.filter(next_due__lte=now)
    if which == "soon":
        return running.filter(next_due__gt=now, next_due__lte=now + datetime.timedelta(hours=DUE_SOON_HOURS))
    return running


def tenant_conversation(issue: Issue) -> Conversation | None:
    """Where to write to the tenant about ``issue``: the conversation it came
    from, else (an issue entered by hand, or one whose conversation was
    retired when its number stopped being the tenant's) the organization's
    live conversation with the tenant's number, else None."""
    if issue.conversation is not None and issue.conversation.retired_at is None:
        return issue.conversation
    if issue.tenant is not None and issue.tenant.phone:
        return Conversation.objects.filter(
            organization_id=issue.organization_id, phone=issue.tenant.phone, retired_at__isnull=True
        ).first()
    return None


def contractor_conversation(contractor: Contractor) -> Conversation:
    """The organization's conversation with the contractor's number, created if new."""
    conversation, _ = Conversation.objects.get_or_create(
        organization_id=contractor.organization_id,
        phone=contractor.whatsapp,
        retired_at__isnull=True,
        defaults={"whatsapp_id": f"whatsapp:{contractor.whatsapp}"},
    )
    return conversation
