"""``?ordering=`` that refuses fields it does not know, instead of ignoring them."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter


class StrictOrderingFilter(OrderingFilter):
    def remove_invalid_fields(self, queryset, fields, view, request):
        valid = super().remove_invalid_fields(queryset, fields, view, request)
        unknown = [term for term in fields if term and term not in valid]
        if unknown:
            allowed = sorted(name for name, _ in self.get_valid_fields(queryset, view, {"request": request}))
            raise ValidationError(
                {"ordering": [f"Cannot order by {', '.join(unknown)}; use one of {', '.join(allowed)}."]}
            )
        return valid
