"""The admin's "Data protection" section.

* **Data requests**: what tenants asked for (over WhatsApp, or entered by the
  landlord with "Add"): approve an export (the ZIP downloads), erase (after a
  confirmation page), or reject. Owners and managers decide; staff may look.
* **Erasures** and **Retention runs**: what was removed, read-only.
* **Retention policies**: one per organization (owners and managers).
* **Audit log**: who viewed, exported, erased, took over or changed what;
  the organization's owners only, read-only, never deleted.

The privacy models are not in ``properties.scoping.SCOPES`` (a file of the
bottom layer this app does not own), so this module scopes them itself by
their ``organization`` column with the same membership rules.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.forms import ModelChoiceField
from django.http import FileResponse, Http404, HttpRequest
from django.template.response import TemplateResponse

from privacy.export import export_filename
from privacy.models import AuditEvent, DataRequest, ErasureRecord, RetentionPolicy, RetentionRun
from privacy.services import DataRequestError, data_request_erase, data_request_export, data_request_reject
from properties.models import Membership, Organization, Tenant
from properties.scoping import user_memberships

DECIDING_ROLES = frozenset({Membership.Role.OWNER, Membership.Role.MANAGER})


class PrivacyScopedAdmin(admin.ModelAdmin):
    """Rows of the user's organizations (by ``organization_id``); ``roles`` may see them."""

    roles: frozenset[str] = frozenset({Membership.Role.OWNER, Membership.Role.MANAGER, Membership.Role.STAFF})
    writing_roles: frozenset[str] = frozenset()

    def organization_ids(self, request: HttpRequest, roles: frozenset[str] | None = None) -> list[int]:
        roles = self.roles if roles is None else roles
        return [org for org, role in user_memberships(request.user).items() if role in roles]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(organization_id__in=self.organization_ids(request))

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404("No such record in your organizations.")
        return obj

    def has_module_permission(self, request):
        return request.user.is_superuser or bool(self.organization_ids(request))

    def has_view_permission(self, request, obj=None):
        if request.user.is_superuser:
            return True
        ids = self.organization_ids(request)
        return bool(ids) and (obj is None or obj.organization_id in ids)

    def has_add_permission(self, request):
        return request.user.is_superuser or bool(self.organization_ids(request, self.writing_roles))

    def has_change_permission(self, request, obj=None):
        if request.user.is_superuser and self.writing_roles:
            return True
        ids = self.organization_ids(request, self.writing_roles)
        return bool(ids) and (obj is None or obj.organization_id in ids)

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(DataRequest)
class DataRequestAdmin(PrivacyScopedAdmin):
    list_display = ["id", "tenant", "kind", "source", "status", "created_at", "decided_at", "decided_by"]
    list_filter = ["status", "kind", "source"]
    fields = ["tenant", "kind", "source", "status", "conversation", "created_at", "decided_at", "decided_by"]
    readonly_fields = ["source", "status", "conversation", "created_at", "decided_at", "decided_by"]
    actions = ["approve_export", "approve_erasure", "reject"]
    writing_roles = DECIDING_ROLES

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return self.readonly_fields
        if obj.tenant_id is None and obj.status == DataRequest.Status.PENDING:
            # Asked from a number that matches no tenant: the landlord says who it is.
            return [*self.readonly_fields, "kind"]
        return [*self.readonly_fields, "tenant", "kind"]  # decided with the actions, not edited

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        tenant = form.base_fields.get("tenant")
        if isinstance(tenant, ModelChoiceField):
            if obj is None:
                tenant.required = True  # the request's organization is the tenant's
            elif tenant.queryset is not None:  # a number that matched no tenant: one of its own organization's
                tenant.queryset = tenant.queryset.filter(organization_id=obj.organization_id)
        return form

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tenant":
            queryset = Tenant.objects.all()
            if not request.user.is_superuser:
                queryset = queryset.filter(organization_id__in=self.organization_ids(request, DECIDING_ROLES))
            kwargs["queryset"] = queryset
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.organization_id = obj.tenant.organization_id
            obj.source = DataRequest.Source.ADMIN
        elif obj.tenant is not None and obj.tenant.organization_id != obj.organization_id:
            raise PermissionDenied("That tenant belongs to another organization.")
        super().save_model(request, obj, form, change)

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not request.user.is_superuser and not self.organization_ids(request, DECIDING_ROLES):
            return {}
        return actions

    def _deciding(self, request, queryset: QuerySet[DataRequest]) -> QuerySet[DataRequest]:
        if request.user.is_superuser:
            return queryset
        return queryset.filter(organization_id__in=self.organization_ids(request, DECIDING_ROLES))

    @admin.action(description="Approve: download the export (one request)")
    def approve_export(self, request, queryset):
        queryset = self._deciding(request, queryset)
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one export request.", messages.WARNING)
            return None
        data_request = queryset.get()
        try:
            payload = data_request_export(request=data_request, user=request.user, via=AuditEvent.Via.ADMIN)
        except DataRequestError as error:
            self.message_user(request, str(error), messages.ERROR)
            return None
        assert data_request.tenant is not None
        return FileResponse(
            payload, as_attachment=True, filename=export_filename(data_request.tenant), content_type="application/zip"
        )

    @admin.action(description="Approve: erase the tenant's content (asks to confirm)")
    def approve_erasure(self, request, queryset):
        queryset = self._deciding(request, queryset).filter(
            kind=DataRequest.Kind.ERASURE, status=DataRequest.Status.PENDING
        )
        if not queryset.exists():
            self.message_user(request, "Select pending erasure requests.", messages.WARNING)
            return None
        if request.POST.get("confirm") == "yes":
            done = 0
            for data_request in queryset.select_related("tenant"):
                try:
                    data_request_erase(request=data_request, user=request.user, via=AuditEvent.Via.ADMIN)
                    done += 1
                except DataRequestError as error:
                    self.message_user(request, f"Request {data_request.pk}: {error}", messages.ERROR)
            self.message_user(request, f"Erased the content of {done} tenant(s). See Erasures for what was removed.")
            return None
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "title": "Erase these tenants' content?",
            "requests": list(queryset.select_related("tenant")),
            "action": "approve_erasure",
            "opts": self.model._meta,
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/privacy/erase_confirm.html", context)

    @admin.action(description="Reject")
    def reject(self, request, queryset):
        count = 0
        for data_request in self._deciding(request, queryset).filter(status=DataRequest.Status.PENDING):
            try:
                data_request_reject(request=data_request, user=request.user, via=AuditEvent.Via.ADMIN)
            except DataRequestError as error:  # decided by someone else meanwhile
                self.message_user(request, f"Request {data_request.pk}: {error}", messages.WARNING)
            else:
                count += 1
        self.message_user(request, f"Rejected {count} request(s).")


class ReadOnlyPrivacyAdmin(PrivacyScopedAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ErasureRecord)
class ErasureRecordAdmin(ReadOnlyPrivacyAdmin):
    list_display = ["erased_at", "tenant", "phone_masked", "erased_by", "via"]
    readonly_fields = ["organization", "tenant", "phone_masked", "erased_by", "via", "erased_at", "counts"]


@admin.register(RetentionRun)
class RetentionRunAdmin(ReadOnlyPrivacyAdmin):
    list_display = ["ran_at", "organization", "dry_run", "counts"]
    list_filter = ["dry_run"]


@admin.register(RetentionPolicy)
class RetentionPolicyAdmin(PrivacyScopedAdmin):
    list_display = ["organization", "message_content_months", "media_months", "updated_at"]
    writing_roles = DECIDING_ROLES

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "organization" and not request.user.is_superuser:
            kwargs["queryset"] = Organization.objects.filter(pk__in=self.organization_ids(request, DECIDING_ROLES))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyPrivacyAdmin):
    """The organization's owners only."""

    roles = frozenset({Membership.Role.OWNER})
    list_display = ["at", "actor_name", "via", "action", "target_type", "target_id", "label"]
    list_filter = ["action", "via", "target_type"]
    search_fields = ["=actor_name", "=target_id"]
    show_full_result_count = False
