"""Turn traces (read-only), emergency rules, safety messages and alerts."""

from __future__ import annotations

from django.contrib import admin
from django.template.loader import render_to_string

from conversations.admin import ReadOnlyMixin, conversation_link
from conversations.models import GatheringState
from orchestration.admin_conversation import turn_view
from orchestration.models import Turn
from properties.admin_display import ADMIN_CSS
from properties.admin_paginator import CappedCountPaginator
from properties.admin_scoping import ScopedModelAdmin


class TurnTroubleFilter(admin.SimpleListFilter):
    """Fixed choices: no DISTINCT scan of the (large) turn table to build the filter."""

    title = "trouble"
    parameter_name = "trouble"

    def lookups(self, request, model_admin):
        return [
            ("rejected", "A tool call was rejected"),
            ("error", "Ended in an error"),
            ("fallback", "Fallback reply"),
        ]

    def queryset(self, request, queryset):
        if self.value() == "rejected":
            return queryset.filter(gating_rejections__gt=0)
        if self.value() == "error":
            return queryset.exclude(error="")
        if self.value() == "fallback":
            return queryset.filter(outcome="fallback")
        return queryset


class GatheringAfterFilter(admin.SimpleListFilter):
    title = "gathering state after the turn"
    parameter_name = "gathering_after"

    def lookups(self, request, model_admin):
        return GatheringState.choices

    def queryset(self, request, queryset):
        return queryset.filter(gathering_after=self.value()) if self.value() else queryset


@admin.register(Turn)
class TurnAdmin(ReadOnlyMixin, ScopedModelAdmin):
    list_display = [
        "created_at",
        "conversation_column",
        "outcome",
        "tool_chosen",
        "gating_rejections",
        "hits",
        "input_tokens",
        "output_tokens",
        "images_column",
        "cost_usd",
        "latency_total_ms",
        "model",
    ]
    list_select_related = ["conversation"]
    # Only filters with fixed choices: a filter over free-text columns would
    # scan the whole table for its distinct values on every page.
    list_filter = [TurnTroubleFilter, GatheringAfterFilter]
    search_fields = ["=conversation__phone", "=outcome", "=model"]
    show_full_result_count = False
    paginator = CappedCountPaginator
    list_per_page = 100
    fields = ["conversation_column", "trace", "images_column", "created_at"]
    readonly_fields = ["conversation_column", "trace", "images_column", "created_at"]

    class Media:
        css = {"all": [ADMIN_CSS]}

    def get_ordering(self, request):
        return ["-created_at", "-id"]

    @admin.display(description="Conversation", ordering="conversation")
    def conversation_column(self, obj):
        return conversation_link(obj.conversation_id)

    @admin.display(description="Tool chosen")
    def tool_chosen(self, obj):
        names = [call.get("name", "?") for call in obj.tool_calls or [] if not call.get("is_error")]
        return names[-1] if names else "—"

    @admin.display(description="Photos seen (tokens)", ordering="image_tokens")
    def images_column(self, obj):
        """The photos shown to the model and their estimated share of the input tokens (and so of the cost)."""
        if not obj.images_sent:
            return "—"
        return f"{obj.images_sent} ({obj.image_tokens} tokens)"

    @admin.display(description="Knowledge hits")
    def hits(self, obj):
        return len(obj.retrieval_hits or [])

    @admin.display(description="Trace")
    def trace(self, obj):
        return render_to_string("admin/orchestration/turn/_trace.html", {"t": turn_view(obj), "open": True})
