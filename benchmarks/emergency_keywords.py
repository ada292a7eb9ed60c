"""How long the emergency path takes, both stages: matching alone (per message,
with the cache's version check), the classifier's score and the memory it adds
to a process (the cost the ``emergency`` worker pays per message), the
webhook-time receiver (the rules; an organization's own rule records the alert
and chooses the safety text there, anything else queues the screening), and the
whole signed webhook request from receipt to the TwiML answer. Each organization
has one rule of its own ("gas"), so the in-request alert path is timed too.

Throwaway database on the embedded PostgreSQL, tasks published to the real
Redis (under a private key prefix, purged afterwards), the webhook called
in-process through Django's test client; prints median and p95 in ms.

    .venv/bin/python benchmarks/emergency_keywords.py [--messages 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from _django import ROOT, django_start, throwaway_database

django_start(TWILIO_AUTH_TOKEN="benchmark-token", PUBLIC_BASE_URL="http://testserver")


def stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[round(0.95 * (len(ordered) - 1))]
    p99 = ordered[round(0.99 * (len(ordered) - 1))]
    return f"median {statistics.median(ordered):.3f} ms  p95 {p95:.3f} ms  p99 {p99:.3f} ms"


def rss_mb() -> float:
    """Resident memory of this process now (Linux), in MB."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()

    with throwaway_database():
        from unittest import mock

        from conversations.models import Conversation, Message
        from emergencies.classifier import classifier_get
        from emergencies.matching import emergency_match
        from emergencies.models import EmergencyRule
        from emergencies.normalise import normalise
        from emergencies.receiver import on_inbound_stored
        from properties.models import Organization

        # The regression set's short messages and the dev split's longer, chatty ones.
        rows = [
            json.loads(line)
            for name in ("messages.jsonl", "dev.jsonl")
            for line in (ROOT / "evals/emergencies" / name).read_text().splitlines()
        ]
        before_mb = rss_mb()
        classifier = classifier_get()
        if classifier is None:
            raise SystemExit("the emergency classifier did not load (EMERGENCY_CLASSIFIER / _PATH)")
        classifier.score("warm up")
        classifier_mb = rss_mb() - before_mb
        texts = [row["text"] for row in rows]
        org = Organization.objects.create(name="Bench", slug="bench", country="GB")
        rules = EmergencyRule.objects.filter(enabled=True).count()
        emergency_match("warm up", organization_id=org.pk, country="GB")

        normalise_ms, match_ms, score_ms = [], [], []
        for n in range(args.messages):
            row = rows[n % len(rows)]
            text = row["text"]
            started = time.perf_counter()
            normalise(text)
            normalise_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            emergency_match(text, organization_id=org.pk, country=row.get("country", "GB"))
            match_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            classifier.score(text)
            score_ms.append((time.perf_counter() - started) * 1000)

        # Rows in American wording (a "country" of their own) come from an American organization.
        orgs = {
            "GB": org,
            "IE": Organization.objects.create(name="Bench IE", slug="bench-ie", country="IE"),
            "US": Organization.objects.create(name="Bench US", slug="bench-us", country="US"),
        }
        conversations = {
            country: Conversation.objects.create(organization=o, phone="+447700900001", whatsapp_id="w")
            for country, o in orgs.items()
        }
        receiver_ms: dict[bool, list[float]] = {True: [], False: []}
        for organization in orgs.values():
            EmergencyRule.objects.create(organization=organization, phrase="gas", category="gas")
        with mock.patch("emergencies.screening.queue_task", return_value=True):  # no broker in this measurement
            for n in range(min(args.messages, 400)):
                row = rows[n % len(rows)]
                conversation = conversations[row.get("country", "GB")]
                message = Message.objects.create(
                    organization=conversation.organization,
                    conversation=conversation,
                    direction="inbound",
                    author="tenant",
                    body=row["text"],
                    status="received",
                )
                conversation.emergency_alerts.all().delete()  # every emergency raises a fresh alert
                started = time.perf_counter()
                reply = on_inbound_stored(sender=Message, message=message)
                receiver_ms[bool(reply)].append((time.perf_counter() - started) * 1000)

        webhook_ms = webhook_timings(orgs, rows, requests=min(args.messages, 400))

    print(
        f"{rules} enabled rules, {len(texts)} labelled messages, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
    )
    print(f"  classifier {classifier.version}: +{classifier_mb:.0f} MB resident per process once loaded")
    print(f"  normalise only:                         {stats(normalise_ms)}")
    print(f"  match (version check + regex):          {stats(match_ms)}")
    print(f"  classifier score (E5 + heads):          {stats(score_ms)}")
    print(f"  receiver, own rule (alert + reply):     {stats(receiver_ms[True])}")
    print(f"  receiver, rules then queued:            {stats(receiver_ms[False])}")
    print(f"  webhook to TwiML, own rule's reply:     {stats(webhook_ms[True])}")
    print(f"  webhook to TwiML, screening queued:     {stats(webhook_ms[False])}")


def webhook_timings(orgs: dict, rows: list[dict], *, requests: int) -> dict[bool, list[float]]:
    """Signed posts of the labelled messages, each from a new phone (so every
    emergency raises its own alert), timed by whether the answer carried a
    safety reply (an own rule decided in the request) or not (queued for the
    emergency worker)."""
    from django.test import Client

    from config.celery import app
    from conversations.testing.signing import WEBHOOK_PATH, inbound_params, twilio_signature
    from properties.models import WhatsAppNumber

    numbers = {"GB": "+14155550100", "US": "+14155550101", "IE": "+14155550102"}
    for country, number in numbers.items():
        WhatsAppNumber.objects.create(organization=orgs[country], number=number)
    client = Client()
    timings: dict[bool, list[float]] = {True: [], False: []}
    for n in range(requests):
        row = rows[n % len(rows)]
        params = inbound_params(phone=f"+4477009{n:05d}", to=numbers[row.get("country", "GB")], body=row["text"])
        signature = twilio_signature(
            auth_token="benchmark-token", url="http://testserver" + WEBHOOK_PATH, params=params
        )
        started = time.perf_counter()
        response = client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=signature)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise SystemExit(f"unexpected webhook answer for {row['text']!r}: {response.status_code}")
        # Timed by what the product did: a safety reply in the TwiML is the emergency path.
        timings[b"<Message>" in response.content].append(elapsed)
    app.control.purge()
    return timings


if __name__ == "__main__":
    main()
