"""Tenants' data rights through the API: export a tenant's data (a ZIP),
erase a tenant's content, the data requests (approve or reject), and the
audit log (owners only). Exports and erasures need the owner or manager role
in the tenant's organization; the services are the admin's
(``privacy/``)."""

from __future__ import annotations

from typing import IO

from django.db.models import QuerySet
from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from api.filtering import OrganizationFilterSet, StrictFilterBackend
from api.inputs import StrictInput
from api.pagination import AuditCursorPagination
from api.scoping import OrganizationScopedApi
from privacy.erasure import tenant_erase
from privacy.export import export_filename, tenant_export_build
from privacy.models import AuditEvent, DataRequest, ErasureRecord
from privacy.services import DataRequestError, data_request_erase, data_request_export, data_request_reject
from properties.models import Membership, Tenant
from properties.scoping import user_memberships

DECIDING_ROLES = frozenset({Membership.Role.OWNER, Membership.Role.MANAGER})


def _require_role(user, organization_id: int, roles: frozenset[str]) -> None:
    if user_memberships(user).get(organization_id) not in roles:
        raise PermissionDenied("Your role in this organization may not do this (owners and managers may).")


def _zip_response(payload: IO[bytes], tenant: Tenant) -> FileResponse:
    return FileResponse(payload, as_attachment=True, filename=export_filename(tenant), content_type="application/zip")


class ErasureOutput(serializers.ModelSerializer):
    class Meta:
        model = ErasureRecord
        ref_name = "Erasure"
        fields = ["id", "tenant", "phone_masked", "erased_by", "via", "erased_at", "counts"]


class TenantExportApi(OrganizationScopedApi, APIView):
    """Everything the product holds about one tenant, as a ZIP (built in the
    request: a tenant with 1000 messages and 50 photos takes well under a
    second, docs/data-protection.md)."""

    @extend_schema(request=None, responses={(200, "application/zip"): OpenApiTypes.BINARY})
    def post(self, request, pk: int):
        tenant = self.scoped_object(Tenant.objects.select_related("organization"), pk=pk)
        _require_role(request.user, tenant.organization_id, DECIDING_ROLES)
        return _zip_response(tenant_export_build(tenant=tenant, user=request.user, via=AuditEvent.Via.API), tenant)


class TenantEraseApi(OrganizationScopedApi, APIView):
    """Erase a tenant's content everywhere (``{"confirm": true}`` required)."""

    class InputSerializer(StrictInput):
        confirm = serializers.BooleanField()

        class Meta:
            ref_name = "ErasureInput"

    @extend_schema(request=InputSerializer, responses={200: ErasureOutput})
    def post(self, request, pk: int):
        tenant = self.scoped_object(Tenant.objects.all(), pk=pk)
        _require_role(request.user, tenant.organization_id, DECIDING_ROLES)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data["confirm"]:
            raise ValidationError({"confirm": ["Send true to erase: it cannot be undone."]})
        record = tenant_erase(tenant=tenant, user=request.user, via=AuditEvent.Via.API)
        return Response(ErasureOutput(record).data)


class DataRequestOutput(serializers.ModelSerializer):
    class Meta:
        model = DataRequest
        ref_name = "DataRequest"
        fields = [
            "id",
            "organization",
            "tenant",
            "conversation",
            "kind",
            "source",
            "status",
            "created_at",
            "decided_at",
        ]


class DataRequestScopedApi(OrganizationScopedApi):
    def requests(self) -> QuerySet[DataRequest]:
        return DataRequest.objects.filter(organization_id__in=self.organization_ids())


class DataRequestFilter(OrganizationFilterSet):
    class Meta:
        model = DataRequest
        fields = ["status", "kind", "source"]


class AuditEventFilter(OrganizationFilterSet):
    class Meta:
        model = AuditEvent
        fields = ["action", "via", "target_type", "target_id"]


class DataRequestListApi(DataRequestScopedApi, generics.ListAPIView):
    """Data requests of your organizations (tenants asking over WhatsApp, or entered by a landlord)."""

    serializer_class = DataRequestOutput
    filterset_class = DataRequestFilter
    ordering_fields = ["created_at"]
    ordering = ["-created_at", "-id"]

    def get_queryset(self):
        return self.requests()


class DataRequestDecideApi(DataRequestScopedApi, APIView):
    """Approve (an export answers with the ZIP; an erasure with its record) or reject a pending request."""

    class InputSerializer(StrictInput):
        decision = serializers.ChoiceField(choices=["approve", "reject"])

        class Meta:
            ref_name = "DataRequestDecision"

    @extend_schema(request=InputSerializer, responses={(200, "application/zip"): OpenApiTypes.BINARY})
    def post(self, request, pk: int):
        data_request = self.requests().filter(pk=pk).select_related("tenant").first()
        if data_request is None:
            raise Http404
        _require_role(request.user, data_request.organization_id, DECIDING_ROLES)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            if data.validated_data["decision"] == "reject":
                data_request_reject(request=data_request, user=request.user, via=AuditEvent.Via.API)
                return Response(DataRequestOutput(data_request).data)
            if data_request.kind == DataRequest.Kind.EXPORT:
                payload = data_request_export(request=data_request, user=request.user, via=AuditEvent.Via.API)
                assert data_request.tenant is not None
                return _zip_response(payload, data_request.tenant)
            record = data_request_erase(request=data_request, user=request.user, via=AuditEvent.Via.API)
        except DataRequestError as error:
            raise ValidationError({error.field: [str(error)]}) from error
        return Response(ErasureOutput(record).data)


class AuditEventOutput(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        ref_name = "AuditEvent"
        fields = ["id", "organization_id", "at", "actor_name", "via", "action", "target_type", "target_id", "label"]


class AuditEventListApi(OrganizationScopedApi, generics.ListAPIView):
    """The audit log of the organizations you own (owners only)."""

    serializer_class = AuditEventOutput
    filterset_class = AuditEventFilter
    pagination_class = AuditCursorPagination  # newest first; follow ``next``, no counting
    filter_backends = [StrictFilterBackend]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator
            return AuditEvent.objects.none()
        owned = [org for org, role in user_memberships(self.request.user).items() if role == Membership.Role.OWNER]
        if not owned:
            raise PermissionDenied("Only an organization's owners may read its audit log.")
        return AuditEvent.objects.filter(organization_id__in=owned)
