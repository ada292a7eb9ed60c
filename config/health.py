"""``GET /healthz``: is the database reachable, is Redis reachable, and did
the emergency classifier load. A classifier that could not load does not make
the process unhealthy (the keyword rules still answer emergencies), so it is
reported, not failed: load balancers keep routing and monitoring sees it."""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from emergencies.classifier import classifier_status


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
        "emergency_classifier": classifier_status(),
    }
    return JsonResponse(body, status=200 if healthy else 503)
