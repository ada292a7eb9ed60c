"""Emergency rules, safety messages and alerts in the admin. Rules and
messages with no organization are the built-in defaults, readable by every
member and changeable by superusers only."""

from __future__ import annotations

from django.contrib import admin
from django.utils.text import Truncator

from conversations.admin import ReadOnlyMixin, conversation_link
from emergencies.models import EmergencyAlert, EmergencyRule, SafetyMessage
from properties.admin_display import ADMIN_CSS, badge
from properties.admin_scoping import ALL_PERMISSIONS, ScopedModelAdmin


class SharedDefaultsMixin:
    """Rules and messages with no organization are the built-in defaults."""

    @admin.display(description="Applies to", ordering="organization")
    def scope(self, obj):
        return obj.organization or badge("default for everyone", "muted")


@admin.register(EmergencyRule)
class EmergencyRuleAdmin(SharedDefaultsMixin, ScopedModelAdmin):
    list_display = ["phrase", "category", "country", "language", "is_pattern", "scope", "enabled"]
    list_select_related = ["organization"]
    list_filter = ["category", "country", "language", "enabled", "organization"]
    search_fields = ["phrase"]
    member_permissions = ALL_PERMISSIONS
    fields = ["organization", "country", "language", "phrase", "is_pattern", "category", "enabled"]


@admin.register(SafetyMessage)
class SafetyMessageAdmin(SharedDefaultsMixin, ScopedModelAdmin):
    list_display = ["country", "category", "language", "short_body", "scope"]
    list_select_related = ["organization"]
    list_filter = ["country", "category", "language", "organization"]
    search_fields = ["body"]
    member_permissions = ALL_PERMISSIONS

    @admin.display(description="Message")
    def short_body(self, obj):
        return Truncator(obj.body).chars(100)


@admin.register(EmergencyAlert)
class EmergencyAlertAdmin(ReadOnlyMixin, ScopedModelAdmin):
    list_display = [
        "created_at",
        "category",
        "verdict",
        "conversation_column",
        "raised_by",
        "reasoning",
        "landlord_notified_at",
        "organization",
    ]
    list_select_related = ["organization"]
    list_filter = ["status", "category", "source", "organization"]
    date_hierarchy = "created_at"

    class Media:
        css = {"all": [ADMIN_CSS]}

    @admin.display(description="Verdict", ordering="status")
    def verdict(self, obj):
        return badge(obj.get_status_display(), f"verdict-{obj.status}")

    @admin.display(description="Conversation", ordering="conversation")
    def conversation_column(self, obj):
        return conversation_link(obj.conversation_id)

    @admin.display(description="Raised by", ordering="source")
    def raised_by(self, obj):
        return obj.trigger

    @admin.display(description="Reasoning")
    def reasoning(self, obj):
        return Truncator(obj.validation_reasoning).chars(100) or "—"
