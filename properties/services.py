"""Writes to the landlord's records of properties, tenants and tenancies (used
by the API; the admin's forms do the same checks through model validation).

Each service validates the row with the model's own rules (unique codes and
phone numbers, E.164, tenancy dates) and raises ``ValidationError`` with
field messages instead of letting the database refuse it.
"""

from __future__ import annotations

import datetime
import re
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.db import models, transaction

from properties.models import E164_PATTERN, Organization, Property, Tenancy, Tenant

E164 = re.compile(E164_PATTERN)
ModelT = TypeVar("ModelT", bound=models.Model)


def phone_normalize(phone: str) -> str:
    """``phone`` in E.164 with spaces, dashes and brackets removed, or a
    ValidationError that says what format is expected."""
    cleaned = re.sub(r"[\s\-().]", "", phone or "")
    if not E164.match(cleaned):
        raise ValidationError({"phone": "Use the international format with the country code, e.g. +447700900123."})
    return cleaned


def _save(instance: ModelT) -> ModelT:
    instance.full_clean()
    with transaction.atomic():
        instance.save()
    return instance


def property_create(*, organization: Organization, code: str, address: str, postcode: str = "") -> Property:
    return _save(Property(organization=organization, code=code.strip(), address=address.strip(), postcode=postcode))


def property_update(*, property: Property, **changes: str) -> Property:
    for field in changes.keys() - {"code", "address", "postcode"}:
        raise ValidationError({field: "This field cannot be changed."})
    for field, value in changes.items():
        setattr(property, field, value.strip() if isinstance(value, str) else value)
    return _save(property)


def tenant_create(*, organization: Organization, name: str, phone: str, email: str = "") -> Tenant:
    return _save(Tenant(organization=organization, name=name.strip(), phone=phone_normalize(phone), email=email))


def tenant_update(*, tenant: Tenant, **changes: str) -> Tenant:
    for field in changes.keys() - {"name", "phone", "email"}:
        raise ValidationError({field: "This field cannot be changed."})
    if "phone" in changes:
        changes["phone"] = phone_normalize(changes["phone"])
    for field, value in changes.items():
        setattr(tenant, field, value.strip() if isinstance(value, str) else value)
    return _save(tenant)


def tenancy_create(
    *, tenant: Tenant, property: Property, start_date: datetime.date, end_date: datetime.date | None = None
) -> Tenancy:
    if tenant.organization_id != property.organization_id:
        raise ValidationError({"property": "The tenant and the property belong to different organizations."})
    _dates_check(start_date, end_date)
    return _save(Tenancy(tenant=tenant, property=property, start_date=start_date, end_date=end_date))


def tenancy_update(*, tenancy: Tenancy, **changes: datetime.date | None) -> Tenancy:
    for field in changes.keys() - {"start_date", "end_date"}:
        raise ValidationError({field: "This field cannot be changed."})
    for field, value in changes.items():
        setattr(tenancy, field, value)
    _dates_check(tenancy.start_date, tenancy.end_date)
    return _save(tenancy)


def _dates_check(start_date: datetime.date, end_date: datetime.date | None) -> None:
    if end_date is not None and end_date < start_date:
        raise ValidationError({"end_date": "The tenancy cannot end before it starts."})
