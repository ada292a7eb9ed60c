"""API rate limits: one budget per token, one per client IP for callers without one.

``API_THROTTLE_RATE`` applies to each API token (a signed-in session counts per
user), ``API_ANON_THROTTLE_RATE`` to each client address that brings no
credentials. Over the rate DRF answers 429 with ``Retry-After`` (the API's error
body, code ``throttled``). The counts live in the ``throttle`` cache (Redis), so
all web processes share them; when Redis does not answer the request passes,
since a rate limit is not worth an outage of the API.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING

import redis
from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import SimpleRateThrottle

from config.client_ip import client_ip

if TYPE_CHECKING:  # DRF loads this module while rest_framework.views is being imported
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)


class TokenRateThrottle(SimpleRateThrottle):
    scope = "token"

    def __init__(self) -> None:
        # Rates are read per request (not frozen at import as DRF's class
        # attribute is), so a changed setting applies at once.
        pass

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.cache = caches["throttle"]
        authenticated = bool(request.user and request.user.is_authenticated)
        self.rate = settings.API_THROTTLE_RATE if authenticated else settings.API_ANON_THROTTLE_RATE
        self.num_requests, self.duration = self.parse_rate(self.rate)
        try:
            return super().allow_request(request, view)
        except redis.RedisError:
            logger.warning("API throttle: Redis did not answer; request let through")
            return True

    def get_cache_key(self, request: Request, view: APIView) -> str:
        token = getattr(request.auth, "key", None)
        if token:
            # The token itself is never written to Redis, only a digest of it.
            ident = "token:" + hashlib.sha256(str(token).encode()).hexdigest()[:32]
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            # Not DRF's get_ident: it would trust a forged X-Forwarded-For.
            ident = f"ip:{client_ip(request._request)}"
        return f"api-throttle:{ident}"
