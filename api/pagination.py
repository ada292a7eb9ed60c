"""Page-number pagination for ordinary lists; a cursor for messages and the
audit log, which grow without end and are never counted."""

from __future__ import annotations

from django.conf import settings
from rest_framework.pagination import CursorPagination, PageNumberPagination


class PagePagination(PageNumberPagination):
    page_size_query_param = "page_size"

    def __init__(self) -> None:
        # Read per request (a view makes one paginator per request), not at import.
        self.max_page_size = settings.API_MAX_PAGE_SIZE


class MessageCursorPagination(CursorPagination):
    ordering = ("created_at", "id")
    page_size_query_param = "page_size"

    def __init__(self) -> None:
        self.max_page_size = settings.API_MAX_PAGE_SIZE


class AuditCursorPagination(CursorPagination):
    ordering = ("-at", "-id")  # newest first
    page_size_query_param = "page_size"

    def __init__(self) -> None:
        self.max_page_size = settings.API_MAX_PAGE_SIZE
