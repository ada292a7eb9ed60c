"""``?ordering=`` that refuses fields it does not know, instead of ignoring them,
puts rows without a value last either way (only where a value can be missing,
so that indexes keep serving the others), and orders choice fields by their
meaning instead of their spelling."""

from __future__ import annotations

from django.core.exceptions import FieldDoesNotExist
from django.db.models import Case, F, IntegerField, Value, When
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter


class StrictOrderingFilter(OrderingFilter):
    """A view may name ``ordering_ranks``: {field: values in ascending order}.
    ``?ordering=urgency`` then runs routine, urgent, emergency when the ranks
    say so, not alphabetically."""

    def remove_invalid_fields(self, queryset, fields, view, request):
        valid = super().remove_invalid_fields(queryset, fields, view, request)
        unknown = [term for term in fields if term and term not in valid]
        if unknown:
            allowed = sorted(name for name, _ in self.get_valid_fields(queryset, view, {"request": request}))
            raise ValidationError(
                {"ordering": [f"Cannot order by {', '.join(unknown)}; use one of {', '.join(allowed)}."]}
            )
        return valid

    def filter_queryset(self, request, queryset, view):
        ordering = self.get_ordering(request, queryset, view)
        if not ordering:
            return queryset
        ranks: dict[str, list[str]] = getattr(view, "ordering_ranks", {})
        terms = []
        for term in ordering:
            name, descending = term.lstrip("-"), term.startswith("-")
            if name in ranks:
                rank = f"{name}_rank"
                whens = [When(**{name: value}, then=Value(i)) for i, value in enumerate(ranks[name])]
                queryset = queryset.alias(
                    **{rank: Case(*whens, default=Value(len(whens)), output_field=IntegerField())}
                )
                name = rank
            if _nullable(queryset, name):
                # PostgreSQL puts NULLs first in a descending order: a conversation nobody wrote in
                # would head "latest first".
                terms.append(F(name).desc(nulls_last=True) if descending else F(name).asc(nulls_last=True))
            else:  # no NULLS clause, so that an index in that order still serves it
                terms.append(F(name).desc() if descending else F(name).asc())
        if not {"id", "pk"} & {term.lstrip("-") for term in ordering}:
            # Rows that tie ("?ordering=status") in one order on every page: page 2 neither repeats nor skips.
            terms.append(F("pk").asc())
        return queryset.order_by(*terms)


def _nullable(queryset, name: str) -> bool:
    try:
        return queryset.model._meta.get_field(name).null
    except FieldDoesNotExist:  # an annotation (next_due) or a rank: may be empty
        return not name.endswith("_rank")
