"""Writes to the landlord's records of properties, tenants and tenancies (used
by the API; the admin's forms do the same checks through model validation).

Each service validates the row with the model's own rules (unique codes and
phone numbers, E.164, tenancy dates) and raises ``ValidationError`` with
field messages instead of letting the database refuse it.
"""

from __future__ import annotations

import csv
import datetime
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import models, transaction

from properties.location import coordinates_clean
from properties.models import E164_PATTERN, Contractor, Organization, Property, Tenancy, Tenant

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


def property_create(
    *,
    organization: Organization,
    code: str,
    address: str,
    postcode: str = "",
    latitude: object = None,
    longitude: object = None,
    access_notes: str = "",
) -> Property:
    lat, lon = coordinates_clean(latitude, longitude)
    return _save(
        Property(
            organization=organization,
            code=code.strip(),
            address=address.strip(),
            postcode=postcode,
            latitude=lat,
            longitude=lon,
            access_notes=access_notes.strip(),
        )
    )


def property_update(*, property: Property, **changes: object) -> Property:
    """Change a property's code, address, postcode or coordinates. Coordinates
    are checked as a pair: one given alone is checked with the other's stored value."""
    for field in changes.keys() - {"code", "address", "postcode", "latitude", "longitude", "access_notes"}:
        raise ValidationError({field: "This field cannot be changed."})
    if "latitude" in changes or "longitude" in changes:
        changes["latitude"], changes["longitude"] = coordinates_clean(
            changes.get("latitude", property.latitude), changes.get("longitude", property.longitude)
        )
    for field, value in changes.items():
        setattr(property, field, value.strip() if isinstance(value, str) else value)
    return _save(property)


class CoordinatesImportError(Exception):
    """A coordinates file with mistakes: ``errors`` is [(line, message)], and nothing was changed."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        super().__init__(f"{len(errors)} line(s) with errors")
        self.errors = errors


COORDINATE_COLUMNS = ("code", "latitude", "longitude")


def property_coordinates_import(*, organization: Organization, lines: Iterable[str]) -> int:
    """Set coordinates from CSV text with the header ``code,latitude,longitude``
    (extra columns are ignored; an empty pair clears a property's coordinates).
    Every line is checked first: one unknown code, bad number or repeated code
    and ``CoordinatesImportError`` lists them all with their line numbers and
    nothing is saved. Returns how many properties were updated."""
    reader = csv.DictReader(lines)
    header = [name.strip().lower() for name in reader.fieldnames or []]
    missing = [name for name in COORDINATE_COLUMNS if name not in header]
    if missing:
        raise CoordinatesImportError([(1, f"the header must name {', '.join(COORDINATE_COLUMNS)}; missing {missing}")])
    reader.fieldnames = header
    properties = {p.code: p for p in Property.objects.filter(organization=organization)}
    errors: list[tuple[int, str]] = []
    updates: dict[str, tuple[Decimal | None, Decimal | None]] = {}
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        code = (row.get("code") or "").strip()
        if not code:
            errors.append((line, "no property code"))
            continue
        if code not in properties:
            errors.append((line, f"no property with code {code!r} in {organization.name}"))
            continue
        if code in seen:
            errors.append((line, f"{code!r} is already on line {seen[code]}"))
            continue
        seen[code] = line
        try:
            updates[code] = coordinates_clean(row.get("latitude"), row.get("longitude"))
        except ValidationError as error:
            errors.append((line, "; ".join(m for messages in error.message_dict.values() for m in messages)))
    if errors:
        raise CoordinatesImportError(errors)
    with transaction.atomic():
        for code, (latitude, longitude) in updates.items():
            Property.objects.filter(pk=properties[code].pk).update(latitude=latitude, longitude=longitude)
    return len(updates)


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


# --- Contractors ----------------------------------------------------------------

CONTRACTOR_FIELDS = frozenset(
    {
        "name",
        "trades",
        "areas",
        "whatsapp",
        "email",
        "callout_limit",
        "working_days",
        "work_starts",
        "work_ends",
        "active",
    }
)


def areas_clean(areas: list[str]) -> list[str]:
    """Postcode districts as written on a letter: 'ls6 ' -> 'LS6', no repeats."""
    return list(dict.fromkeys(a.strip().upper() for a in areas if a.strip()))


def whatsapp_clean(whatsapp: str) -> str:
    """A contractor's number in E.164, or '' for none."""
    if not whatsapp.strip():
        return ""
    try:
        return phone_normalize(whatsapp)
    except ValidationError as error:
        raise ValidationError({"whatsapp": error.message_dict["phone"]}) from None


def _contractor_clean(fields: dict[str, Any]) -> dict[str, Any]:
    if "areas" in fields:
        fields["areas"] = areas_clean(fields["areas"])
    if "whatsapp" in fields:
        fields["whatsapp"] = whatsapp_clean(fields["whatsapp"])
    return fields


def contractor_create(*, organization: Organization, name: str, **fields: Any) -> Contractor:
    for field in fields.keys() - CONTRACTOR_FIELDS:
        raise ValidationError({field: "Unknown field."})
    return _save(Contractor(organization=organization, name=name.strip(), **_contractor_clean(fields)))


def contractor_update(*, contractor: Contractor, **changes: Any) -> Contractor:
    for field in changes.keys() - CONTRACTOR_FIELDS:
        raise ValidationError({field: "This field cannot be changed."})
    for name, value in _contractor_clean(changes).items():
        setattr(contractor, name, value)
    return _save(contractor)
