"""Our own cost per turn, without the model's thinking time, over a realistic
database: context read, conditional retrieval, gating, handler, reply row and
trace, with the scripted model answering at once (zero latency).

    .venv/bin/python benchmarks/turn_overhead.py [--conversations 3000] [--documents 3000] [--measured 100] [--profile]

The database (a throwaway one) holds ``--conversations`` tenants, each with a
property, a conversation with earlier history and, for one in three, an open
issue; and ``--documents`` documents (one per property, the rest shared by the
organization), chunked from the demo corpus with the real embedding model's
vectors plus a little noise, so retrieval runs against thousands of documents
on its real indexes. ``--measured`` of those conversations then play a
five-turn report each (problem, details, photo -> issue, a question about the
home, thanks), so every turn reads real history and open issues.

Prints p50/p95 milliseconds per turn (total, retrieval with its query
embedding on the CPU, and the engine without retrieval), SQL queries per turn,
and the statements per turn by kind and table. ``--profile`` then plays the
report once more for ``--measured`` other conversations under cProfile and
prints the top functions.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from datetime import date, timedelta

from _django import ROOT, django_start, throwaway_database
from _profile import Profile, QueryTally

django_start(LLM_BACKEND="scripted", ANTHROPIC_API_KEY="", SCRIPTED_MODEL_DELAY_MS="0")

HISTORY = [
    ("inbound", "tenant", "Hi, the bathroom extractor fan is very loud"),
    ("outbound", "assistant", "Sorry to hear that. Is it rattling or humming, and since when?"),
    ("inbound", "tenant", "rattling since last week"),
    ("outbound", "assistant", "Thanks, could you send a short video or photo of it?"),
    ("inbound", "tenant", "sent it"),
    ("outbound", "assistant", "Thanks, I've logged this with your landlord. Your reference is R0000-BG."),
]
OPEN_ISSUES = ["Loud bathroom extractor fan", "Leaking kitchen tap", "Bedroom window will not close"]


def script() -> list[tuple[str, bool, list[dict]]]:
    """(tenant text, sends a photo, the scripted model's calls) per turn."""
    return [
        ("The kitchen tap is leaking", False, [_call("ask_for_details", question="Which tap, and since when?")]),
        ("the cold one, it drips all the time since Monday", False, [_call("ask_for_photo", message="Photo?")]),
        (
            "",
            True,
            [
                _call(
                    "create_issue",
                    title="Dripping cold kitchen tap",
                    description="The cold kitchen tap drips all the time since Monday.",
                    category="plumbing",
                    urgency="routine",
                    location="kitchen sink",
                    photo="provided",
                    message="Thanks, I've logged this with your landlord.",
                )
            ],
        ),
        (
            "how do I repressurise the boiler?",
            False,
            [
                _call("search_documents", query="how to repressurise the boiler"),
                _call("respond", message="Open the filling loop until the gauge shows 1.5 bar."),
            ],
        ),
        ("thanks!", False, [_call("respond", message="You're welcome!")]),
    ]


def _call(tool: str, **tool_input) -> dict:
    return {"tool": tool, "input": tool_input}


def build(args, rng: random.Random):
    from django.db import connection

    from conversations.models import Conversation, Message
    from issues.models import Issue
    from properties.models import Organization, Property, Tenancy, Tenant
    from retrieval.documents import manifest_read
    from retrieval.embeddings import embed_documents, embedding_backend
    from retrieval.models import Chunk, Document
    from retrieval.services import document_chunks_build

    org = Organization.objects.create(name="Bench Lettings", slug="bench", country="GB", timezone="Europe/London")
    n = args.conversations
    props = Property.objects.bulk_create(
        Property(organization=org, code=f"P-{i}", address=f"{i} Bench Road, Leeds", postcode=f"LS{i % 30} 1AA")
        for i in range(n)
    )
    tenants = Tenant.objects.bulk_create(
        Tenant(organization=org, phone=f"+4477009{i:05d}", name=f"Tenant {i}") for i in range(n)
    )
    Tenancy.objects.bulk_create(
        Tenancy(tenant=t, property=p, start_date=date(2026, 1, 1)) for t, p in zip(tenants, props, strict=True)
    )
    conversations = Conversation.objects.bulk_create(
        Conversation(
            organization=org,
            phone=t.phone,
            whatsapp_id=f"whatsapp:{t.phone}",
            tenant=t,
            property=p,
            identity_status="active",
            gathering_state="issue_created",
        )
        for t, p in zip(tenants, props, strict=True)
    )
    # Earlier history, a couple of days old, for every conversation.
    Message.objects.bulk_create(
        Message(
            organization=org,
            conversation=c,
            direction=direction,
            author=author,
            body=body,
            status="processed" if direction == "inbound" else "sent",
            provider_sid=f"SMhist{c.pk}x{k}" if direction == "inbound" else None,
        )
        for c in conversations
        for k, (direction, author, body) in enumerate(HISTORY)
    )
    Message.objects.filter(organization=org).update(created_at=_ago(days=2))
    Issue.objects.bulk_create(
        Issue(
            organization=org,
            property=p,
            tenant=t,
            reference=f"RB-{i:06d}",
            title=OPEN_ISSUES[i % len(OPEN_ISSUES)],
            description=OPEN_ISSUES[i % len(OPEN_ISSUES)],
            category="other",
            location="as described",
        )
        for i, (t, p) in enumerate(zip(tenants, props, strict=True))
        if i % 3 == 0
    )

    # Documents: the demo corpus chunked and embedded once; each benchmark
    # document takes a few of those chunks with their vectors plus noise.
    folder = ROOT / "retrieval" / "demo_documents"
    base = []
    for name, entry in manifest_read(folder).items():
        for draft in document_chunks_build(title=entry["title"], text=(folder / name).read_text()):
            base.append((entry["title"], draft.heading_path, draft.text, draft.search_text))
    vectors = embed_documents([b[3] for b in base])
    model = embedding_backend().name
    shared = max(0, args.documents - n)
    documents = Document.objects.bulk_create(
        [
            Document(
                organization=org,
                property=p,
                title=f"Home guide {p.code}",
                source=f"{p.code}.md",
                status="ready",
                embedding_model=model,
            )
            for p in props[: args.documents]
        ]
        + [
            Document(
                organization=org, title=f"Policy {k}", source=f"policy-{k}.md", status="ready", embedding_model=model
            )
            for k in range(shared)
        ]
    )
    chunks = []
    for doc in documents:
        for position, pick in enumerate(rng.sample(range(len(base)), k=4)):
            title, heading, text, search_text = base[pick]
            noisy = [x + rng.uniform(-0.01, 0.01) for x in vectors[pick]]
            chunks.append(
                Chunk(
                    document=doc,
                    organization=org,
                    property_id=doc.property_id,
                    position=position,
                    heading_path=heading,
                    text=text,
                    search_text=search_text.replace(title, doc.title, 1),
                    embedding=noisy,
                )
            )
    Chunk.objects.bulk_create(chunks, batch_size=2000)
    with connection.cursor() as cursor:
        for table in (
            "retrieval_chunk",
            "retrieval_term",
            "conversations_message",
            "conversations_conversation",
            "properties_issue",
        ):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return org, conversations, len(documents), len(chunks)


def _ago(**delta):
    from django.utils import timezone

    return timezone.now() - timedelta(**delta)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=3000, help="tenants, properties and conversations")
    parser.add_argument("--documents", type=int, default=3000, help="documents, four chunks each")
    parser.add_argument("--measured", type=int, default=100, help="conversations that play the five-turn report")
    parser.add_argument("--profile", action="store_true", help="then profile the same turns for other conversations")
    args = parser.parse_args()

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    rng = random.Random(7)
    with throwaway_database():
        from conversations.models import Media, Message
        from llm.scripted import scripted_clear, scripted_queue
        from orchestration.engine import turn_run
        from retrieval.embeddings import embed_query

        started = time.monotonic()
        org, conversations, documents, chunks = build(args, rng)
        print(
            f"built {len(conversations)} conversations ({len(conversations) * len(HISTORY)} history messages, "
            f"{len(conversations) // 3 + 1} open issues), {documents} documents / {chunks} chunks "
            f"in {time.monotonic() - started:.0f} s"
        )
        embed_query("warm the embedding model up")  # loaded once per worker process, not per turn
        totals, retrieval, engine, queries, model_calls = [], [], [], [], []
        tally = QueryTally()
        picked = rng.sample(conversations, k=min(2 * args.measured, len(conversations)))
        measured, profiled = picked[: args.measured], picked[args.measured :]

        def play(conversation, tally: QueryTally) -> None:
            for n, (text, photo, calls) in enumerate(script()):
                scripted_queue(phone=conversation.phone, calls=calls)
                message = Message.objects.create(
                    organization=org,
                    conversation=conversation,
                    direction="inbound",
                    author="tenant",
                    body=text,
                    status="received",
                    provider_sid=f"SMbench{conversation.pk}x{n}",
                )
                if photo:
                    Media.objects.create(
                        message=message,
                        index=0,
                        provider_url=f"https://api.twilio.com/2010-04-01/Accounts/AC0/Messages/{message.pk}/Media/ME0",
                        content_type="image/jpeg",
                    )
                connection.queries_log.clear()  # the log holds 9000 queries; counting needs room
                with CaptureQueriesContext(connection) as captured, connection.execute_wrapper(tally):
                    began = time.perf_counter()
                    turn = turn_run(conversation_id=conversation.pk, message_ids=[message.pk])
                    elapsed = (time.perf_counter() - began) * 1000
                assert turn is not None and turn.outcome == "tool", (turn and turn.outcome, turn and turn.error)
                totals.append(elapsed)
                retrieval.append(turn.latency_retrieval_ms or 0)
                engine.append(elapsed - (turn.latency_retrieval_ms or 0))
                queries.append(len(captured.captured_queries))
                model_calls.append(len(turn.tool_calls))
            scripted_clear(phone=conversation.phone)

        for conversation in measured:
            play(conversation, tally)
        if args.profile:
            sampled = len(totals)
            with Profile() as profile:
                for conversation in profiled:
                    play(conversation, QueryTally())
            del totals[sampled:], retrieval[sampled:], engine[sampled:], queries[sampled:], model_calls[sampled:]

    print(
        f"{len(totals)} turns ({len(measured)} conversations x {len(script())}), scripted model at zero latency, "
        f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    for name, samples in (
        ("turn, total", totals),
        ("  of which retrieval (query embedding + SQL)", retrieval),
        ("  engine without retrieval", engine),
    ):
        print(f"  {name:46s} ms: p50 {_pct(samples, 50):7.1f}  p95 {_pct(samples, 95):7.1f}")
    print(
        f"  SQL queries per turn: min {min(queries)}  p50 {statistics.median(queries):.0f}  "
        f"p95 {_pct(queries, 95):.0f}  max {max(queries)}"
    )
    print(f"  model calls per turn: mean {statistics.fmean(model_calls):.2f} (a document search takes two)")
    print("  statements per turn by kind and table:")
    turns = len(script()) * len(measured)
    for label, count in tally.labels.most_common():
        print(f"    {count / turns:6.2f}  {label}")
    if args.profile:
        profile.print(units=len(profiled) * len(script()), unit="turn")


def _pct(values, pct: float) -> float:
    ordered = sorted(values)
    return ordered[round(pct / 100 * (len(ordered) - 1))]


if __name__ == "__main__":
    main()
