"""The OpenAPI schema and its two documentation pages, under /api/.

Whether anyone may read them is ``API_DOCS_PUBLIC`` (open in development,
closed in production): when closed, only a caller with a token or a signed-in
session gets them, everyone else the API's 401/403. The schema lists every
endpoint and field, which is a map for an attacker; the landlords who integrate
have a token anyway.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView


class ApiDocsAccess(BasePermission):
    """Anyone while ``API_DOCS_PUBLIC`` is on (read per request), else any
    authenticated caller."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if settings.API_DOCS_PUBLIC:
            return True
        return bool(request.user and request.user.is_authenticated)


access = {"permission_classes": [ApiDocsAccess]}

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(**access), name="api-schema"),
    # Swagger UI and Redoc from drf-spectacular-sidecar's static files: no CDN needed.
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema", **access), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema", **access), name="api-redoc"),
]
