"""Reads of issues that the admin and the API share."""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery

from issues.models import Issue, IssueClock, IssuePhoto
from properties.scoping import queryset_for_organizations_or_all


def issue_list(*, organization_ids: Collection[int] | None) -> QuerySet[Issue]:
    """Issues of ``organization_ids`` (every organization when None) with their
    property, tenant, photos (oldest first, each with its media) and deadline
    clocks loaded, and ``next_due``: when the first unmet clock runs out."""
    queryset = (
        Issue.objects.select_related("property", "tenant")
        .prefetch_related(
            Prefetch("photos", queryset=IssuePhoto.objects.select_related("media").order_by("created_at", "pk")),
            Prefetch("clocks", queryset=IssueClock.objects.order_by("due_at", "pk")),
        )
        .annotate(next_due=next_due())
    )
    return queryset_for_organizations_or_all(queryset, organization_ids)


def next_due() -> Subquery:
    """When the issue's first unmet clock runs out (None: no clock running)."""
    running = IssueClock.objects.filter(issue=OuterRef("pk"), met_at__isnull=True).order_by("due_at")
    return Subquery(running.values("due_at")[:1])
