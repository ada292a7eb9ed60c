"""Linking a phone number to a home: what the landlord's one click does when
a number with no tenancy reported a repair at one of their properties.

A letting agent who confirms that a new number belongs at a home expects that
number to be recognised from then on, and nothing else to change. So the
number becomes a tenant of its own (found by phone in the organization, or
created) with a current tenancy at the property, beside whoever already rents
it. The existing tenant's record is never rewritten: overwriting their phone
would send their repair updates to the new number on one click. When the new
number is in fact the same person on a new phone, the landlord edits that
tenant's phone on the Tenants page instead.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from properties.models import Property, Tenancy, Tenant
from properties.services import phone_normalize

# The name a number gets until the landlord gives it one (the model reads it
# as the tenant's name, so it must not read like one).
UNNAMED = "Household member ({phone})"


@dataclass(frozen=True)
class PhoneLink:
    tenant: Tenant
    tenancy: Tenancy
    tenant_created: bool
    tenancy_created: bool

    @property
    def changed(self) -> bool:
        return self.tenant_created or self.tenancy_created


def tenancy_link_phone(*, property: Property, phone: str, name: str = "", on: datetime.date | None = None) -> PhoneLink:
    """The tenant with ``phone`` in the property's organization (created, named
    ``name`` or ``UNNAMED``, when there is none) and their current tenancy at
    ``property`` (one starting ``on``, today by default, when there is none).
    Idempotent: a second call finds both and changes nothing."""
    phone = phone_normalize(phone)
    on = on or timezone.localdate()
    with transaction.atomic():
        tenant, tenant_created = Tenant.objects.get_or_create(
            organization_id=property.organization_id,
            phone=phone,
            defaults={"name": (name.strip() or UNNAMED.format(phone=phone))[:200]},
        )
        # Serialise two clicks on the same number: the second sees the first's tenancy.
        Tenant.objects.select_for_update().filter(pk=tenant.pk).get()
        current = (
            Tenancy.objects.filter(tenant=tenant, property=property, start_date__lte=on)
            .filter(Q(end_date__isnull=True) | Q(end_date__gte=on))
            .order_by("-start_date")
            .first()
        )
        if current is not None:
            return PhoneLink(tenant=tenant, tenancy=current, tenant_created=tenant_created, tenancy_created=False)
        # An ended tenancy that started today (unique start per tenant and property) runs again.
        tenancy, _ = Tenancy.objects.update_or_create(
            tenant=tenant, property=property, start_date=on, defaults={"end_date": None}
        )
        return PhoneLink(tenant=tenant, tenancy=tenancy, tenant_created=tenant_created, tenancy_created=True)
