"""The database itself enforces what the product relies on."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from conversations.models import Conversation, Message
from properties.models import WhatsAppNumber
from properties.tests.factories import OrganizationFactory, TenantFactory

pytestmark = pytest.mark.django_db


def _extension_versions() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extname, extversion FROM pg_extension")
        return dict(cursor.fetchall())


def test_migrations_install_pgvector_and_pg_trgm():
    versions = _extension_versions()
    assert "pg_trgm" in versions
    major, minor = (int(part) for part in versions["vector"].split(".")[:2])
    assert (major, minor) >= (0, 8)


@pytest.mark.parametrize(
    ("column", "value"),
    [("identity_status", "verified"), ("gathering_state", "done")],
)
def test_database_rejects_unknown_conversation_state(column, value):
    organization = OrganizationFactory()
    with (
        pytest.raises(IntegrityError, match=r"conversation_.*_valid"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            f"INSERT INTO conversations_conversation (organization_id, whatsapp_id, phone, {column},"  # noqa: S608
            " emergency_category, bot_paused, escalation_reason, created_at, updated_at)"
            " VALUES (%s, 'whatsapp:+447700900001', '+447700900001', %s, '', false, '', now(), now())",
            [organization.pk, value],
        )


def test_state_columns_default_in_the_database():
    organization = OrganizationFactory()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO conversations_conversation (organization_id, whatsapp_id, phone,"
            " emergency_category, bot_paused, escalation_reason, created_at, updated_at)"
            " VALUES (%s, 'whatsapp:+447700900002', '+447700900002', '', false, '', now(), now()) RETURNING id",
            [organization.pk],
        )
        (pk,) = cursor.fetchone()
    conversation = Conversation.objects.get(pk=pk)
    assert (conversation.identity_status, conversation.gathering_state) == ("unidentified", "idle")


def test_second_message_with_same_provider_sid_is_rejected():
    Message.objects.create(direction="inbound", author="tenant", status="received", provider_sid="SM123")
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(direction="inbound", author="tenant", status="received", provider_sid="SM123")


def test_tenant_phone_must_be_e164_and_unique_per_organization():
    tenant = TenantFactory(phone="+447700900999")
    with pytest.raises(IntegrityError), transaction.atomic():
        TenantFactory(organization=tenant.organization, phone="+447700900999")
    with pytest.raises(IntegrityError), transaction.atomic():
        TenantFactory(phone="07700 900999")
    TenantFactory(phone="+447700900999")  # same number, another organization: fine


@pytest.mark.parametrize("number", ["whatsapp:+447700900000", "07700900000", "+44 7700 900000"])
def test_a_whatsapp_number_that_could_route_nothing_is_refused(number):
    organization = OrganizationFactory()
    rejected = WhatsAppNumber(organization=organization, number=number)
    with pytest.raises(ValidationError, match="international format with the country code"):
        rejected.full_clean()  # what the admin form runs: a clear error, not a 500
    with pytest.raises(IntegrityError, match="whatsapp_number_e164"), transaction.atomic():
        rejected.save()
    WhatsAppNumber.objects.create(organization=organization, number="+447700900000")


def test_the_migration_mends_stored_numbers_before_adding_the_check():
    from importlib import import_module

    from django.apps import apps

    migration = import_module("properties.migrations.0003_whatsapp_number_e164")
    organization = OrganizationFactory()
    with connection.cursor() as cursor:  # rows as the old code could store them, past today's check
        cursor.execute("ALTER TABLE properties_whatsappnumber DROP CONSTRAINT whatsapp_number_e164")
        cursor.execute(
            "INSERT INTO properties_whatsappnumber (organization_id, number) VALUES (%s, 'whatsapp:+44 7700 900001')",
            [organization.pk],
        )
    migration.numbers_normalise(apps, None)
    assert WhatsAppNumber.objects.get(organization=organization).number == "+447700900001"

    WhatsAppNumber.objects.filter(organization=organization).update(number="07700900001")
    with pytest.raises(RuntimeError, match="07700900001"):
        migration.numbers_normalise(apps, None)
