"""Query parameters of the lists: one that a list does not know is a 400, not
ignored (a typo such as ``?stauts=open`` would otherwise return everything),
and every list can be narrowed to one of the caller's organizations."""

from __future__ import annotations

import re

import django_filters
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter

# What a yes/no parameter takes; anything else is a 400 (django-filter would
# drop the filter silently and return the whole list).
YES, NO = {"true", "1", "yes"}, {"false", "0", "no"}
# An id: a whole number that fits PostgreSQL's bigint. django-filter takes any
# decimal ("-1e5000" costs Django seconds to make whole, then the driver a 500).
WHOLE = re.compile(r"-?[0-9]{1,19}")
BIGINT = 2**63


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset_kwargs(self, request, queryset, view):
        """The values of yes/no and id parameters checked, and yes/no ones
        spelled as django-filter reads them."""
        kwargs = super().get_filterset_kwargs(request, queryset, view)
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is None:
            return kwargs
        data, errors = kwargs["data"].copy(), {}
        for name, value in kwargs["data"].items():
            declared = filterset_class.base_filters.get(name)
            given = value.strip()
            if isinstance(declared, django_filters.BooleanFilter) and given:
                if given.lower() in YES | NO:
                    data[name] = "true" if given.lower() in YES else "false"
                else:
                    errors[name] = [f"{name} takes true or false, not {value[:40]!r}."]
            elif (
                isinstance(declared, django_filters.NumberFilter)
                and given
                and not (WHOLE.fullmatch(given) and -BIGINT <= int(given) < BIGINT)
            ):
                errors[name] = [f"{name} takes an id (a whole number), not {value[:40]!r}."]
        if errors:
            raise ValidationError(errors)
        kwargs["data"] = data
        return kwargs

    def filter_queryset(self, request, queryset, view):
        known = {"format", *_paging_parameters(view)}
        if any(issubclass(backend, OrderingFilter) for backend in view.filter_backends):
            known.add("ordering")
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            known |= set(filterset_class.base_filters)
        unknown = sorted(set(request.query_params) - known)
        if unknown:
            takes = ", ".join(sorted(known))
            raise ValidationError(
                {name: [f"This list has no parameter {name!r}; it takes {takes}."] for name in unknown}
            )
        return super().filter_queryset(request, queryset, view)


def _paging_parameters(view) -> list[str]:
    """What the view's paginator reads: page and page_size, or cursor and
    page_size, or nothing (a CSV written whole)."""
    paginator = getattr(view, "paginator", None)
    names = ["page_query_param", "cursor_query_param", "page_size_query_param"]
    return [value for name in names if (value := getattr(paginator, name, None))]


class OrganizationFilterSet(django_filters.FilterSet):
    """``organization``: a plain id, so that one outside the caller's
    organizations matches nothing, the same as an id that does not exist."""

    organization = django_filters.NumberFilter(field_name="organization_id")
