"""Many tenants at once through the real stack: gunicorn, a Celery worker, Redis
and a throwaway embedded PostgreSQL, with the scripted model answering after a
realistic delay.

Prints throughput, webhook acknowledgement latency, end-to-end reply latency
(webhook accepted -> reply handed to the sender) and the counts of lost,
duplicated and out-of-order messages, each of which must be zero.

    .venv/bin/python benchmarks/load_end_to_end.py [--conversations 300] [--messages 10]
        [--model-delay-ms 800] [--web-workers 2] [--worker-concurrency 8]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from _stack import (
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


def send_all(args, phones: list[str]) -> tuple[SignedPoster, float]:
    """Each tenant sends its messages in order (a short pause between them);
    tenants run concurrently. Every fifth message is delivered twice, as Twilio
    does on a retry. Returns the poster (acceptance times and latencies) and
    the wall time of the sending phase."""
    poster = SignedPoster(args.port)

    def tenant(phone: str) -> None:
        for n in range(args.messages):
            params = inbound(phone, f"Message {n}: the kitchen tap is dripping")
            poster.post(params)
            if n % 5 == 4:
                poster.post(params)  # a repeated delivery
            time.sleep(args.gap_seconds)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.senders) as pool:
        list(pool.map(tenant, phones))
    return poster, time.monotonic() - started


def wait_processed(expected: int, timeout: float) -> float:
    from conversations.models import Message

    started = time.monotonic()
    last = -1
    while time.monotonic() - started < timeout:
        done = Message.objects.filter(direction="inbound", processed_at__isnull=False).count()
        if done != last:
            print(f"  processed {done}/{expected}", flush=True)
            last = done
        if done >= expected:
            break
        time.sleep(2)
    return time.monotonic() - started


def audit(accepted: dict[str, float]) -> dict[str, float]:
    from conversations.models import Message
    from orchestration.models import Turn

    inbound = {m.provider_sid: m for m in Message.objects.filter(direction="inbound")}
    handled: dict[int, int] = {}
    out_of_order = 0
    last_max: dict[int, int] = {}
    for turn in Turn.objects.order_by("created_at", "id"):
        for message_id in turn.message_ids:
            handled[message_id] = handled.get(message_id, 0) + 1
        if turn.message_ids:
            # Out of order: a turn that handles its messages out of arrival
            # order, or one that handles a message older than one already answered.
            if turn.message_ids != sorted(turn.message_ids) or min(turn.message_ids) < last_max.get(
                turn.conversation_id, 0
            ):
                out_of_order += 1
            last_max[turn.conversation_id] = max([*turn.message_ids, last_max.get(turn.conversation_id, 0)])
    # Lost: accepted by the webhook but not stored, not marked processed, or in no turn.
    lost = sum(
        1
        for sid in accepted
        if sid not in inbound or inbound[sid].processed_at is None or inbound[sid].pk not in handled
    )
    duplicated = sum(1 for count in handled.values() if count > 1)
    # End to end: from the webhook accepting a message to the first reply in
    # its conversation stored after that (the reply of the turn that handled it).
    replies: dict[int | None, list[Message]] = {}
    for outbound in Message.objects.filter(direction="outbound").order_by("created_at"):
        replies.setdefault(outbound.conversation_id, []).append(outbound)
    latencies = []
    for sid, at in accepted.items():
        message = inbound.get(sid)
        if message is None:
            continue
        reply = next((r for r in replies.get(message.conversation_id, []) if r.created_at.timestamp() >= at), None)
        if reply is not None:
            latencies.append((reply.sent_at or reply.created_at).timestamp() - at)
    return {
        "inbound_rows": len(inbound),
        "turns": Turn.objects.count(),
        "replies": sum(len(r) for r in replies.values()),
        "lost": lost,
        "duplicated": duplicated,
        "out_of_order": out_of_order,
        "e2e_p50_s": percentile(latencies, 50),
        "e2e_p95_s": percentile(latencies, 95),
        "e2e_p99_s": percentile(latencies, 99),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--messages", type=int, default=10, help="messages per conversation")
    parser.add_argument("--model-delay-ms", type=int, default=800, help="scripted model's pretend thinking time")
    parser.add_argument("--gap-seconds", type=float, default=0.5, help="pause between one tenant's messages")
    parser.add_argument("--coalesce-seconds", type=float, default=1.0)
    parser.add_argument("--senders", type=int, default=64, help="concurrent tenants sending")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--worker-concurrency", type=int, default=16)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()

    data_dir = configure(
        args.port,
        SCRIPTED_MODEL_DELAY_MS=str(args.model_delay_ms),
        INBOUND_COALESCE_SECONDS=str(args.coalesce_seconds),
    )
    children = {}
    try:
        phones = organization_with_tenants(args.conversations)
        children = children_start(
            args.port,
            {
                "web": gunicorn_command(args.port, args.web_workers),
                "worker": worker_command(args.worker_concurrency),
            },
        )
        total = args.conversations * args.messages
        print(
            f"{args.conversations} conversations x {args.messages} messages = {total} messages "
            f"(+{total // 5} repeated deliveries); scripted model delay {args.model_delay_ms} ms; "
            f"gunicorn {args.web_workers} workers, celery {args.worker_concurrency} threads; {os.cpu_count()} cores",
            flush=True,
        )
        poster, send_wall = send_all(args, phones)
        acks = poster.latencies_ms
        print(f"sent in {send_wall:.1f} s: {len(acks) / send_wall:.0f} webhook requests/s", flush=True)
        drain = wait_processed(total, args.timeout)
        result = audit(poster.accepted)
        print(
            f"\nwebhook ack latency ms: p50 {percentile(acks, 50):.1f}  p95 {percentile(acks, 95):.1f}  "
            f"p99 {percentile(acks, 99):.1f}  max {max(acks):.1f}\n"
            f"end-to-end reply latency s: p50 {result['e2e_p50_s']:.2f}  p95 {result['e2e_p95_s']:.2f}  "
            f"p99 {result['e2e_p99_s']:.2f}\n"
            f"throughput: {total / (send_wall + drain):.1f} messages/s handled end to end "
            f"({send_wall + drain:.0f} s)\n"
            f"rows {result['inbound_rows']}  turns {result['turns']}  replies {result['replies']}\n"
            f"lost {result['lost']}  duplicated {result['duplicated']}  out of order {result['out_of_order']}"
        )
        return 0 if result["lost"] == result["duplicated"] == result["out_of_order"] == 0 else 1
    finally:
        children_stop(children)
        teardown(data_dir)


if __name__ == "__main__":
    sys.exit(main())
