"""A tenant at a home, and a signed webhook they can talk through: the fixtures
the engine, emergency and issue tests share (loaded as a pytest plugin by the
root conftest)."""

from __future__ import annotations

import datetime

import pytest

from conversations.models import Conversation, Message
from llm.scripted import scripted_clear, scripted_queue
from orchestration.pipeline import inbound_process
from properties.tests.factories import (
    OrganizationFactory,
    PropertyFactory,
    TenancyFactory,
    TenantFactory,
    WhatsAppNumberFactory,
)

ORG_NUMBER = "+14155550001"
PHONE = "+447700900123"


@pytest.fixture
def home(db):
    organization = OrganizationFactory(name="Harbour Lettings", notification_email="office@example.com")
    WhatsAppNumberFactory(organization=organization, number=ORG_NUMBER)
    flat = PropertyFactory(
        organization=organization, code="FLAT-1", address="Flat 1, 12 Harbour Street, Leeds", postcode="LS1 4AB"
    )
    tenant = TenantFactory(organization=organization, phone=PHONE, name="Amira Khan")
    TenancyFactory(tenant=tenant, property=flat, start_date=datetime.date(2026, 1, 1))
    return organization


@pytest.fixture
def tenant_says(post_inbound, settings):
    """Post a signed webhook for the tenant, run the processing the worker
    would run, and return the replies that turn queued."""
    settings.INBOUND_COALESCE_SECONDS = 0
    phones = set()

    def say(
        text: str,
        *,
        phone: str = PHONE,
        media: list[tuple[str, str]] | None = None,
        model=None,
        extra: dict[str, str] | None = None,
    ):
        phones.add(phone)
        if model is not None:
            scripted_queue(phone=phone, calls=model)
        before = max(Message.objects.filter(direction="outbound").values_list("id", flat=True), default=0)
        response = post_inbound(phone=phone, to=ORG_NUMBER, body=text, media=media, extra=extra)
        assert response.status_code == 200
        message = Message.objects.get(provider_sid=response.params["MessageSid"])
        inbound_process(message_id=message.pk)
        return list(
            Message.objects.filter(direction="outbound", id__gt=before, conversation=message.conversation)
            .order_by("id")
            .values_list("body", flat=True)
        )

    yield say
    for phone in phones:
        scripted_clear(phone=phone)


def conversation_for(phone: str = PHONE) -> Conversation:
    return Conversation.objects.get(phone=phone, retired_at__isnull=True)  # the live one


def call(tool: str, **tool_input) -> dict:
    return {"tool": tool, "input": tool_input}


def issue_call(**overrides) -> dict:
    tool_input = {
        "title": "Leaking kitchen tap",
        "description": "The cold tap in the kitchen drips constantly since Monday.",
        "category": "plumbing",
        "urgency": "routine",
        "location": "kitchen sink",
        "photo": "provided",
        "message": "Thanks, I've logged this with your landlord.",
    }
    tool_input.update(overrides)
    return call("create_issue", **tool_input)


@pytest.fixture
def emergency_defaults(transactional_db):
    """Transactional tests flush the seeded rules; put them back."""
    from emergencies.defaults import defaults_seed
    from emergencies.models import EmergencyRule, SafetyMessage

    defaults_seed(EmergencyRule, SafetyMessage)
