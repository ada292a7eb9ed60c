from django.contrib import admin

from properties.models import (
    Issue,
    IssuePhoto,
    IssueUpdate,
    Membership,
    Organization,
    Property,
    Tenancy,
    Tenant,
    WhatsAppNumber,
)


class WhatsAppNumberInline(admin.TabularInline):
    model = WhatsAppNumber
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "country", "llm_orchestration_enabled"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [WhatsAppNumberInline, MembershipInline]


@admin.register(Property)
class PropertyAdmin(admin.ModelAdmin):
    list_display = ["code", "address", "postcode", "organization"]
    list_select_related = ["organization"]
    search_fields = ["code", "address", "postcode"]
    list_filter = ["organization"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "phone", "organization"]
    list_select_related = ["organization"]
    search_fields = ["name", "phone"]


@admin.register(Tenancy)
class TenancyAdmin(admin.ModelAdmin):
    list_display = ["tenant", "property", "start_date", "end_date"]
    list_select_related = ["tenant", "property"]
    autocomplete_fields = ["tenant", "property"]


class IssueUpdateInline(admin.TabularInline):
    model = IssueUpdate
    extra = 0
    readonly_fields = ["author", "user", "body", "created_at"]


class IssuePhotoInline(admin.TabularInline):
    model = IssuePhoto
    extra = 0
    readonly_fields = ["media", "created_at"]


@admin.register(Issue)
class IssueAdmin(admin.ModelAdmin):
    list_display = ["reference", "title", "urgency", "status", "property", "tenant", "category", "created_at"]
    list_select_related = ["property", "tenant"]
    list_filter = ["urgency", "status", "category"]
    search_fields = ["reference", "title", "description"]
    raw_id_fields = ["conversation"]
    inlines = [IssueUpdateInline, IssuePhotoInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role"]
    list_select_related = ["user", "organization"]
