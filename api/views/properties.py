"""Properties, tenants and tenancies: list, read, create, change."""

from __future__ import annotations

import django_filters
from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.filtering import OrganizationFilterSet
from api.inputs import StrictInput
from api.scoping import OrganizationScopedApi
from properties.models import Contractor, Property, RepairCategory, Tenancy, Tenant
from properties.selectors import contractor_list, property_list, tenancy_list, tenant_list
from properties.services import (
    contractor_create,
    contractor_update,
    property_create,
    property_update,
    tenancy_create,
    tenancy_update,
    tenant_create,
    tenant_update,
)

# --- Properties -------------------------------------------------------------------

ACCESS_HELP = "How a contractor gets in (keys, codes, parking); sent with each job."


class PropertyOutput(serializers.ModelSerializer):
    open_issue_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Property
        ref_name = "Property"
        fields = [
            "id",
            "organization",
            "code",
            "address",
            "postcode",
            "latitude",
            "longitude",
            "access_notes",
            "open_issue_count",
            "created_at",
        ]


class PropertyFilter(OrganizationFilterSet):
    q = django_filters.CharFilter(method="filter_q", label="Search code, address and postcode")

    class Meta:
        model = Property
        fields: list[str] = []

    def filter_q(self, queryset, name, value):
        return queryset.filter(Q(code__icontains=value) | Q(address__icontains=value) | Q(postcode__icontains=value))


def degrees_field(limit: int, help_text: str = "") -> serializers.DecimalField:
    """A latitude (limit 90) or longitude (180) in decimal degrees, any precision."""
    return serializers.DecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=-limit,
        max_value=limit,
        required=False,
        allow_null=True,
        help_text=help_text or None,
    )


class PropertyListApi(OrganizationScopedApi, generics.ListAPIView):
    class InputSerializer(StrictInput):
        organization = serializers.IntegerField(required=False, help_text="Needed only if you belong to several.")
        code = serializers.CharField(max_length=32)
        address = serializers.CharField(max_length=300)
        postcode = serializers.CharField(max_length=16, required=False, allow_blank=True, default="")
        latitude = degrees_field(90, "WGS84 decimal degrees; with longitude, for matching tenants' location pins.")
        longitude = degrees_field(180)
        access_notes = serializers.CharField(required=False, allow_blank=True, default="", help_text=ACCESS_HELP)

        class Meta:
            ref_name = "PropertyCreate"

    OutputSerializer = PropertyOutput
    serializer_class = OutputSerializer
    filterset_class = PropertyFilter
    ordering_fields = ["code", "address", "created_at", "open_issue_count"]
    ordering = ["code", "id"]

    def get_queryset(self):
        return self.selected(property_list)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        organization = self.organization_for_write(data.pop("organization", None))
        created = property_create(organization=organization, **data)
        return Response(self.OutputSerializer(self.selected(property_list).get(pk=created.pk)).data, status=201)


class PropertyDetailApi(OrganizationScopedApi, APIView):
    class InputSerializer(StrictInput):
        code = serializers.CharField(max_length=32, required=False)
        address = serializers.CharField(max_length=300, required=False)
        postcode = serializers.CharField(max_length=16, required=False, allow_blank=True)
        latitude = degrees_field(90, "WGS84 decimal degrees; null with longitude null takes it off the map.")
        longitude = degrees_field(180)
        access_notes = serializers.CharField(required=False, allow_blank=True, help_text=ACCESS_HELP)

        class Meta:
            ref_name = "PropertyChange"

    OutputSerializer = PropertyOutput

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.selected_object(property_list, pk=pk)).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request, pk: int):
        obj = self.scoped_object(Property.objects.all(), pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        property_update(property=obj, **serializer.validated_data)
        return Response(self.OutputSerializer(self.selected_object(property_list, pk=pk)).data)


# --- Tenants ----------------------------------------------------------------------


class TenantOutput(serializers.ModelSerializer):
    class TenancyBrief(serializers.ModelSerializer):
        property_code = serializers.CharField(source="property.code")

        class Meta:
            model = Tenancy
            ref_name = "TenantTenancy"
            fields = ["id", "property", "property_code", "start_date", "end_date"]

    tenancies = TenancyBrief(many=True, read_only=True)

    class Meta:
        model = Tenant
        ref_name = "Tenant"
        fields = ["id", "organization", "name", "phone", "email", "tenancies", "created_at"]


class TenantFilter(OrganizationFilterSet):
    q = django_filters.CharFilter(method="filter_q", label="Search name, phone and email")
    phone = django_filters.CharFilter(field_name="phone")

    class Meta:
        model = Tenant
        fields: list[str] = []

    def filter_q(self, queryset, name, value):
        return queryset.filter(Q(name__icontains=value) | Q(phone__icontains=value) | Q(email__icontains=value))


class TenantListApi(OrganizationScopedApi, generics.ListAPIView):
    class InputSerializer(StrictInput):
        organization = serializers.IntegerField(required=False, help_text="Needed only if you belong to several.")
        name = serializers.CharField(max_length=200)
        phone = serializers.CharField(max_length=32, help_text="E.164, e.g. +447700900123")
        email = serializers.EmailField(required=False, allow_blank=True, default="")

        class Meta:
            ref_name = "TenantCreate"

    OutputSerializer = TenantOutput
    serializer_class = OutputSerializer
    filterset_class = TenantFilter
    ordering_fields = ["name", "created_at"]
    ordering = ["name", "id"]

    def get_queryset(self):
        return self.selected(tenant_list)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        organization = self.organization_for_write(data.pop("organization", None))
        created = tenant_create(organization=organization, **data)
        return Response(self.OutputSerializer(self.selected(tenant_list).get(pk=created.pk)).data, status=201)


class TenantDetailApi(OrganizationScopedApi, APIView):
    class InputSerializer(StrictInput):
        name = serializers.CharField(max_length=200, required=False)
        phone = serializers.CharField(max_length=32, required=False)
        email = serializers.EmailField(required=False, allow_blank=True)

        class Meta:
            ref_name = "TenantChange"

    OutputSerializer = TenantOutput

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.selected_object(tenant_list, pk=pk)).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request, pk: int):
        obj = self.scoped_object(Tenant.objects.all(), pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tenant_update(tenant=obj, **serializer.validated_data)
        return Response(self.OutputSerializer(self.selected_object(tenant_list, pk=pk)).data)


# --- Tenancies --------------------------------------------------------------------


class TenancyOutput(serializers.ModelSerializer):
    class TenantRef(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()

        class Meta:
            ref_name = "TenancyTenant"

    class PropertyRef(serializers.Serializer):
        id = serializers.IntegerField()
        code = serializers.CharField()

        class Meta:
            ref_name = "TenancyProperty"

    tenant = TenantRef()
    property = PropertyRef()

    class Meta:
        model = Tenancy
        ref_name = "Tenancy"
        fields = ["id", "tenant", "property", "start_date", "end_date"]


class TenancyFilter(django_filters.FilterSet):
    organization = django_filters.NumberFilter(field_name="property__organization_id")
    tenant = django_filters.NumberFilter(field_name="tenant_id")
    property = django_filters.NumberFilter(field_name="property_id")
    current = django_filters.BooleanFilter(
        method="filter_current", label="Only running today (true), or ended or not started (false)"
    )

    class Meta:
        model = Tenancy
        fields: list[str] = []

    def filter_current(self, queryset, name, value):
        if value is None:
            return queryset
        today = timezone.localdate()
        running = Q(start_date__lte=today) & (Q(end_date__isnull=True) | Q(end_date__gte=today))
        return queryset.filter(running) if value else queryset.exclude(running)


class TenancyListApi(OrganizationScopedApi, generics.ListAPIView):
    class InputSerializer(StrictInput):
        tenant = serializers.IntegerField()
        property = serializers.IntegerField()
        start_date = serializers.DateField()
        end_date = serializers.DateField(required=False, allow_null=True, default=None)

        class Meta:
            ref_name = "TenancyCreate"

    OutputSerializer = TenancyOutput
    serializer_class = OutputSerializer
    filterset_class = TenancyFilter
    ordering_fields = ["start_date", "end_date"]
    ordering = ["-start_date", "id"]

    def get_queryset(self):
        return self.selected(tenancy_list)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        tenant = self.scoped_choice(Tenant.objects.all(), field="tenant", pk=data["tenant"])
        property = self.scoped_choice(Property.objects.all(), field="property", pk=data["property"])
        created = tenancy_create(
            tenant=tenant, property=property, start_date=data["start_date"], end_date=data["end_date"]
        )
        return Response(
            self.OutputSerializer(self.selected(tenancy_list).get(pk=created.pk)).data, status=status.HTTP_201_CREATED
        )


class TenancyDetailApi(OrganizationScopedApi, APIView):
    class InputSerializer(StrictInput):
        start_date = serializers.DateField(required=False)
        end_date = serializers.DateField(required=False, allow_null=True)

        class Meta:
            ref_name = "TenancyChange"

    OutputSerializer = TenancyOutput

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.selected_object(tenancy_list, pk=pk)).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request, pk: int):
        obj = self.scoped_object(Tenancy.objects.all(), pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tenancy_update(tenancy=obj, **serializer.validated_data)
        return Response(self.OutputSerializer(self.selected_object(tenancy_list, pk=pk)).data)


# --- Contractors ------------------------------------------------------------------


class ContractorOutput(serializers.ModelSerializer):
    class Meta:
        model = Contractor
        ref_name = "Contractor"
        fields = [
            "id",
            "organization",
            "name",
            "trades",
            "areas",
            "whatsapp",
            "email",
            "callout_limit",
            "working_days",
            "work_starts",
            "work_ends",
            "active",
            "created_at",
        ]


class ContractorFields(StrictInput):
    """The fields a contractor is created with or changed by."""

    trades = serializers.ListField(
        child=serializers.ChoiceField(choices=RepairCategory.choices), required=False, help_text="Repair categories."
    )
    areas = serializers.ListField(
        child=serializers.CharField(max_length=8), required=False, help_text="Postcode districts; none: everywhere."
    )
    whatsapp = serializers.CharField(max_length=32, required=False, allow_blank=True)
    email = serializers.EmailField(required=False, allow_blank=True)
    callout_limit = serializers.DecimalField(
        max_digits=8, decimal_places=2, min_value=0, required=False, allow_null=True
    )
    working_days = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=6), required=False, help_text="0 = Monday."
    )
    work_starts = serializers.TimeField(required=False)
    work_ends = serializers.TimeField(required=False)
    active = serializers.BooleanField(required=False)


class ContractorFilter(OrganizationFilterSet):
    class Meta:
        model = Contractor
        fields: list[str] = []


class ContractorListApi(OrganizationScopedApi, generics.ListAPIView):
    """Your organizations' contractors; POST adds one."""

    class InputSerializer(ContractorFields):
        organization = serializers.IntegerField(required=False, help_text="Needed only if you belong to several.")
        name = serializers.CharField(max_length=200)

        class Meta:
            ref_name = "ContractorCreate"

    OutputSerializer = ContractorOutput
    serializer_class = OutputSerializer
    filterset_class = ContractorFilter
    ordering = ["name", "id"]

    def get_queryset(self):
        return self.selected(contractor_list)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        organization = self.organization_for_write(data.pop("organization", None))
        created = contractor_create(organization=organization, **data)
        return Response(self.OutputSerializer(created).data, status=201)


class ContractorDetailApi(OrganizationScopedApi, APIView):
    class InputSerializer(ContractorFields):
        name = serializers.CharField(max_length=200, required=False)

        class Meta:
            ref_name = "ContractorChange"

    OutputSerializer = ContractorOutput

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.selected_object(contractor_list, pk=pk)).data)

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def patch(self, request, pk: int):
        obj = self.scoped_object(Contractor.objects.all(), pk=pk)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        contractor_update(contractor=obj, **serializer.validated_data)
        return Response(self.OutputSerializer(self.selected_object(contractor_list, pk=pk)).data)
