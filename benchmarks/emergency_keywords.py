"""How long the emergency keyword path takes: matching alone (per message,
with the cache's version check) and the whole webhook-time receiver for an
emergency (alert recorded, safety text chosen) and an ordinary message.

Throwaway database on the embedded PostgreSQL; prints median and p95 in ms.

    .venv/bin/python benchmarks/emergency_keywords.py [--messages 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from _django import ROOT, django_start, throwaway_database

django_start()


def stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[round(0.95 * (len(ordered) - 1))]
    return f"median {statistics.median(ordered):.3f} ms  p95 {p95:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()

    with throwaway_database():
        from unittest import mock

        from conversations.models import Conversation, Message
        from orchestration.emergencies.matching import emergency_match
        from orchestration.emergencies.normalise import normalise
        from orchestration.emergencies.receiver import on_inbound_stored
        from orchestration.models import EmergencyRule
        from properties.models import Organization

        rows = [json.loads(line) for line in (ROOT / "evals/emergencies/messages.jsonl").read_text().splitlines()]
        texts = [row["text"] for row in rows]
        org = Organization.objects.create(name="Bench", slug="bench", country="GB")
        rules = EmergencyRule.objects.filter(enabled=True).count()
        emergency_match("warm up", organization_id=org.pk, country="GB")

        normalise_ms, match_ms = [], []
        for n in range(args.messages):
            text = texts[n % len(texts)]
            started = time.perf_counter()
            normalise(text)
            normalise_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            emergency_match(text, organization_id=org.pk, country="GB")
            match_ms.append((time.perf_counter() - started) * 1000)

        conversation = Conversation.objects.create(organization=org, phone="+447700900001", whatsapp_id="w")
        receiver_ms = {True: [], False: []}
        with mock.patch("conversations.tasks_queue.queue_task"):  # no broker in this measurement
            for n in range(min(args.messages, 400)):
                row = rows[n % len(rows)]
                message = Message.objects.create(
                    organization=org,
                    conversation=conversation,
                    direction="inbound",
                    author="tenant",
                    body=row["text"],
                    status="received",
                )
                conversation.emergency_alerts.all().delete()  # every emergency raises a fresh alert
                started = time.perf_counter()
                on_inbound_stored(sender=Message, message=message)
                receiver_ms[row["emergency"]].append((time.perf_counter() - started) * 1000)

    print(f"{rules} enabled rules, {len(texts)} labelled messages, {os.cpu_count()} cores")
    print(f"  normalise only:                         {stats(normalise_ms)}")
    print(f"  match (version check + regex):          {stats(match_ms)}")
    print(f"  receiver, emergency (alert + reply):    {stats(receiver_ms[True])}")
    print(f"  receiver, ordinary message:             {stats(receiver_ms[False])}")


if __name__ == "__main__":
    main()
