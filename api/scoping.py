"""Every API view narrows its rows to the caller's organizations through this
mixin; an object outside them is a 404 like one that does not exist.

Unlike the admin, the API scopes superusers too: a token sees exactly the
organizations its user is a member of."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from rest_framework.exceptions import ValidationError

from properties.models import Organization
from properties.scoping import queryset_for_organizations, user_organization_ids

# The mixin below is for APIView subclasses: the type checker sees it as one.
if TYPE_CHECKING:
    from rest_framework.views import APIView as _APIView
else:
    _APIView = object


class OrganizationScopedApi(_APIView):
    def organization_ids(self) -> frozenset[int]:
        return user_organization_ids(self.request.user)

    def scoped(self, queryset: QuerySet) -> QuerySet:
        return queryset_for_organizations(queryset, self.organization_ids())

    def scoped_object(self, queryset: QuerySet, **lookup):
        return get_object_or_404(self.scoped(queryset), **lookup)

    def selected(self, selector: Callable[..., QuerySet]) -> QuerySet:
        """A selector's rows (``issue_list``, ...) in the caller's organizations;
        the admin reads through the same selectors."""
        return selector(organization_ids=self.organization_ids())

    def selected_object(self, selector: Callable[..., QuerySet], **lookup):
        return get_object_or_404(self.selected(selector), **lookup)

    def organization_for_write(self, organization_id: int | None) -> Organization:
        """The organization a new row goes into: the one asked for (if the
        caller is a member), or the caller's only one."""
        ids = self.organization_ids()
        if organization_id is None:
            if len(ids) == 1:
                return Organization.objects.get(pk=next(iter(ids)))
            raise ValidationError({"organization": ["Required: you are a member of several organizations."]})
        if organization_id not in ids:
            raise ValidationError({"organization": [f"No organization with id {organization_id}."]})
        return Organization.objects.get(pk=organization_id)

    def scoped_choice(self, queryset: QuerySet, *, field: str, pk):
        """A related object named in the input, looked up inside the caller's
        organizations; outside them it is reported exactly like a missing one."""
        if pk is None:
            return None
        obj = self.scoped(queryset).filter(pk=pk).first()
        if obj is None:
            raise ValidationError({field: [f"No {queryset.model._meta.verbose_name} with id {pk}."]})
        return obj
