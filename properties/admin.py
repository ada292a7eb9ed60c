"""The landlord's admin: organization settings, properties, tenants and
tenancies (the issue list is ``issues.admin``). Every class is scoped to the
user's organizations by ``properties.admin_scoping``."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Q

from properties.admin_scoping import ALL_PERMISSIONS, ScopedModelAdmin, ScopedModelForm, ScopedTabularInline
from properties.location import coordinates_clean
from properties.models import (
    Contractor,
    Membership,
    Organization,
    Property,
    RepairCategory,
    Tenancy,
    Tenant,
    WhatsAppNumber,
)
from properties.selectors import property_list
from properties.services import areas_clean, phone_normalize, whatsapp_clean

admin.site.site_header = "Repairs: landlord workplace"
admin.site.site_title = "Repairs"
admin.site.index_title = "Your organization"
admin.site.site_url = None  # there is no public site to "view"

# The issue list is the landlord's main screen: give its columns the width.
admin.site.enable_nav_sidebar = False

# --- Organization -------------------------------------------------------------


class WhatsAppNumberInline(ScopedTabularInline):
    model = WhatsAppNumber
    extra = 0
    verbose_name = "WhatsApp number"
    verbose_name_plural = "WhatsApp numbers (tenants message these; set up with Twilio by the operator)"
    # Routing numbers are set up by the operator with Twilio; landlords see them.
    member_permissions = frozenset({"view"})


class MembershipInline(ScopedTabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    member_permissions = frozenset({"view"})


class LlmFlagSelect(forms.NullBooleanSelect):
    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.choices = [
            ("unknown", "Follow the site-wide setting"),
            ("true", "On for this organization"),
            ("false", "Off for this organization"),
        ]


class OrganizationForm(ScopedModelForm):
    llm_orchestration_enabled = forms.NullBooleanField(label="LLM assistant", required=False, widget=LlmFlagSelect)


@admin.register(Organization)
class OrganizationAdmin(ScopedModelAdmin):
    form = OrganizationForm
    list_display = ["name", "slug", "country", "llm_flag", "emergency_contact_phone"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [WhatsAppNumberInline, MembershipInline]
    member_permissions = frozenset({"view", "change"})
    superuser_only_fields = ("slug", "messaging_service_sid")
    fieldsets = [
        (None, {"fields": ["name", "slug", "country", "timezone", "holiday_region"]}),
        (
            "Assistant",
            {
                "fields": ["llm_orchestration_enabled", "vision_enabled"],
                "description": "The assistant: empty follows the site-wide USE_LLM_ORCHESTRATION setting; "
                "Yes or No overrides it for this organization. Photos: shown to the model unless turned off "
                "here (or site-wide by VISION_ENABLED).",
            },
        ),
        ("Notifications", {"fields": ["notification_email", "contact_whatsapp"]}),
        ("Repairs", {"fields": ["auto_dispatch"]}),
        (
            "Emergencies",
            {
                "fields": [
                    "emergency_contact_name",
                    "emergency_contact_phone",
                    "emergency_contact_email",
                    "emergency_sensitivity",
                ]
            },
        ),
        ("Routing", {"fields": ["messaging_service_sid"]}),
    ]

    def get_prepopulated_fields(self, request, obj=None):
        return {} if "slug" in self.get_readonly_fields(request, obj) else super().get_prepopulated_fields(request, obj)

    @admin.display(description="LLM assistant")
    def llm_flag(self, obj):
        if obj.llm_orchestration_enabled is None:
            return "site default"
        return "on" if obj.llm_orchestration_enabled else "off"


@admin.register(Membership)
class MembershipAdmin(ScopedModelAdmin):
    list_display = ["user", "organization", "role"]
    list_select_related = ["user", "organization"]
    list_filter = ["role", "organization"]
    search_fields = ["user__username", "user__email"]
    autocomplete_fields = ["user"]


# --- Properties, tenants, tenancies ---------------------------------------------


class TenancyInline(ScopedTabularInline):
    model = Tenancy
    extra = 0
    autocomplete_fields = ["tenant", "property"]
    member_permissions = ALL_PERMISSIONS


class PropertyForm(ScopedModelForm):
    """Coordinates are WGS84 decimal degrees, both or neither (for matching
    tenants' location pins: docs/whatsapp-pins-buttons.md)."""

    def clean(self):
        cleaned = super().clean()
        try:
            cleaned["latitude"], cleaned["longitude"] = coordinates_clean(
                cleaned.get("latitude"), cleaned.get("longitude")
            )
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                self.add_error(field, messages)
        return cleaned


@admin.register(Property)
class PropertyAdmin(ScopedModelAdmin):
    form = PropertyForm
    list_display = ["code", "address", "postcode", "located", "open_issues", "organization"]
    list_select_related = ["organization"]
    search_fields = ["code", "address", "postcode"]
    list_filter = ["organization"]
    inlines = [TenancyInline]
    member_permissions = ALL_PERMISSIONS
    deleted_with = frozenset({"chunk"})  # the search chunks of its own documents
    # Explicit: Meta.ordering is dropped from the GROUP BY query the count makes.
    ordering = ["code"]

    def get_queryset(self, request):
        return self.queryset_selected(request, property_list)

    @admin.display(description="On the map", boolean=True)
    def located(self, obj):
        return obj.latitude is not None and obj.longitude is not None

    @admin.display(description="Open issues", ordering="open_issue_count")
    def open_issues(self, obj):
        return obj.open_issue_count


class TenantForm(ScopedModelForm):
    def clean_phone(self):
        try:
            return phone_normalize(self.cleaned_data["phone"])
        except ValidationError as error:
            raise ValidationError(error.message_dict["phone"]) from None


@admin.register(Tenant)
class TenantAdmin(ScopedModelAdmin):
    form = TenantForm
    list_display = ["name", "phone", "email", "organization"]
    list_select_related = ["organization"]
    search_fields = ["name", "phone", "email"]
    list_filter = ["organization"]
    inlines = [TenancyInline]
    member_permissions = ALL_PERMISSIONS
    readonly_fields = ["whatsapp_messages"]

    @admin.display(description="WhatsApp messages")
    def whatsapp_messages(self, obj):
        """Opted out (STOP) in a conversation of theirs (linked, or from their
        number) in this organization: read from ``Conversation.opted_out_at``
        through the relations, so this floor imports nothing above it."""
        if obj is None or obj.pk is None:
            return "—"
        since = (
            obj.organization.conversations.filter(
                Q(tenant=obj) | Q(phone=obj.phone), opted_out_at__isnull=False, retired_at__isnull=True
            )
            .order_by("-opted_out_at")
            .values_list("opted_out_at", flat=True)
            .first()
        )
        if since is None:
            return "on"
        return f"opted out since {since:%d %b %Y %H:%M} UTC (they sent STOP; on again when they write or send START)"


@admin.register(Tenancy)
class TenancyAdmin(ScopedModelAdmin):
    list_display = ["tenant", "property", "start_date", "end_date", "current"]
    list_select_related = ["tenant", "property"]
    list_filter = ["property"]
    search_fields = ["tenant__name", "tenant__phone", "property__code", "property__address"]
    autocomplete_fields = ["tenant", "property"]
    member_permissions = ALL_PERMISSIONS

    @admin.display(boolean=True, description="Current")
    def current(self, obj):
        import datetime

        return obj.end_date is None or obj.end_date >= datetime.date.today()


WEEKDAYS = [(0, "Mon"), (1, "Tue"), (2, "Wed"), (3, "Thu"), (4, "Fri"), (5, "Sat"), (6, "Sun")]


class ContractorForm(ScopedModelForm):
    trades = forms.MultipleChoiceField(
        choices=RepairCategory.choices, widget=forms.CheckboxSelectMultiple, required=False
    )
    working_days = forms.TypedMultipleChoiceField(
        choices=WEEKDAYS, coerce=int, widget=forms.CheckboxSelectMultiple, required=False
    )

    def clean_areas(self):
        return areas_clean(self.cleaned_data["areas"])

    def clean_whatsapp(self):
        try:
            return whatsapp_clean(self.cleaned_data["whatsapp"])
        except ValidationError as error:
            raise ValidationError(error.message_dict["whatsapp"]) from None


@admin.register(Contractor)
class ContractorAdmin(ScopedModelAdmin):
    form = ContractorForm
    list_display = ["name", "trade_list", "area_list", "whatsapp", "email", "active", "organization"]
    list_filter = ["active", "organization"]
    search_fields = ["name", "whatsapp", "email"]
    member_permissions = frozenset({"view", "add", "change"})
    fields = [
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
    ]

    @admin.display(description="Trades")
    def trade_list(self, obj):
        labels = dict(RepairCategory.choices)
        return ", ".join(labels.get(t, t) for t in obj.trades) or "—"

    @admin.display(description="Areas")
    def area_list(self, obj):
        return ", ".join(obj.areas) or "everywhere"
