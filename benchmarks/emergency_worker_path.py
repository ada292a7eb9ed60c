"""The safety text's way through the real stack when the classifier decides:
gunicorn, the ``emergency`` worker, a worker for the other queues (turns with
the scripted model's pretend thinking time), Redis and a throwaway embedded
PostgreSQL, with the real twilio SDK sending to a local stub.

Tenants send a mix of emergencies and ordinary messages from the labelled dev
split. Prints the webhook's acknowledgement latency, and from receipt
(``Message.created_at``) to screening done and to the safety text handed to
Twilio (``sent_at``): the promise is within 2 seconds.

    .venv/bin/python benchmarks/emergency_worker_path.py [--messages 300] [--rate 10] [--emergency-concurrency 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from _stack import (
    ROOT,
    SignedPoster,
    children_start,
    children_stop,
    configure,
    gunicorn_command,
    inbound,
    organization_with_tenants,
    percentile,
    teardown,
    worker_command,
)


def texts(count: int) -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "evals" / "emergencies" / "dev.jsonl").read_text().splitlines()]
    return [rows[i % len(rows)]["text"] for i in range(count)]


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: none"
    return (
        f"{name} (n={len(values)}): p50 {percentile(values, 50):.0f}  p95 {percentile(values, 95):.0f}  "
        f"p99 {percentile(values, 99):.0f}  max {max(values):.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--rate", type=float, default=10, help="messages per second, spread over the tenants")
    parser.add_argument("--tenants", type=int, default=50)
    parser.add_argument("--emergency-concurrency", type=int, default=1)
    parser.add_argument("--model-delay-ms", type=int, default=800)
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from conversations.testing.twilio_stub import TwilioStubServer

    with TwilioStubServer() as twilio:
        return run(args, twilio)


def run(args, twilio) -> int:
    data_dir = configure(
        args.port,
        WHATSAPP_SENDER="twilio",
        TWILIO_API_BASE_URL=twilio.url,
        TWILIO_ACCOUNT_SID="AC" + "0" * 32,
        SCRIPTED_MODEL_DELAY_MS=str(args.model_delay_ms),
        EMERGENCY_REALERT_MINUTES="0",
    )
    children = {}
    try:
        from config.celery import QUEUES
        from conversations.models import Message

        phones = organization_with_tenants(args.tenants)
        children = children_start(
            args.port,
            {
                "web": gunicorn_command(args.port, 2),
                "worker-emergency": worker_command(args.emergency_concurrency, ["emergency"], "emergency"),
                "worker": worker_command(8, [q for q in QUEUES if q != "emergency"], "worker"),
            },
        )
        poster = SignedPoster(args.port)
        bodies = texts(args.messages)
        started = time.monotonic()

        def send(i: int) -> None:
            time.sleep(max(0.0, started + i / args.rate - time.monotonic()))
            poster.post(inbound(phones[i % len(phones)], bodies[i]))

        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(send, range(args.messages)))
        print(f"sent {args.messages} messages at {args.rate:.0f}/s; {os.cpu_count()} cores", flush=True)
        deadline = time.monotonic() + args.timeout
        while Message.objects.filter(direction="inbound", screened_at__isnull=True).exists():
            if time.monotonic() > deadline:
                print("timed out waiting for the screening")
                return 1
            time.sleep(0.5)
        time.sleep(2)  # the last safety texts' sends

        screened, safety = [], []
        for message in Message.objects.filter(direction="inbound", screened_at__isnull=False):
            assert message.screened_at is not None
            screened.append((message.screened_at - message.created_at).total_seconds() * 1000)
        for out in Message.objects.filter(direction="outbound", raw_payload__purpose="safety"):
            received = (
                Message.objects.filter(direction="inbound", conversation=out.conversation, id__lt=out.id)
                .order_by("-id")
                .values_list("created_at", flat=True)
                .first()
            )
            if out.sent_at and received:
                safety.append((out.sent_at - received).total_seconds() * 1000)
        print(summary("webhook acknowledgement", poster.latencies_ms))
        print(summary("receipt -> screened", screened))
        print(summary("receipt -> safety text handed to Twilio", safety))
        within = sum(1 for value in safety if value <= 2000)
        print(f"safety texts within 2 s: {within}/{len(safety)}; Twilio stub saw {len(twilio.stub.sent)} sends")
        return 0
    finally:
        children_stop(children)
        teardown(data_dir)


if __name__ == "__main__":
    sys.exit(main())
