"""Which organization owns a row, and which organizations a user may see.

One table (``SCOPES``) says, for every model a landlord can reach through the
admin or the API, the lookup path from that model to its Organization. The
admin mixin (``properties.admin_scoping``) and the API (``api/``) both filter
through it, so tenant isolation is decided in one place.

Models are named by label, not imported, so this bottom layer does not import
the apps built on top of it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from properties.models import Membership


@dataclass(frozen=True)
class Scope:
    # Lookup path from the model to properties.Organization ("pk" for Organization itself).
    path: str
    # Rows with no organization are defaults shared by everyone: readable by all
    # members, changeable by superusers only (emergency rules, safety messages).
    shared_when_null: bool = False
    # The path crosses a to-many relation: filter with a subquery, not a join,
    # so rows are never duplicated.
    many: bool = False


SCOPES: dict[str, Scope] = {
    "properties.organization": Scope("pk"),
    "properties.whatsappnumber": Scope("organization"),
    "properties.membership": Scope("organization"),
    "properties.property": Scope("organization"),
    "properties.tenant": Scope("organization"),
    "properties.tenancy": Scope("property__organization"),
    "properties.contractor": Scope("organization"),
    "issues.issue": Scope("organization"),
    "issues.issueupdate": Scope("issue__organization"),
    "issues.issuephoto": Scope("issue__organization"),
    "issues.issueclock": Scope("issue__organization"),
    "issues.job": Scope("issue__organization"),
    "issues.deadlinepolicy": Scope("organization"),
    "issues.deadlinerule": Scope("policy__organization"),
    "conversations.conversation": Scope("organization"),
    "conversations.message": Scope("organization"),
    "conversations.media": Scope("message__organization"),
    "retrieval.document": Scope("organization"),
    "retrieval.chunk": Scope("organization"),
    "orchestration.turn": Scope("conversation__organization"),
    "emergencies.emergencyrule": Scope("organization", shared_when_null=True),
    "emergencies.safetymessage": Scope("organization", shared_when_null=True),
    "emergencies.emergencyalert": Scope("organization"),
    # Users a landlord may pick (an issue note's author): members of the same organizations.
    "auth.user": Scope("memberships__organization", many=True),
}


def scope_for(model: type[models.Model]) -> Scope | None:
    return SCOPES.get(model._meta.label_lower)


def scope_require(model: type[models.Model]) -> Scope:
    scope = scope_for(model)
    if scope is None:
        raise ImproperlyConfigured(
            f"{model._meta.label} has no entry in properties.scoping.SCOPES; "
            "say how it reaches its organization before exposing it to landlords."
        )
    return scope


def user_memberships(user) -> dict[int, str]:
    """{organization_id: role} for ``user``, cached on the user object (one query per request)."""
    if user is None or not user.is_authenticated:
        return {}
    cached = getattr(user, "_organization_roles", None)
    if cached is None:
        cached = dict(Membership.objects.filter(user=user).values_list("organization_id", "role"))
        user._organization_roles = cached
    return cached


def user_organization_ids(user) -> frozenset[int]:
    return frozenset(user_memberships(user))


def queryset_for_organizations(
    queryset: models.QuerySet, organization_ids, *, include_shared: bool = True
) -> models.QuerySet:
    """``queryset`` narrowed to rows owned by ``organization_ids`` (plus shared
    defaults where the model has them and ``include_shared``)."""
    scope = scope_require(queryset.model)
    organization_ids = list(organization_ids)
    condition = models.Q(**{f"{scope.path}__in": organization_ids})
    if scope.shared_when_null and include_shared:
        condition |= models.Q(**{f"{scope.path}__isnull": True})
    if scope.many:
        inner = queryset.model._default_manager.filter(condition).values("pk")
        return queryset.filter(pk__in=inner)
    return queryset.filter(condition)


def queryset_for_organizations_or_all(
    queryset: models.QuerySet, organization_ids: Collection[int] | None
) -> models.QuerySet:
    """``queryset`` narrowed to ``organization_ids``, or whole when that is None
    (a superuser in the admin): how the selectors take their scope."""
    return queryset if organization_ids is None else queryset_for_organizations(queryset, organization_ids)


def queryset_for_user(queryset: models.QuerySet, user, *, include_shared: bool = True) -> models.QuerySet:
    """What ``user`` may see of ``queryset``: everything for a superuser, their
    organizations' rows otherwise (nothing without a membership)."""
    if user.is_superuser:
        return queryset
    return queryset_for_organizations(queryset, user_organization_ids(user), include_shared=include_shared)


def organization_id_of(instance: models.Model) -> int | None:
    """The organization that owns ``instance`` (None for a shared default or an
    unrouted message). Follows the SCOPES path one relation at a time."""
    scope = scope_require(type(instance))
    if scope.many:
        raise ImproperlyConfigured(f"{type(instance)._meta.label} belongs to several organizations")
    if scope.path == "pk":
        return instance.pk
    *hops, last = scope.path.split("__")
    current = instance
    for hop in hops:
        current = getattr(current, hop)
        if current is None:
            return None
    return getattr(current, f"{last}_id")


def scoped_models() -> list[type[models.Model]]:
    return [apps.get_model(label) for label in SCOPES]
