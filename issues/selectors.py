"""Reads of issues that the admin and the API share."""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Prefetch, QuerySet

from issues.models import Issue, IssuePhoto
from properties.scoping import queryset_for_organizations_or_all


def issue_list(*, organization_ids: Collection[int] | None) -> QuerySet[Issue]:
    """Issues of ``organization_ids`` (every organization when None) with their
    property, tenant and photos (oldest first, each with its media) loaded."""
    queryset = Issue.objects.select_related("property", "tenant").prefetch_related(
        Prefetch("photos", queryset=IssuePhoto.objects.select_related("media").order_by("created_at", "pk"))
    )
    return queryset_for_organizations_or_all(queryset, organization_ids)
