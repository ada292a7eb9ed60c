"""A paginator for tables that grow without bound (messages, turns)."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property

COUNT_CAP = 10_000


class CappedCountPaginator(Paginator):
    """Counts at most ``COUNT_CAP + 1`` rows (``SELECT count(*) FROM (... LIMIT n)``)
    instead of the whole table; the change list then says "10001" and offers
    the first pages. Narrow with filters to go further back."""

    @cached_property
    def count(self) -> int:
        object_list = self.object_list
        if isinstance(object_list, QuerySet):
            return object_list[: COUNT_CAP + 1].count()
        return len(object_list)
