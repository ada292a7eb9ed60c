"""Reads on the landlord's world that several layers share."""

from __future__ import annotations

import datetime

from django.db.models import Q
from django.utils import timezone

from properties.models import Tenancy, Tenant


def tenancies_current(*, tenant: Tenant, on: datetime.date | None = None) -> list[Tenancy]:
    """The tenant's tenancies running on ``on`` (today), by property code."""
    on = on or timezone.localdate()
    return list(
        Tenancy.objects.filter(tenant=tenant, start_date__lte=on)
        .filter(Q(end_date__isnull=True) | Q(end_date__gte=on))
        .select_related("property")
        .order_by("property__code")
    )
