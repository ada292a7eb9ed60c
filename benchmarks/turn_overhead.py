"""Our own cost per turn, without the model's thinking time: context read,
gating, handler, reply row, trace, with the scripted model answering at once.
Prints p50/p95 milliseconds and SQL queries per turn.

    .venv/bin/python benchmarks/turn_overhead.py [--turns 300] [--conversations 3000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _django import django_start, throwaway_database

django_start(LLM_BACKEND="scripted", ANTHROPIC_API_KEY="")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--conversations", type=int, default=3000, help="background conversations in the tables")
    args = parser.parse_args()

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with throwaway_database():
        from conversations.models import Conversation, Message
        from orchestration.engine import turn_run
        from properties.models import Organization, Property, Tenancy, Tenant

        org = Organization.objects.create(name="Bench", slug="bench", country="GB")
        props = Property.objects.bulk_create(
            Property(organization=org, code=f"P{i}", address=f"{i} Bench Road", postcode="LS1 1AA")
            for i in range(args.conversations)
        )
        tenants = Tenant.objects.bulk_create(
            Tenant(organization=org, phone=f"+4477009{i:05d}", name=f"T{i}") for i in range(args.conversations)
        )
        Tenancy.objects.bulk_create(
            Tenancy(tenant=t, property=p, start_date="2026-01-01") for t, p in zip(tenants, props, strict=True)
        )
        conversations = Conversation.objects.bulk_create(
            Conversation(organization=org, phone=t.phone, whatsapp_id=f"whatsapp:{t.phone}") for t in tenants
        )
        Message.objects.bulk_create(
            Message(
                organization=org,
                conversation=c,
                direction="inbound",
                author="tenant",
                body="hello",
                status="processed",
                provider_sid=f"SMbg{c.pk}",
            )
            for c in conversations
        )
        timings: dict[str, list[float]] = {"plain": [], "with document search": []}
        queries = []
        texts = ["My kitchen tap is leaking", "the cold one, since Monday", "how do I bleed a radiator?", "thanks!"]
        for n in range(args.turns):
            conversation = conversations[n % len(conversations)]
            message = Message.objects.create(
                organization=org,
                conversation=conversation,
                direction="inbound",
                author="tenant",
                body=texts[n % len(texts)],
                status="received",
                provider_sid=f"SMbench{n}",
            )
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                turn = turn_run(conversation_id=conversation.pk, message_ids=[message.pk])
                elapsed = (time.perf_counter() - started) * 1000
            searched = any(c.get("name") == "search_documents" for c in turn.tool_calls)
            timings["with document search" if searched else "plain"].append(elapsed)
            queries.append(len(captured.captured_queries))

    print(f"{args.turns} turns over {args.conversations} conversations, scripted model, {os.cpu_count()} cores")
    for kind, samples in timings.items():
        if samples:
            ordered = sorted(samples)
            p95 = ordered[round(0.95 * (len(ordered) - 1))]
            print(f"  {kind:22s} ({len(ordered)} turns) ms: p50 {statistics.median(ordered):.1f}  p95 {p95:.1f}")
    print(f"  SQL queries per turn: min {min(queries)}  median {statistics.median(queries):.0f}  max {max(queries)}")
    print("  (a document search embeds the query on the CPU: the first one loads the model)")


if __name__ == "__main__":
    main()
