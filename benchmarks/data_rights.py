"""Tenants' data rights (issue 23): how long the export and retention take.

- export: one tenant with ``--messages`` messages (default 1000) and
  ``--photos`` photos (default 50, ~200 KB each, as WhatsApp delivers them),
  20 turn traces and 5 issues with history: ``tenant_export_build`` p50 and
  max over ``--runs`` runs, and the ZIP's size;
- retention: ``--retention-messages`` messages (default 100 000) in
  conversations of 50 messages, all past the policy's months, with one voice
  note file per conversation and one turn each: a dry run, the real run, and
  a second run (idempotent: nothing left to do).

Data is bulk-created in a throwaway database; files go to a temporary
MEDIA_ROOT. Prints figures, asserts nothing.

    .venv/bin/python benchmarks/data_rights.py [--messages 1000 --photos 50 --retention-messages 100000]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import tempfile
import time

from _django import django_start, throwaway_database

MEDIA = tempfile.mkdtemp(prefix="bench-media-")
django_start(MEDIA_ROOT=MEDIA)

from django.core.files.base import ContentFile  # noqa: E402
from django.core.files.storage import default_storage  # noqa: E402
from django.utils import timezone  # noqa: E402

from conversations.models import Conversation, Media, Message  # noqa: E402
from issues.models import Issue, IssueUpdate  # noqa: E402
from orchestration.models import Turn  # noqa: E402
from privacy.export import tenant_export_build  # noqa: E402
from privacy.models import RetentionPolicy  # noqa: E402
from privacy.retention import months_before, retention_apply  # noqa: E402
from properties.models import Organization, Property, Tenancy, Tenant  # noqa: E402

WORDS = [
    "the",
    "radiator",
    "in",
    "the",
    "back",
    "bedroom",
    "has",
    "been",
    "cold",
    "since",
    "Tuesday",
    "and",
    "the",
    "boiler",
    "shows",
    "F28",
]


def sentence(n: int) -> str:
    return " ".join(WORDS[(n + i) % len(WORDS)] for i in range(12 + n % 20))


def world(slug: str) -> tuple[Organization, Property]:
    organization = Organization.objects.create(name=slug, slug=slug)
    home = Property.objects.create(organization=organization, code=f"{slug}-1", address="1 Bench Road")
    return organization, home


def seed_export(messages: int, photos: int) -> Tenant:
    organization, home = world("export")
    tenant = Tenant.objects.create(organization=organization, name="Bench Tenant", phone="+447700900001")
    Tenancy.objects.create(tenant=tenant, property=home, start_date=datetime.date(2025, 1, 1))
    conversation = Conversation.objects.create(
        organization=organization, phone=tenant.phone, whatsapp_id=f"whatsapp:{tenant.phone}", tenant=tenant
    )
    rows = Message.objects.bulk_create(
        [
            Message(
                organization=organization,
                conversation=conversation,
                direction="inbound" if n % 2 == 0 else "outbound",
                author="tenant" if n % 2 == 0 else "assistant",
                status="processed" if n % 2 == 0 else "sent",
                kind="text",
                body=sentence(n),
                raw_payload={"Body": sentence(n), "From": f"whatsapp:{tenant.phone}"},
            )
            for n in range(messages)
        ],
        batch_size=1000,
    )
    photo = os.urandom(200_000)  # incompressible, like a JPEG
    media = []
    for n in range(photos):
        name = default_storage.save(f"whatsapp/bench/photo{n}.jpg", ContentFile(photo))
        media.append(
            Media(
                message=rows[(n * 2 * (messages // 2)) // photos],
                index=0,
                provider_url=f"https://api.twilio.com/media/ME{n:030d}",
                content_type="image/jpeg",
                download_state="downloaded",
                file=name,
            )
        )
    Media.objects.bulk_create(media)
    Turn.objects.bulk_create(
        [
            Turn(
                conversation=conversation,
                message_ids=[rows[n * 2].pk],
                tool_calls=[{"name": "ask_for_details", "input": {"question": sentence(n)}, "is_error": False}],
                retrieval_hits=[{"chunk_id": n, "document": "handbook", "heading": "Heating", "score": 0.03}],
            )
            for n in range(20)
        ]
    )
    for n in range(5):
        issue = Issue.objects.create(
            organization=organization,
            property=home,
            tenant=tenant,
            conversation=conversation,
            reference=f"BEN-{n:04d}",
            title=sentence(n)[:200],
            description=sentence(n + 1),
        )
        IssueUpdate.objects.bulk_create(
            [IssueUpdate(issue=issue, author="landlord", body=sentence(k)) for k in range(4)]
        )
    return tenant


def seed_retention(total: int, per_conversation: int = 50) -> Organization:
    organization, _ = world("retention")
    conversations = Conversation.objects.bulk_create(
        [
            Conversation(organization=organization, phone=f"+4477009{n:05d}", whatsapp_id=f"whatsapp:+4477009{n:05d}")
            for n in range(total // per_conversation)
        ]
    )
    batch = []
    for conversation in conversations:
        for n in range(per_conversation):
            batch.append(
                Message(
                    organization=organization,
                    conversation=conversation,
                    direction="inbound",
                    author="tenant",
                    status="processed",
                    body=sentence(n),
                    raw_payload={"Body": sentence(n)},
                )
            )
        if len(batch) >= 10_000:
            Message.objects.bulk_create(batch, batch_size=5000)
            batch = []
    Message.objects.bulk_create(batch, batch_size=5000)
    firsts = dict(
        Message.objects.filter(organization=organization)
        .order_by("conversation_id", "id")
        .distinct("conversation_id")
        .values_list("conversation_id", "id")
    )
    voice = b"OggS" + os.urandom(20_000)
    Media.objects.bulk_create(
        [
            Media(
                message_id=firsts[c.pk],
                index=0,
                provider_url="https://api.twilio.com/media/x",
                content_type="audio/ogg",
                transcription_state="done",
                transcript=sentence(c.pk),
                file=default_storage.save(f"whatsapp/bench/voice{c.pk}.ogg", ContentFile(voice)),
            )
            for c in conversations
        ]
    )
    Turn.objects.bulk_create(
        [
            Turn(conversation=c, message_ids=[firsts[c.pk]], tool_calls=[{"name": "respond", "input": {"t": "x"}}])
            for c in conversations
        ]
    )
    old = months_before(timezone.now(), 30)
    Message.objects.filter(organization=organization).update(created_at=old)
    Conversation.objects.filter(organization=organization).update(created_at=old)
    RetentionPolicy.objects.create(organization=organization, message_content_months=24, media_months=12)
    return organization


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--photos", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--retention-messages", type=int, default=100_000)
    options = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    with throwaway_database():
        seconds, tenant = timed(seed_export, options.messages, options.photos)
        print(f"export: seeded {options.messages} messages, {options.photos} photos of 200 KB in {seconds:.1f} s")
        times, size = [], 0
        for _ in range(options.runs):
            seconds, payload = timed(tenant_export_build, tenant=tenant)
            times.append(seconds)
            size = payload.seek(0, 2)
            payload.close()
        print(
            f"export: tenant_export_build p50 {statistics.median(times) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms over {options.runs} runs; ZIP {size / 1e6:.1f} MB"
        )
        seconds, _ = timed(seed_retention, options.retention_messages)
        print(f"retention: seeded {options.retention_messages} messages in {seconds:.1f} s")
        now = timezone.now()
        seconds, dry = timed(retention_apply, now=now, dry_run=True)
        print(f"retention: dry run {seconds:.2f} s -> {dry.total()}")
        seconds, wet = timed(retention_apply, now=now)
        print(f"retention: run {seconds:.2f} s -> {wet.total()}")
        seconds, again = timed(retention_apply, now=now)
        print(f"retention: second run {seconds:.2f} s -> {again.total() or 'nothing left to do'}")


if __name__ == "__main__":
    main()
