"""Reads on the landlord's world that several layers share: the admin and the
API read properties, tenants and tenancies through here."""

from __future__ import annotations

import datetime
from collections.abc import Collection

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from properties.models import Contractor, Property, Tenancy, Tenant
from properties.scoping import queryset_for_organizations_or_all

# Issue statuses that still need work. properties sits below issues and names
# them rather than importing them; a test keeps them equal to Issue.OPEN_STATUSES.
OPEN_ISSUE_STATUSES = ("open", "acknowledged", "scheduled")


def property_list(*, organization_ids: Collection[int] | None) -> QuerySet[Property]:
    """Properties of ``organization_ids`` (every organization when None) by
    code, each with ``open_issue_count``. The count groups by property, which
    drops Meta.ordering, hence the explicit order."""
    queryset = Property.objects.annotate(
        open_issue_count=Count("issues", filter=Q(issues__status__in=OPEN_ISSUE_STATUSES))
    ).order_by("code", "id")
    return queryset_for_organizations_or_all(queryset, organization_ids)


def tenant_list(*, organization_ids: Collection[int] | None) -> QuerySet[Tenant]:
    """Tenants of ``organization_ids`` (every organization when None) by name,
    with their tenancies and those tenancies' properties loaded."""
    queryset = Tenant.objects.prefetch_related("tenancies__property").order_by("name", "id")
    return queryset_for_organizations_or_all(queryset, organization_ids)


def tenancy_list(*, organization_ids: Collection[int] | None) -> QuerySet[Tenancy]:
    """Tenancies of ``organization_ids`` (every organization when None), the
    latest start first, with tenant and property loaded."""
    queryset = Tenancy.objects.select_related("tenant", "property").order_by("-start_date", "id")
    return queryset_for_organizations_or_all(queryset, organization_ids)


def tenancies_current(*, tenant: Tenant, on: datetime.date | None = None) -> list[Tenancy]:
    """The tenant's tenancies running on ``on`` (today), by property code."""
    on = on or timezone.localdate()
    return list(
        Tenancy.objects.filter(tenant=tenant, start_date__lte=on)
        .filter(Q(end_date__isnull=True) | Q(end_date__gte=on))
        .select_related("property")
        .order_by("property__code")
    )


def contractor_list(*, organization_ids: Collection[int] | None) -> QuerySet[Contractor]:
    """Contractors of ``organization_ids`` (every organization when None) by name."""
    return queryset_for_organizations_or_all(Contractor.objects.order_by("name", "id"), organization_ids)
