from django.contrib import admin

from orchestration.models import EmergencyAlert, EmergencyRule, SafetyMessage, Turn


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ["created_at", "conversation", "model", "outcome", "gathering_before", "gathering_after"]
    list_select_related = ["conversation"]
    raw_id_fields = ["conversation"]


@admin.register(EmergencyRule)
class EmergencyRuleAdmin(admin.ModelAdmin):
    list_display = ["phrase", "category", "country", "language", "organization", "enabled"]
    list_filter = ["category", "country", "language", "enabled"]
    search_fields = ["phrase"]


@admin.register(SafetyMessage)
class SafetyMessageAdmin(admin.ModelAdmin):
    list_display = ["country", "category", "organization"]


@admin.register(EmergencyAlert)
class EmergencyAlertAdmin(admin.ModelAdmin):
    list_display = ["created_at", "category", "status", "conversation", "source"]
    list_select_related = ["conversation"]
    raw_id_fields = ["conversation", "message"]
