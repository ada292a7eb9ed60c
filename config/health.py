"""``GET /healthz``: is the database reachable, is Redis reachable, and what
the apps report about themselves.

Reports are registered by the apps at start-up (``health_report_register``),
so config imports no app: the emergencies app reports its classifier
(``ready``, ``off`` or ``unavailable``). A report never makes the process
unhealthy (a classifier that could not load leaves the keyword rules
answering), so load balancers keep routing and monitoring sees it."""

from __future__ import annotations

from collections.abc import Callable

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

# name -> a function returning a short state; filled by AppConfig.ready().
HEALTH_REPORTS: dict[str, Callable[[], str]] = {}


def health_report_register(name: str, report: Callable[[], str]) -> None:
    HEALTH_REPORTS[name] = report


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # any failure means "down" to a health check
        return False


def redis_ok() -> bool:
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)
        return bool(client.ping())
    except redis.RedisError:
        return False


@require_GET
def healthz(request):
    checks = {"database": database_ok(), "redis": redis_ok()}
    healthy = all(checks.values())
    body = {
        "status": "ok" if healthy else "unavailable",
        **{k: "ok" if v else "down" for k, v in checks.items()},
        **{name: report() for name, report in HEALTH_REPORTS.items()},
    }
    return JsonResponse(body, status=200 if healthy else 503)
