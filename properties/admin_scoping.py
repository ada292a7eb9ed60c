"""One mixin that keeps every admin page inside the user's organizations.

A superuser sees everything. A staff user who is not a superuser sees and
changes only rows of the organizations they are a member of (``Membership``),
everywhere the admin shows data:

* change lists, search and actions (``get_queryset``; actions receive it);
* object pages: another organization's object is a 404, not a redirect;
* foreign-key and many-to-many choices, raw-id lookups and autocomplete (the
  remote model's admin is scoped too, and the autocomplete view uses it);
* list filters on relations show only related rows used by the user's rows;
* forms refuse a row whose related objects belong to different organizations,
  and saving forces the organization to one the user is a member of;
* inlines (the same mixin on ``InlineModelAdmin``).

What a member may do is declared per admin class in ``member_permissions``
(a subset of view/add/change/delete) instead of Django's per-user model
permissions: membership is the permission. Members with the ``staff`` role
never delete. Shared defaults (rows with no organization, such as the built-in
emergency rules) are readable by members and changeable by superusers only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.http import Http404

from properties.models import Membership, Organization
from properties.scoping import (
    organization_id_of,
    queryset_for_user,
    scope_for,
    scope_require,
    user_memberships,
    user_organization_ids,
)

# The mixins below are for ModelAdmin and InlineModelAdmin subclasses: the type
# checker sees them as such.
if TYPE_CHECKING:
    _BaseModelAdmin = admin.options.BaseModelAdmin[Any]
    _ModelAdmin = admin.ModelAdmin[Any]
    _InlineModelAdmin = admin.options.InlineModelAdmin[Any, Any]
else:
    _BaseModelAdmin = _ModelAdmin = _InlineModelAdmin = object

ALL_PERMISSIONS = frozenset({"view", "add", "change", "delete"})
DELETING_ROLES = frozenset({Membership.Role.OWNER, Membership.Role.MANAGER})


class ScopedModelForm(forms.ModelForm):
    """Refuses related objects from different organizations in one row (a
    tenancy joining one agency's tenant to another agency's property)."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        assert cleaned is not None  # ModelForm.clean returns cleaned_data
        owners: set[int] = set()
        instance_scope = scope_for(type(self.instance))
        direct = instance_scope is not None and instance_scope.path == "organization"
        if direct and "organization" not in cleaned and self.instance.organization_id:
            owners.add(self.instance.organization_id)
        for value in cleaned.values():
            if not isinstance(value, models.Model):
                continue
            scope = scope_for(type(value))
            if scope is None or scope.many:
                continue
            owner = organization_id_of(value)
            if owner is not None:
                owners.add(owner)
        if len(owners) > 1:
            raise ValidationError("These related records belong to different organizations.", code="cross_org")
        return cleaned


def _user_is_member(user) -> bool:
    return bool(user.is_active and user.is_staff and user_memberships(user))


class OrganizationScopedMixin(_BaseModelAdmin):
    """Shared by ModelAdmin and InlineModelAdmin: queryset, choices, permissions."""

    form: type[forms.ModelForm[Any]] = ScopedModelForm
    member_permissions: frozenset[str] = frozenset({"view"})
    # Fields only a superuser may change (routing numbers, slugs, ...).
    superuser_only_fields: tuple[str, ...] = ()

    # --- rows -----------------------------------------------------------------

    def get_queryset(self, request):
        return queryset_for_user(super().get_queryset(request), request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.remote_field.model
        if "queryset" not in kwargs and scope_for(related) is not None:
            queryset = self.get_field_queryset(None, db_field, request)
            if queryset is None:
                queryset = related._default_manager.get_queryset()
            kwargs["queryset"] = queryset_for_user(queryset, request.user, include_shared=False)
        formfield = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if formfield is not None and related is Organization and not request.user.is_superuser:
            # Landlords never create shared defaults. With one organization there
            # is nothing to choose: the field is disabled, so whatever is posted
            # the form uses their organization (and still validates the row's
            # unique constraints with it).
            formfield.required = True
            organization_ids = user_organization_ids(request.user)
            if len(organization_ids) == 1:
                formfield.empty_label = None
                formfield.initial = next(iter(organization_ids))
                formfield.disabled = True
        return formfield

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        related = db_field.remote_field.model
        if "queryset" not in kwargs and scope_for(related) is not None:
            queryset = self.get_field_queryset(None, db_field, request)
            if queryset is None:
                queryset = related._default_manager.get_queryset()
            kwargs["queryset"] = queryset_for_user(queryset, request.user, include_shared=False)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            fields += [name for name in self.superuser_only_fields if name not in fields]
        return fields

    # --- permissions ----------------------------------------------------------

    def _member_may(self, request, action: str, obj=None) -> bool:
        user = request.user
        if not _user_is_member(user) or action not in self.member_permissions:
            return False
        roles = user_memberships(user)
        # An inline is asked with its parent (a property for its tenancies): the
        # parent's organization decides, not the user's role anywhere else.
        scope = scope_for(type(obj)) if obj is not None else None
        if obj is not None and (isinstance(obj, self.model) or (scope is not None and not scope.many)):
            owner = organization_id_of(obj)
            if owner is None:  # a shared default: read-only for members
                return action == "view"
            if owner not in roles:
                return False
            return action != "delete" or roles[owner] in DELETING_ROLES
        return action != "delete" or any(role in DELETING_ROLES for role in roles.values())

    def has_view_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return self._member_may(request, "view", obj) or self._member_may(request, "change", obj)

    def has_add_permission(self, request, *args):
        # ModelAdmin: (request); InlineModelAdmin: (request, parent_obj).
        if request.user.is_superuser:
            return super().has_add_permission(request, *args)
        return self._member_may(request, "add")

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_change_permission(request, obj)
        return self._member_may(request, "change", obj)

    def has_delete_permission(self, request, obj=None):
        if request.user.is_superuser:
            return super().has_delete_permission(request, obj)
        return self._member_may(request, "delete", obj)


class OrganizationScopedAdminMixin(OrganizationScopedMixin, _ModelAdmin):
    """For ``admin.ModelAdmin`` subclasses: put it first in the bases."""

    def has_module_permission(self, request):
        if request.user.is_superuser:
            return super().has_module_permission(request)
        return _user_is_member(request.user) and bool(self.member_permissions)

    # Rows the object's deletion takes with it whatever their own admin allows (the
    # verbose names: a document's or a property's search chunks, which no one deletes by hand).
    deleted_with: frozenset[str] = frozenset()

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, perms_needed - self.deleted_with, protected

    def get_object(self, request, object_id, from_field=None):
        """Another organization's object (or none at all) is a 404 on every
        object page: change, delete, history and the custom views."""
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404(f"No {self.opts.verbose_name} with that ID.")
        return obj

    def queryset_selected(self, request, selector: Callable[..., models.QuerySet]) -> models.QuerySet:
        """``get_queryset`` for an admin that reads through a selector (the API
        reads through the same one): the selector's rows in the user's
        organizations (every organization for a superuser), in this admin's
        default order, as ``ModelAdmin.get_queryset`` orders them. The change
        list skips ``list_select_related`` for a queryset that already joins
        (as a selector's may), so it is joined here."""
        organization_ids = None if request.user.is_superuser else user_organization_ids(request.user)
        queryset = selector(organization_ids=organization_ids)
        if isinstance(self.list_select_related, (list, tuple)) and queryset.query.select_related:
            queryset = queryset.select_related(*self.list_select_related)
        ordering = self.get_ordering(request)
        return queryset.order_by(*ordering) if ordering else queryset

    def _single_organization(self, request) -> bool:
        return not request.user.is_superuser and len(user_organization_ids(request.user)) <= 1

    def get_list_display(self, request):
        columns = list(super().get_list_display(request))
        if self._single_organization(request):
            columns = [column for column in columns if column != "organization"]
        return columns

    def get_list_filter(self, request):
        filters = []
        for item in super().get_list_filter(request):
            if isinstance(item, str):
                if item == "organization" and self._single_organization(request):
                    continue
                field = get_fields_from_path(self.model, item)[-1]
                if field.is_relation:
                    # Only related rows the user's own rows point at, never the whole table.
                    item = (item, admin.RelatedOnlyFieldListFilter)
            filters.append(item)
        return filters

    def organization_enforce(self, request, obj) -> None:
        """Before saving as a landlord: an unset organization becomes the
        user's only one; any organization outside their memberships is refused."""
        if request.user.is_superuser:
            return
        scope = scope_require(type(obj))
        organization_ids = user_organization_ids(request.user)
        if scope.path == "organization" and obj.organization_id is None and len(organization_ids) == 1:
            obj.organization_id = next(iter(organization_ids))
        if organization_id_of(obj) not in organization_ids:
            raise PermissionDenied("You can only save records of your own organization.")

    def save_model(self, request, obj, form, change):
        self.organization_enforce(request, obj)
        super().save_model(request, obj, form, change)

    def inline_instance_prepare(self, request, instance, *, parent) -> None:
        """Hook: fill fields of a new inline row before it is saved."""

    def save_formset(self, request, form, formset, change):
        instances = formset.save(commit=False)
        for instance in instances:
            self.inline_instance_prepare(request, instance, parent=form.instance)
            self.organization_enforce(request, instance)
            instance.save()
        for instance in formset.deleted_objects:
            instance.delete()
        formset.save_m2m()


class OrganizationScopedInlineMixin(OrganizationScopedMixin, _InlineModelAdmin):
    """For ``TabularInline`` / ``StackedInline`` subclasses: put it first in the bases."""


class ScopedModelAdmin(OrganizationScopedAdminMixin, admin.ModelAdmin):
    pass


class ScopedTabularInline(OrganizationScopedInlineMixin, admin.TabularInline):
    pass


class ScopedStackedInline(OrganizationScopedInlineMixin, admin.StackedInline):
    pass
