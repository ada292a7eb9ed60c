"""What the landlord's first screen shows: the agency's day.

Each list is the organization's own (``organization_ids``; None for a
superuser: every organization), capped at ``ITEMS_SHOWN`` with the full count
beside it, and each item links to where it is handled."""

from __future__ import annotations

import datetime
from collections.abc import Collection
from dataclasses import dataclass, field

from django.db.models import Exists, F, OuterRef, QuerySet
from django.urls import reverse
from django.utils import timezone

from conversations.models import Conversation
from emergencies.models import EmergencyAlert
from issues.deadlines import duration_text
from issues.models import Issue, Job
from issues.selectors import DUE_SOON_HOURS, issues_by_deadline
from properties.models import Organization
from properties.scoping import queryset_for_organizations_or_all
from properties.working_time import zone_get

ITEMS_SHOWN = 10
ALERT_HOURS = 48  # an alert with no issue yet shows this long


@dataclass
class Item:
    text: str
    url: str
    note: str = ""
    urgent: bool = False


@dataclass
class Section:
    title: str
    empty: str
    items: list[Item] = field(default_factory=list)
    count: int = 0


def _section(title: str, empty: str, queryset: QuerySet, item) -> Section:
    rows = list(queryset[:ITEMS_SHOWN])
    count = len(rows) if len(rows) < ITEMS_SHOWN else queryset.count()
    return Section(title=title, empty=empty, items=[item(row) for row in rows], count=count)


def _issue_url(issue_id: int) -> str:
    return reverse("admin:issues_issue_change", args=[issue_id])


def agency_day(*, organization_ids: Collection[int] | None, now: datetime.datetime | None = None) -> list[Section]:
    now = now or timezone.now()
    issues = queryset_for_organizations_or_all(
        Issue.objects.select_related("property", "organization"), organization_ids
    )
    open_issues = issues.filter(status__in=Issue.OPEN_STATUSES)

    emergencies = _section(
        "Open emergencies",
        "No open emergency.",
        open_issues.filter(urgency=Issue.Urgency.EMERGENCY).order_by("created_at"),
        lambda i: Item(
            f"{i.reference} {i.title}",
            _issue_url(i.pk),
            f"{i.property.code}, {duration_text(now - i.created_at)} ago",
            True,
        ),
    )
    unfiled = queryset_for_organizations_or_all(
        EmergencyAlert.objects.filter(
            issue__isnull=True,
            created_at__gte=now - datetime.timedelta(hours=ALERT_HOURS),
            status__in=[
                EmergencyAlert.Status.PENDING,
                EmergencyAlert.Status.CONFIRMED,
                EmergencyAlert.Status.VALIDATION_FAILED,
            ],
        )
        .select_related("conversation")
        .order_by("created_at"),
        organization_ids,
    )
    emergencies.count += unfiled.count()
    for alert in unfiled[: max(0, ITEMS_SHOWN - len(emergencies.items))]:
        emergencies.items.append(
            Item(
                f"{alert.get_category_display()} alert from {alert.conversation.phone} (no issue yet)",
                reverse("admin:conversations_conversation_change", args=[alert.conversation_id]),
                f"{duration_text(now - alert.created_at)} ago",
                True,
            )
        )

    def clock_item(issue: Issue) -> Item:
        due: datetime.datetime = issue.next_due  # type: ignore[attr-defined]  # issues_by_deadline's annotation
        late = due <= now
        when = f"overdue {duration_text(now - due)}" if late else f"due in {duration_text(due - now)}"
        return Item(f"{issue.reference} {issue.title}", _issue_url(issue.pk), when, late)

    clocks = _section(
        "Deadlines due or overdue",
        f"No deadline runs out in the next {DUE_SOON_HOURS} hours.",
        issues_by_deadline(issues, "running")
        .filter(next_due__lte=now + datetime.timedelta(hours=DUE_SOON_HOURS))
        .order_by("next_due"),
        clock_item,
    )

    waiting = _section(
        "Conversations waiting for a person",
        "Nobody is waiting for a person.",
        queryset_for_organizations_or_all(
            Conversation.objects.filter(bot_paused=True, retired_at__isnull=True).order_by(
                F("last_inbound_at").desc(nulls_last=True)
            ),
            organization_ids,
        ),
        lambda c: Item(
            f"{c.profile_name or c.phone}",
            reverse("admin:conversations_conversation_change", args=[c.pk]),
            c.escalation_reason[:120] or "taken over",
        ),
    )

    live = Job.objects.filter(issue=OuterRef("pk"), state__in=[Job.State.OFFERED, Job.State.ACCEPTED])
    passed = Job.objects.filter(issue=OuterRef("pk"), state__in=[Job.State.DECLINED, Job.State.EXPIRED])
    offered = Job.objects.filter(issue=OuterRef("pk"), state=Job.State.OFFERED)
    contractor = _section(
        "Issues waiting for a contractor",
        "No issue is waiting for a contractor.",
        open_issues.annotate(offered=Exists(offered))
        .filter(Exists(offered) | (Exists(passed) & ~Exists(live)))
        .order_by("offered", "created_at"),  # those that need someone to choose first
        lambda i: Item(
            f"{i.reference} {i.title}",
            _issue_url(i.pk),
            "offer awaiting an answer" if i.offered else "declined or lapsed: choose another contractor",
            not i.offered,
        ),
    )

    zones = {o.timezone for o in _organizations(organization_ids)}
    todays = {now.astimezone(zone_get(z)).date() for z in zones} or {now.date()}
    booked = [
        i
        for i in open_issues.filter(status=Issue.Status.SCHEDULED, scheduled_for__in=todays).order_by("reference")[
            : ITEMS_SHOWN * 3
        ]
        if i.scheduled_for == now.astimezone(zone_get(i.organization.timezone)).date()
    ]
    appointments = Section(
        title="Today's appointments",
        empty="No repair is booked for today.",
        items=[Item(f"{i.reference} {i.title}", _issue_url(i.pk), i.property.code) for i in booked[:ITEMS_SHOWN]],
        count=len(booked),  # up to 30: the page is a glance, the issue list has the rest
    )
    return [emergencies, clocks, waiting, contractor, appointments]


def _organizations(organization_ids: Collection[int] | None) -> QuerySet[Organization]:
    return (
        Organization.objects.all() if organization_ids is None else Organization.objects.filter(pk__in=organization_ids)
    )
