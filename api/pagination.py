"""Page-number pagination for ordinary lists; a cursor for messages and the
audit log, which grow without end and are never counted."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination


class PagePagination(PageNumberPagination):
    page_size_query_param = "page_size"

    def __init__(self) -> None:
        # Read per request (a view makes one paginator per request), not at import.
        self.max_page_size = settings.API_MAX_PAGE_SIZE

    def paginate_queryset(self, queryset, request, view=None):
        """A page that is not a number is a 400 (DRF answers 404, which reads
        as "no such list"); a page past the last stays a 404."""
        page = request.query_params.get(self.page_query_param, "")
        if page and page != "last" and not page.isdigit():
            raise ValidationError({self.page_query_param: [f"A page is a whole number from 1, not {page[:40]!r}."]})
        return super().paginate_queryset(queryset, request, view)


class _Cursor(CursorPagination):
    page_size_query_param = "page_size"

    def __init__(self) -> None:
        self.max_page_size = settings.API_MAX_PAGE_SIZE

    def decode_cursor(self, request):
        """A cursor this list did not give is a 400 (DRF answers 404)."""
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise ValidationError(
                {self.cursor_query_param: ["Not a cursor this list gave: use its next or previous link."]}
            ) from None


class MessageCursorPagination(_Cursor):
    ordering = ("created_at", "id")


class AuditCursorPagination(_Cursor):
    ordering = ("-at", "-id")  # newest first
