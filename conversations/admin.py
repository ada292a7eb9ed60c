"""Messages and media in the admin, and the read-only mixin the other
read-only pages share. The conversation page itself (transcript, turn
traces, alerts, takeover) composes several apps and lives in
``orchestration.admin_conversation``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from conversations.models import Media, Message
from properties.admin_display import ADMIN_CSS, media_thumbnail
from properties.admin_paginator import CappedCountPaginator
from properties.admin_scoping import ScopedModelAdmin

# The transcript shows this many most recent messages unless asked for all.
TRANSCRIPT_RECENT = 200
# Served inline; anything else downloads as a file (a tenant cannot make us serve HTML).
INLINE_IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
# Voice notes play in the page (<audio controls>): served inline with their own type too.
INLINE_AUDIO_TYPES = {"audio/ogg", "audio/opus", "audio/mpeg", "audio/mp4", "audio/aac", "audio/amr"}

# The mixin below is for ModelAdmin subclasses: the type checker sees it as one.
if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Any]
else:
    _ModelAdmin = object


def conversation_link(conversation_id):
    if conversation_id is None:
        return "—"
    url = reverse("admin:conversations_conversation_change", args=[conversation_id])
    return format_html('<a href="{}">conversation {}</a>', url, conversation_id)


class RoutingFilter(admin.SimpleListFilter):
    """Superusers only: messages to numbers no organization owns."""

    title = "routing"
    parameter_name = "routing"

    def lookups(self, request, model_admin):
        if not request.user.is_superuser:
            return []
        return [("unrouted", "Unrouted (no organization)"), ("routed", "Routed")]

    def queryset(self, request, queryset):
        if self.value() == "unrouted":
            return queryset.filter(organization__isnull=True)
        if self.value() == "routed":
            return queryset.filter(organization__isnull=False)
        return queryset


class ReadOnlyMixin(_ModelAdmin):
    """Records nobody edits (messages, media, traces, alerts): every field is
    shown read-only, so the admin builds no form for them."""

    def get_readonly_fields(self, request, obj=None):
        shown = [f.name for f in self.model._meta.fields if f.name != "id" and f.name not in (self.exclude or ())]
        return list(dict.fromkeys([*super().get_readonly_fields(request, obj), *shown]))

    def has_add_permission(self, request, *args):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Message)
class MessageAdmin(ReadOnlyMixin, ScopedModelAdmin):
    list_display = [
        "created_at",
        "direction",
        "author",
        "short_body",
        "conversation",
        "status",
        "flags",
        "purpose",
        "organization",
    ]
    # Conversation.__str__ names its organization.
    list_select_related = ["conversation__organization", "organization"]
    list_filter = [RoutingFilter, "direction", "status", "author"]
    # Exact matches only: the table is large and these columns are indexed or selective.
    search_fields = ["=provider_sid", "=from_address", "=to_address", "=conversation__phone"]
    show_full_result_count = False
    paginator = CappedCountPaginator
    list_per_page = 100
    readonly_fields = ["conversation_link"]

    def get_fields(self, request, obj=None):
        names = [field.name for field in self.model._meta.fields if field.name != "id"]
        return ["conversation_link", *names]

    @admin.display(description="Body")
    def short_body(self, obj):
        return Truncator(obj.body).chars(80)

    @admin.display(description="Purpose")
    def purpose(self, obj):
        return (obj.raw_payload or {}).get("purpose", "") if obj.direction == Message.Direction.OUTBOUND else ""

    @admin.display(description="Conversation page")
    def conversation_link(self, obj):
        if obj.conversation_id is None:
            return "— (unrouted)"
        url = reverse("admin:conversations_conversation_change", args=[obj.conversation_id])
        return format_html('<a href="{}">Open the conversation</a>', url)


@admin.register(Media)
class MediaAdmin(ReadOnlyMixin, ScopedModelAdmin):
    list_display = [
        "message",
        "index",
        "preview",
        "content_type",
        "size",
        "download_state",
        "transcription_state",
        "short_transcript",
    ]
    list_select_related = ["message"]
    list_filter = ["download_state", "transcription_state"]
    show_full_result_count = False
    paginator = CappedCountPaginator
    exclude = ["file"]
    readonly_fields = ["preview", "player"]

    class Media:
        css = {"all": [ADMIN_CSS]}

    @admin.display(description="Preview")
    def preview(self, obj):
        return media_thumbnail(obj)

    @admin.display(description="Transcript")
    def short_transcript(self, obj):
        return Truncator(obj.transcript).chars(80)

    @admin.display(description="Listen")
    def player(self, obj):
        """A voice note plays here; staff only, through the scoped file view."""
        if not obj.file or obj.content_type not in INLINE_AUDIO_TYPES:
            return "—"
        url = reverse("admin:conversations_media_file", args=[obj.pk])
        return format_html('<audio controls preload="none" src="{}" id="voice-note-{}"></audio>', url, obj.pk)

    def get_urls(self):
        return [
            path(
                "<path:object_id>/file/",
                self.admin_site.admin_view(self.file_view),
                name="conversations_media_file",
            ),
            *super().get_urls(),
        ]

    def file_view(self, request, object_id):
        """The stored photo or voice note, behind the same scoping as everything else."""
        media = self.get_object(request, object_id)
        if not self.has_view_permission(request, media):
            raise PermissionDenied
        if not media.file:
            raise Http404("This media file has not been downloaded.")
        inline = media.content_type in INLINE_IMAGE_TYPES | INLINE_AUDIO_TYPES
        response = FileResponse(
            media.file.open("rb"),
            content_type=media.content_type if inline else "application/octet-stream",
            as_attachment=not inline,
            filename=media.file.name.rsplit("/", 1)[-1],
        )
        response["X-Content-Type-Options"] = "nosniff"
        response["Cache-Control"] = "private, max-age=3600"
        return response
