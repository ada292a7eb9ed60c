"""The isolation persona: two agencies, Alice's and Bob's, each with a landlord
login and one of everything a landlord can reach (issue with a photo,
conversation with a transcript and a turn trace, emergency alert, document
with chunks, own emergency rule and safety message, WhatsApp number).

Built with factory_boy factories so the same world serves the admin, API and
browser tests."""

from __future__ import annotations

import datetime
import struct
import zlib
from dataclasses import dataclass, field

import factory
from django.core.files.base import ContentFile
from django.utils import timezone

from conversations.models import Conversation, Media, Message
from emergencies.models import EmergencyAlert, EmergencyRule, SafetyMessage
from issues.deadlines import issue_clocks_sync
from issues.models import DeadlinePolicy, Issue, IssuePhoto, IssueUpdate, Job
from orchestration.models import Turn
from properties.models import Contractor, Membership, Organization
from properties.tests.factories import (
    IssueFactory,
    MembershipFactory,
    OrganizationFactory,
    PropertyFactory,
    TenancyFactory,
    TenantFactory,
    UserFactory,
    WhatsAppNumberFactory,
)
from retrieval.models import Chunk, Document

PASSWORD = "password"


def png_bytes(rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid 1x1 PNG (no image library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00" + bytes(rgb))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


class ConversationFactory(factory.django.DjangoModelFactory[Conversation]):
    class Meta:
        model = Conversation

    organization = factory.SubFactory(OrganizationFactory)
    phone = factory.Sequence(lambda n: f"+4477008{n:05d}")
    whatsapp_id = factory.LazyAttribute(lambda o: f"whatsapp:{o.phone}")
    identity_status = "confirmed"
    gathering_state = "issue_created"
    last_inbound_at = factory.LazyFunction(timezone.now)


class MessageFactory(factory.django.DjangoModelFactory[Message]):
    class Meta:
        model = Message

    conversation = factory.SubFactory(ConversationFactory)
    organization = factory.SelfAttribute("conversation.organization")
    direction = "inbound"
    author = "tenant"
    status = "processed"
    body = "The kitchen tap is dripping."
    provider_sid = factory.Sequence(lambda n: f"SM{n:032d}")


class MediaFactory(factory.django.DjangoModelFactory[Media]):
    class Meta:
        model = Media

    message = factory.SubFactory(MessageFactory)
    index = 0
    provider_url = factory.Sequence(lambda n: f"https://api.twilio.com/media/ME{n:030d}")
    content_type = "image/png"
    download_state = "downloaded"
    file = factory.LazyFunction(lambda: ContentFile(png_bytes(), name="photo.png"))


class TurnFactory(factory.django.DjangoModelFactory[Turn]):
    class Meta:
        model = Turn

    conversation = factory.SubFactory(ConversationFactory)
    backend = "scripted"
    model = "claude-haiku-4-5"
    outcome = "tool"
    tools_offered = ["ask_for_details", "ask_for_photo", "create_issue", "respond", "escalate"]
    tool_calls = factory.LazyFunction(
        lambda: [
            {
                "name": "create_issue",
                "input": {"title": "Dripping tap"},
                "is_error": True,
                "rejection": "identity is unidentified; confirm the property first",
            },
            {"name": "ask_for_details", "input": {"question": "Which room is it in?"}, "is_error": False},
        ]
    )
    gating_rejections = 1
    retrieval_hits = factory.LazyFunction(
        lambda: [
            {
                "chunk_id": 1,
                "document": "Tenant handbook",
                "heading": "Plumbing > Taps",
                "score": 0.031,
                "vector_rank": 1,
                "keyword_rank": 2,
                "answers": False,
                "answerability": 0.321,
            }
        ]
    )
    identity_before = "confirmed"
    identity_after = "confirmed"
    gathering_before = "idle"
    gathering_after = "gathering_details"
    input_tokens = 1234
    output_tokens = 56
    cost_usd = "0.004321"
    latency_total_ms = 900


@dataclass
class World:
    """One agency and everything its landlord can see."""

    organization: Organization
    user: object
    objects: dict[str, object] = field(default_factory=dict)

    def __getattr__(self, name):
        try:
            return self.__dict__["objects"][name]
        except KeyError:
            raise AttributeError(name) from None


def world_build(name: str, *, phone_prefix: str) -> World:
    organization = OrganizationFactory.create(name=f"{name} Lettings", slug=name.lower(), country="GB")
    user = UserFactory.create(username=name.lower())
    MembershipFactory.create(user=user, organization=organization, role=Membership.Role.OWNER)
    number = WhatsAppNumberFactory.create(organization=organization, number=f"{phone_prefix}0000")
    property = PropertyFactory.create(
        organization=organization, code=f"{name.upper()}-1", address=f"1 {name} Road, Leeds"
    )
    tenant = TenantFactory.create(organization=organization, name=f"{name}'s tenant", phone=f"{phone_prefix}1111")
    tenancy = TenancyFactory.create(tenant=tenant, property=property, start_date=datetime.date(2026, 1, 1))
    conversation = ConversationFactory.create(
        organization=organization,
        phone=tenant.phone,
        tenant=tenant,
        property=property,
        emergency_category="flooding",
    )
    inbound = MessageFactory.create(conversation=conversation, body=f"{name}: water coming through the ceiling!")
    media = MediaFactory.create(message=inbound)
    outbound = MessageFactory.create(
        conversation=conversation,
        direction="outbound",
        author="assistant",
        status="sent",
        body=f"{name}: turn off the water at the stopcock.",
    )
    turn = TurnFactory.create(conversation=conversation, message_ids=[inbound.pk])
    alert = EmergencyAlert.objects.create(
        organization=organization,
        conversation=conversation,
        message=inbound,
        category="flooding",
        matched_rules=["water coming through"],
        status=EmergencyAlert.Status.CONFIRMED,
        validation_reasoning="Active leak through a ceiling.",
    )
    Conversation.objects.filter(pk=conversation.pk).update(emergency_alerted_at=alert.created_at)
    emergency = IssueFactory.create(
        organization=organization,
        property=property,
        tenant=tenant,
        conversation=conversation,
        reference=f"{name.upper()[:3]}-0001",
        title=f"{name} ceiling leak",
        urgency=Issue.Urgency.EMERGENCY,
        category="plumbing",
        photo=Issue.Photo.PROVIDED,
    )
    IssuePhoto.objects.create(issue=emergency, media=media)
    routine = IssueFactory.create(
        organization=organization,
        property=property,
        tenant=tenant,
        conversation=conversation,
        reference=f"{name.upper()[:3]}-0002",
        title=f"{name} loose door handle",
        urgency=Issue.Urgency.ROUTINE,
        category="structural",
    )
    update = IssueUpdate.objects.create(issue=routine, author="tenant", body="Still loose.")
    [clock, *_] = issue_clocks_sync(issue=emergency)
    contractor = Contractor.objects.create(
        organization=organization, name=f"{name} Plumbing", trades=["plumbing"], whatsapp=f"{phone_prefix}9999"
    )
    job = Job.objects.create(
        issue=routine,
        contractor=contractor,
        state=Job.State.DECLINED,
        offered_at=timezone.now(),
        respond_by=timezone.now(),
        responded_at=timezone.now(),
    )
    document = Document.objects.create(
        organization=organization,
        property=property,
        title=f"{name} handbook",
        source=f"{name.lower()}-handbook.md",
        checksum="0" * 64,
        text="# Bins\nBins go out on Tuesday.",
        status=Document.Status.READY,
    )
    chunk = Chunk.objects.create(
        document=document,
        organization=organization,
        property=property,
        position=0,
        heading_path="Bins",
        text="Bins go out on Tuesday.",
        search_text=f"{name} handbook Bins Bins go out on Tuesday.",
    )
    rule = EmergencyRule.objects.create(
        organization=organization, country="GB", language="en", phrase=f"{name.lower()} smells gas", category="gas"
    )
    safety = SafetyMessage.objects.create(
        organization=organization,
        country="GB",
        category="gas",
        body=f"{name}: leave the building and call 0800 111 999.",
    )
    membership = Membership.objects.get(user=user, organization=organization)
    return World(
        organization=organization,
        user=user,
        objects={
            "number": number,
            "membership": membership,
            "property": property,
            "tenant": tenant,
            "tenancy": tenancy,
            "conversation": conversation,
            "inbound": inbound,
            "outbound": outbound,
            "media": media,
            "turn": turn,
            "alert": alert,
            "emergency": emergency,
            "routine": routine,
            "update": update,
            "clock": clock,
            "contractor": contractor,
            "job": job,
            "policy": DeadlinePolicy.objects.get(organization=organization, active=True),
            "photo": IssuePhoto.objects.get(issue=emergency),
            "document": document,
            "chunk": chunk,
            "rule": rule,
            "safety": safety,
        },
    )


def alice_and_bob() -> tuple[World, World]:
    return world_build("Alice", phone_prefix="+44770091"), world_build("Bob", phone_prefix="+44770092")
