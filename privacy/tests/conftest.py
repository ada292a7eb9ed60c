"""Alice's and Bob's agencies (the isolation persona), with one of Alice's
tenants whose words are in every store the product has: the erasure and
export tests look for those words afterwards. A second tenant of Alice's
("the neighbour") and Bob's world must never be touched or exported."""

from __future__ import annotations

import datetime

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from api.tests.conftest import token_client
from conversations.models import Media, Message
from evals.models import EvalRun, JudgeVerdict
from issues.models import IssueUpdate
from properties.models import Membership
from properties.tests.factories import MembershipFactory, TenancyFactory, TenantFactory, UserFactory
from properties.tests.persona import (
    ConversationFactory,
    MediaFactory,
    MessageFactory,
    TurnFactory,
    alice_and_bob,
    png_bytes,
)

# Words only Alice's tenant ever said (one per store, so a miss names the store).
SECRET = "zanzibarquokka"


def secret(where: str) -> str:
    return f"{SECRET}-{where}"


@pytest.fixture(autouse=True)
def _no_classifier(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


@pytest.fixture
def worlds(db):
    alice, bob = alice_and_bob()
    tenant, conversation, routine = alice.tenant, alice.conversation, alice.routine
    tenant.email = "zanzibar@example.com"
    tenant.whatsapp_profile_name = secret("profile")
    tenant.save()
    conversation.profile_name = secret("convprofile")
    conversation.escalation_reason = secret("escalation")
    conversation.save()
    said = MessageFactory.create(
        conversation=conversation,
        body=secret("body"),
        raw_payload={"Body": secret("payload")},
        kind="location",
        latitude="53.800000",
        longitude="-1.550000",
        location_name=secret("pin"),
        button_text=secret("button"),
    )
    voice = MediaFactory.create(
        message=said,
        content_type="audio/ogg",
        transcription_state="done",
        transcript=secret("transcript"),
        file=ContentFile(b"OggS" + secret("audio").encode(), name="voice.ogg"),
    )
    MessageFactory.create(
        conversation=conversation,
        direction="outbound",
        author="assistant",
        status="sent",
        body=secret("reply"),
        template_variables={"1": secret("template")},
    )
    routine.title = secret("title")
    routine.description = secret("description")
    routine.photo_findings = secret("findings")
    routine.save()
    IssueUpdate.objects.create(issue=routine, author="landlord", body=secret("note"))
    alice.alert.validation_reasoning = secret("reasoning")
    alice.alert.save()
    TurnFactory.create(
        conversation=conversation,
        tool_calls=[{"name": "create_issue", "input": {"title": secret("toolinput")}, "result": secret("result")}],
        retrieval_hits=[{"document": "handbook", "heading": secret("hit")}],
        error=secret("turnerror"),
    )
    # The landlord's own WhatsApp alert about the issue (no conversation).
    Message.objects.create(
        organization=alice.organization,
        direction="outbound",
        author="system",
        status="sent",
        body=f"New repair {routine.reference}: {secret('alert')}",
        to_address="whatsapp:+447700910000",
    )
    run = EvalRun.objects.create(kind="judge")
    JudgeVerdict.objects.create(
        run=run, conversation=conversation, question="q", failed=True, reasoning=secret("judge")
    )
    # Alice's other tenant: same agency, never part of this tenant's export or erasure.
    neighbour = TenantFactory.create(organization=alice.organization, name="Neighbour", phone="+447700919999")
    TenancyFactory.create(tenant=neighbour, property=alice.property, start_date=datetime.date(2026, 1, 1))
    neighbour_conversation = ConversationFactory.create(
        organization=alice.organization, phone=neighbour.phone, tenant=neighbour, property=alice.property
    )
    neighbour_message = MessageFactory.create(conversation=neighbour_conversation, body="neighbour-words boiler")
    MediaFactory.create(message=neighbour_message, file=ContentFile(png_bytes((1, 2, 3)), name="n.png"))
    alice.objects.update(
        said=said,
        voice=voice,
        neighbour=neighbour,
        neighbour_conversation=neighbour_conversation,
        neighbour_message=neighbour_message,
    )
    return alice, bob


@pytest.fixture
def alice_api(worlds):
    return token_client(worlds[0].user)


@pytest.fixture
def bob_api(worlds):
    return token_client(worlds[1].user)


@pytest.fixture
def alice_staff(worlds):
    """A member of Alice's agency with the staff role (may look, not decide)."""
    user = UserFactory.create(username="alice-staff")
    MembershipFactory.create(user=user, organization=worlds[0].organization, role=Membership.Role.STAFF)
    return user


@pytest.fixture
def alice_manager(worlds):
    user = UserFactory.create(username="alice-manager")
    MembershipFactory.create(user=user, organization=worlds[0].organization, role=Membership.Role.MANAGER)
    return user


def media_paths(*media: Media) -> list[str]:
    return [m.file.path for m in media]


def now() -> datetime.datetime:
    return timezone.now()
