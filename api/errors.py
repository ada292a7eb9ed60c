"""One error body for every API failure:

    {"error": {"status": 404, "code": "not_found", "message": "Not found.", "fields": {...}}}

``fields`` appears only for invalid input and maps each field (or
``non_field_errors``) to its messages. Another organization's object and an
object that does not exist give the same 404, byte for byte.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.http import Http404, JsonResponse
from django.views import defaults
from psycopg import errors as pg_errors
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


def _flatten(detail) -> dict | list | str:
    if isinstance(detail, dict):
        return {key: _flatten(value) for key, value in detail.items()}
    if isinstance(detail, list):
        return [_flatten(value) for value in detail]
    return str(detail)


def api_exception_handler(exc, context):
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, IntegrityError) and isinstance(exc.__cause__, pg_errors.UniqueViolation):
        # Two requests creating the same row at once (a client retrying after a timeout): both passed
        # validation, the database kept one.
        exc = Conflict("A record with these values exists already (was the request sent twice?).")
    elif isinstance(exc, DjangoValidationError):
        # A service's model validation: {field: [messages]} or a list of messages.
        if hasattr(exc, "error_dict"):
            fields = {("non_field_errors" if k == "__all__" else k): v for k, v in exc.message_dict.items()}
        else:
            fields = {"non_field_errors": exc.messages}
        exc = exceptions.ValidationError(fields)
    response = exception_handler(exc, context)
    if response is None:
        return None  # a real bug: Django's 500 handling takes over
    body: dict = {"status": response.status_code}
    if isinstance(exc, exceptions.ValidationError):
        body["code"] = "invalid"
        body["message"] = "The request is not valid; see fields."
        detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        body["fields"] = _flatten(detail)
    else:
        codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        body["code"] = codes if isinstance(codes, str) else "error"
        body["message"] = str(getattr(exc, "detail", exc))
    response.data = {"error": body}
    return response


def error_response(*, status_code: int, code: str, message: str) -> Response:
    return Response({"error": {"status": status_code, "code": code, "message": message}}, status=status_code)


def server_error(request, *args, **kwargs):
    """Django's ``handler500``: API callers get the API's error body, everyone
    else Django's own page."""
    if request.path.startswith("/api/"):
        body = {"error": {"status": 500, "code": "server_error", "message": "Server error."}}
        return JsonResponse(body, status=500)
    return defaults.server_error(request, *args, **kwargs)
