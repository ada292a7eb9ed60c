"""How long the WhatsApp webhook takes to answer Twilio, next to a bare Django
endpoint in the same run (so the ratio says what our work costs).

In-process through Django's test client against a throwaway database on the
embedded PostgreSQL; Celery publishing goes to the real Redis (its queue is
purged afterwards). Prints p50/p95/p99 in milliseconds.

    .venv/bin/python benchmarks/webhook_latency.py [--requests 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _django import django_start, throwaway_database

django_start(TWILIO_AUTH_TOKEN="benchmark-token", PUBLIC_BASE_URL="http://testserver", LOG_LEVEL="WARNING")

from django.http import HttpResponse  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.urls import include, path  # noqa: E402


def bare(request):
    return HttpResponse('<?xml version="1.0" encoding="UTF-8"?><Response></Response>', content_type="text/xml")


urlpatterns = [path("bare", bare), path("", include("config.urls"))]


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]  # noqa: E731
    return f"p50 {pick(0.5):6.2f}  p95 {pick(0.95):6.2f}  p99 {pick(0.99):6.2f}  mean {statistics.mean(ordered):6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()

    from conversations.testing.signing import WEBHOOK_PATH, inbound_params, twilio_signature
    from properties.models import Organization, WhatsAppNumber

    with throwaway_database(), override_settings(ROOT_URLCONF=__name__, DEBUG=False):
        org = Organization.objects.create(name="Bench", slug="bench", country="GB")
        WhatsAppNumber.objects.create(organization=org, number="+14155550100")
        client = Client()
        for _ in range(50):  # warm up both paths
            client.post("/bare", {})
        timings = {"bare endpoint": [], "webhook (new message)": [], "webhook (repeated delivery)": []}
        repeated = inbound_params(phone="+447700900001", to="+14155550100", body="repeat")
        for n in range(args.requests):
            client.post("/bare", {"Body": "x"})
            started = time.perf_counter()
            client.post("/bare", {"Body": "x"})
            timings["bare endpoint"].append((time.perf_counter() - started) * 1000)

            params = inbound_params(phone=f"+4477009{n % 500:05d}", to="+14155550100", body="The tap is leaking")
            url = "http://testserver" + WEBHOOK_PATH
            sig = twilio_signature(auth_token="benchmark-token", url=url, params=params)
            started = time.perf_counter()
            response = client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=sig)
            timings["webhook (new message)"].append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.content

            sig = twilio_signature(auth_token="benchmark-token", url=url, params=repeated)
            started = time.perf_counter()
            client.post(WEBHOOK_PATH, repeated, HTTP_X_TWILIO_SIGNATURE=sig)
            timings["webhook (repeated delivery)"].append((time.perf_counter() - started) * 1000)
    from config.celery import app

    app.control.purge()
    print(f"{args.requests} requests each, in-process (Django test client), {os.cpu_count()} cores; ms:")
    for name, samples in timings.items():
        print(f"  {name:28s} {percentiles(samples)}")
    ratio = statistics.median(timings["webhook (new message)"]) / statistics.median(timings["bare endpoint"])
    print(f"  new message / bare endpoint (median): {ratio:.1f}x")


if __name__ == "__main__":
    main()
