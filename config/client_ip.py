"""The client's IP address as django-axes counts it (``AXES_CLIENT_IP_CALLABLE``).

Behind ``TRUSTED_PROXY_COUNT`` proxies (a TLS terminator, a load balancer) every
request comes from a proxy's address, so REMOTE_ADDR would lock everyone out at
once: the client is then the entry that many hops from the right of
``X-Forwarded-For`` (entries further left are the client's own say and can be
forged). With no trusted proxy, REMOTE_ADDR.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    remote = str(request.META.get("REMOTE_ADDR", ""))
    hops = settings.TRUSTED_PROXY_COUNT
    if hops <= 0:
        return remote
    forwarded = [part.strip() for part in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    forwarded = [part for part in forwarded if part]
    if len(forwarded) < hops:
        return remote
    return forwarded[-hops]
