"""Every path under /api/v1/ that names no endpoint (a typo, a missing
trailing slash) answers with the API's own 404 body, not Django's HTML page."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.views import APIView


@extend_schema(exclude=True)
class UnknownEndpointApi(APIView):
    authentication_classes = ()
    permission_classes = ()

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise NotFound("No such API endpoint.")

    get = post = put = patch = delete = http_method_not_allowed
