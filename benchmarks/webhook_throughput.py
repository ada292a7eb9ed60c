"""Signed WhatsApp webhook posts at the app under gunicorn, next to a bare
Django view in the same run: sustained requests per second, p50/p95/p99
acknowledgement latency, and how many messages were lost or duplicated (each
must be zero). Each phase also prints the CPU milliseconds per request of
gunicorn, PostgreSQL, Redis and the load generator (``benchmarks/_cpu.py``):
when the load generator is near one full core, the bare view's req/s is the
generator's limit, and the server's CPU per request is the fairer ratio.

No Celery worker runs: the webhook's work ends when the processing task is in
Redis, so the benchmark counts the queued tasks too (one per new message; a
repeated delivery queues nothing). Every fifth message is delivered twice at
the same moment, as Twilio does when it retries.

    .venv/bin/python benchmarks/webhook_throughput.py [--messages 3000] [--senders 16] [--web-workers 4]
        [--threads 1] [--profile]

``--profile`` then posts ``--profile-messages`` more through the same Django
app inside this process, under cProfile, and prints the top functions by
their own time and the SQL statements per request by kind and table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

from _cpu import cpu_groups, cpu_line, cpu_used, server_ms
from _stack import (
    AUTH_TOKEN,
    WEBHOOK_PATH,
    SignedPoster,
    children_start,
    children_stop,
    configure,
    gunicorn_command,
    inbound,
    organization_with_tenants,
    percentile,
    teardown,
)


def drive(poster: SignedPoster, requests: list[dict[str, str]], senders: int) -> float:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=senders) as pool:
        list(pool.map(poster.post, requests))
    return time.monotonic() - started


def report(name: str, poster: SignedPoster, wall: float) -> None:
    ms = poster.latencies_ms
    print(
        f"  {name:10s} {len(ms) / wall:7.0f} req/s   p50 {percentile(ms, 50):6.1f}  p95 {percentile(ms, 95):6.1f}  "
        f"p99 {percentile(ms, 99):6.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3000, help="distinct messages (plus repeated deliveries)")
    parser.add_argument("--tenants", type=int, default=300)
    parser.add_argument("--senders", type=int, default=16, help="concurrent connections")
    # The production image's gunicorn (docker/Dockerfile): four sync workers, one thread each.
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="threads per gunicorn worker")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--profile", action="store_true", help="then profile the webhook in this process")
    parser.add_argument("--profile-messages", type=int, default=1000)
    args = parser.parse_args()

    data_dir = configure(args.port)
    children = {}
    try:
        phones = organization_with_tenants(args.tenants)
        children = children_start(
            args.port, {"web": gunicorn_command(args.port, args.web_workers, "_bare_wsgi", args.threads)}
        )
        messages = [inbound(phones[n % len(phones)], f"Message {n}: the kitchen tap is dripping") for n in range(200)]
        drive(SignedPoster(args.port, "/bare"), messages, args.senders)  # warm up
        drive(SignedPoster(args.port), messages, args.senders)

        deliveries = []
        for n in range(args.messages):
            params = inbound(phones[n % len(phones)], f"Message {n}: the kitchen tap is dripping")
            deliveries += [params, params] if n % 5 == 4 else [params]
        print(
            f"{len(deliveries)} posts each ({args.messages} messages, {len(deliveries) - args.messages} repeated), "
            f"{args.senders} connections, gunicorn {args.web_workers} workers x {args.threads} threads, "
            f"{os.cpu_count()} cores"
        )
        print(f"  load average at start {os.getloadavg()[0]:.2f}")
        groups = cpu_groups(gunicorn_pid=children["web"].pid, data_dir=data_dir)
        bare = SignedPoster(args.port, "/bare")
        with cpu_used(groups) as bare_cpu:
            bare_wall = drive(bare, deliveries, args.senders)
        report("bare view", bare, bare_wall)
        print(f"             {cpu_line(bare_cpu, len(deliveries), bare_wall)}")
        webhook = SignedPoster(args.port)
        with cpu_used(groups) as webhook_cpu:
            webhook_wall = drive(webhook, deliveries, args.senders)
        report("webhook", webhook, webhook_wall)
        print(f"             {cpu_line(webhook_cpu, len(deliveries), webhook_wall)}")
        print(f"  webhook / bare view: {bare_wall / webhook_wall:.2f}x   load average at end {os.getloadavg()[0]:.2f}")
        bare_ms, webhook_ms = server_ms(bare_cpu, len(deliveries)), server_ms(webhook_cpu, len(deliveries))
        print(
            f"  server CPU per request (all but the load generator): bare view {bare_ms:.2f} ms, "
            f"webhook {webhook_ms:.2f} ms: {bare_ms / webhook_ms:.2f}x"
        )
        lost, duplicated, tasks = audit(webhook.accepted, warmup=messages)
        print(
            f"  messages stored {len(webhook.accepted) - lost}/{len(webhook.accepted)}: "
            f"lost {lost}, duplicated {duplicated}"
        )
        print(f"  processing tasks queued {tasks} for {args.messages} new messages")
        if args.profile:
            profile_in_process(args.port, phones, args.profile_messages)
        return 0 if lost == duplicated == 0 and tasks == args.messages else 1
    finally:
        children_stop(children)
        teardown(data_dir)


def profile_in_process(port: int, phones: list[str], count: int) -> None:
    """The webhook's own cost per request, the way gunicorn's worker pays it:
    Django's test client through the whole middleware stack, signed posts,
    every fifth message delivered twice."""
    from _profile import Profile
    from django.test import Client
    from twilio.request_validator import RequestValidator

    from conversations.signals import inbound_stored

    form = "application/x-www-form-urlencoded"
    url = f"http://127.0.0.1:{port}{WEBHOOK_PATH}"
    validator = RequestValidator(AUTH_TOKEN)
    client = Client()
    deliveries = []
    for n in range(count):
        params = inbound(phones[n % len(phones)], f"Profiled {n}: the kitchen tap is dripping")
        deliveries += [params, params] if n % 5 == 4 else [params]
    # A form body, as Twilio posts it (the test client's default is multipart).
    signed = [(urlencode(params), validator.compute_signature(url, params)) for params in deliveries]
    receivers = len(inbound_stored.receivers)

    def post(body: str, signature: str) -> None:
        response = client.post(WEBHOOK_PATH, body, form, headers={"X-Twilio-Signature": signature})
        assert response.status_code == 200, response.content[:200]

    for body, signature in signed[:50]:  # warm the process's caches, as a running worker has them
        post(body, signature)
    signed = signed[50:]
    with Profile() as profile:
        for body, signature in signed:
            post(body, signature)
    print(f"(inbound_stored receivers: {receivers})")
    profile.print(units=len(signed), unit="request")


def audit(accepted: dict[str, float], warmup: list[dict[str, str]]) -> tuple[int, int, int]:
    """Lost: accepted by the webhook but not stored. Duplicated: stored more
    than once. Tasks: processing tasks waiting in Redis for the measured
    messages (the warm-up's are subtracted)."""
    import redis
    from django.conf import settings
    from django.db.models import Count

    from conversations.models import Message

    stored = dict(
        Message.objects.filter(provider_sid__in=list(accepted)).values_list("provider_sid").annotate(n=Count("id"))
    )
    lost = sum(1 for sid in accepted if sid not in stored)
    duplicated = sum(n - 1 for n in stored.values())
    queue = f"{settings.CELERY_BROKER_TRANSPORT_OPTIONS['global_keyprefix']}inbound"
    tasks = redis.Redis.from_url(settings.REDIS_URL).llen(queue) - len(warmup)
    return lost, duplicated, tasks


if __name__ == "__main__":
    sys.exit(main())
