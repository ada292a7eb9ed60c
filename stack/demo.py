"""The demo organization used by ``seed_demo``, ``make run`` and ``make demo``."""

from __future__ import annotations

import datetime
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction

from properties.models import Membership, Organization, Property, Tenancy, Tenant, WhatsAppNumber

DEMO_ORG_SLUG = "demo"
# Twilio's WhatsApp sandbox number: what a developer's sandbox posts as To.
DEMO_WHATSAPP_NUMBER = "+14155238886"
DEMO_LANDLORD_USERNAME = "landlord"
# Only `make demo` (run_stack --demo, seed_demo --fixed-password) uses this one;
# `make run` and plain seed_demo set a fresh random password and print it.
DEMO_LANDLORD_PASSWORD = "demo-landlord"  # noqa: S105 - development demo only
# The demo organization's knowledge documents (the boiler answer comes from here).
DEMO_DOCUMENTS_DIR = settings.BASE_DIR / "retrieval" / "demo_documents"

DEMO_PROPERTIES = [
    {"code": "FLAT-1", "address": "Flat 1, 12 Harbour Street, Leeds", "postcode": "LS1 4AB"},
    {"code": "HOUSE-7", "address": "7 Orchard Lane, Headingley, Leeds", "postcode": "LS6 3HN"},
]
# phone, name, property codes they currently rent
DEMO_TENANTS = [
    ("+447700900123", "Amira Khan", ["FLAT-1"]),
    ("+447700900456", "Tomasz Nowak", ["HOUSE-7"]),
    ("+447700900789", "Jo Carter", ["FLAT-1", "HOUSE-7"]),
    ("+447700900321", "Priya Shah", ["HOUSE-7"]),
]


def demo_password(*, fixed: bool) -> str:
    """The demo landlord's password for this run: the well-known one for the
    demo, otherwise a random one nobody could guess from the README."""
    return DEMO_LANDLORD_PASSWORD if fixed else secrets.token_urlsafe(12)


@transaction.atomic
def demo_seed(*, landlord_password: str) -> Organization:
    """Create the demo organization, its properties, tenants, tenancies and a
    landlord login whose password becomes ``landlord_password``. Idempotent:
    running it again changes no row but that password."""
    organization, _ = Organization.objects.update_or_create(
        slug=DEMO_ORG_SLUG,
        defaults={
            "name": "Demo Lettings",
            "country": "GB",
            "timezone": "Europe/London",
            "notification_email": "landlord@example.com",
            "emergency_contact_name": "Demo Lettings out of hours",
            "emergency_contact_email": "emergency@example.com",
        },
    )
    WhatsAppNumber.objects.get_or_create(number=DEMO_WHATSAPP_NUMBER, defaults={"organization": organization})
    properties = {}
    for spec in DEMO_PROPERTIES:
        properties[spec["code"]], _ = Property.objects.update_or_create(
            organization=organization, code=spec["code"], defaults=spec
        )
    start = datetime.date(2026, 1, 1)
    for phone, name, codes in DEMO_TENANTS:
        tenant, _ = Tenant.objects.update_or_create(organization=organization, phone=phone, defaults={"name": name})
        for code in codes:
            Tenancy.objects.get_or_create(tenant=tenant, property=properties[code], start_date=start)
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(
        username=DEMO_LANDLORD_USERNAME, defaults={"is_staff": True, "email": "landlord@example.com"}
    )
    user.set_password(landlord_password)
    user.save(update_fields=["password"])
    Membership.objects.get_or_create(user=user, organization=organization, defaults={"role": Membership.Role.OWNER})
    return organization


def demo_prepare(*, landlord_password: str, stdout=None) -> None:
    """What ``make run`` and ``make demo`` load before the stack starts: the demo
    organization (its landlord's password set to ``landlord_password``) and its
    knowledge documents, embedded now (unchanged files are skipped on the next run)."""
    call_command("seed_demo", password=landlord_password, stdout=stdout)
    call_command("ingest_documents", str(DEMO_DOCUMENTS_DIR), org=DEMO_ORG_SLUG, stdout=stdout)
