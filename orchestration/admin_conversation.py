"""The conversation page: the transcript with photos and turn traces, the
identity and gathering state, emergency alerts, and the controls a landlord
needs to take over from the assistant. It reads from conversations,
emergencies and orchestration, so it lives at the top with the engine."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Subquery
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from conversations.models import Conversation, Message
from conversations.selectors import conversation_list, message_list
from conversations.takeover import (
    LANDLORD_MESSAGE_MAX_CHARS,
    ConversationActionError,
    conversation_handback,
    conversation_landlord_message_send,
    conversation_takeover,
)
from emergencies.models import EmergencyAlert
from orchestration.models import Turn
from properties.admin_display import ADMIN_CSS, age, badge
from properties.admin_scoping import ScopedModelAdmin

# The transcript shows this many most recent messages unless asked for all.
TRANSCRIPT_RECENT = 200
# Served inline; anything else downloads as a file (a tenant cannot make us serve HTML).
INLINE_IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}


class LandlordMessageForm(forms.Form):
    body = forms.CharField(
        label="Message to the tenant",
        max_length=LANDLORD_MESSAGE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Write to the tenant as the landlord…"}),
    )


class EmergencyFilter(admin.SimpleListFilter):
    title = "emergency"
    parameter_name = "emergency"

    def lookups(self, request, model_admin):
        return [("yes", "Has an emergency alert (not dismissed)")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(has_emergency=True)
        return queryset


class EscalatedFilter(admin.SimpleListFilter):
    title = "escalated"
    parameter_name = "escalated"

    def lookups(self, request, model_admin):
        return [("yes", "Escalated to a person"), ("no", "Not escalated")]

    def queryset(self, request, queryset):
        if self.value() in {"yes", "no"}:
            return queryset.filter(escalated_at__isnull=self.value() == "no")
        return queryset


@admin.register(Conversation)
class ConversationAdmin(ScopedModelAdmin):
    list_display = [
        "phone",
        "tenant",
        "property",
        "identity_status",
        "gathering_state",
        "handled_by",
        "whatsapp_messages",
        "emergency",
        "last_message",
        "last_inbound",
        "organization",
    ]
    list_select_related = ["organization", "tenant", "property"]
    list_filter = [
        EmergencyFilter,
        "bot_paused",
        ("retired_at", admin.EmptyFieldListFilter),
        EscalatedFilter,
        "identity_status",
        "gathering_state",
        "property",
        "organization",
    ]
    search_fields = ["phone", "tenant__name", "property__code", "property__address"]
    show_full_result_count = False
    list_per_page = 50
    actions = ["take_over", "hand_back"]
    member_permissions = frozenset({"view", "change"})
    change_form_template = "admin/conversations/conversation/change_form.html"
    fieldsets = [
        (
            "Who",
            {
                "fields": [
                    "organization",
                    "phone",
                    "whatsapp_id",
                    "language",
                    "tenant",
                    "property",
                    "candidate_property",
                ]
            },
        ),
        ("State", {"fields": ["identity_status", "gathering_state", "gathering_started_at", "emergency_category"]}),
        ("Hand-over", {"fields": ["bot_paused", "escalated_at", "escalation_reason"]}),
        # STOP / START: conversations.opt_out; retired: conversations.number_change
        ("WhatsApp messages", {"fields": ["opted_out_at", "retired_at"]}),
        ("Times", {"fields": ["last_inbound_at", "last_turn_at", "created_at", "updated_at"]}),
    ]

    class Media:
        css = {"all": [ADMIN_CSS]}

    def get_readonly_fields(self, request, obj=None):
        # State changes only through the engine's services and the buttons here.
        return [field.name for field in self.model._meta.fields if field.name != "id"]

    def has_add_permission(self, request):
        return False

    def get_queryset(self, request):
        last_message = Message.objects.filter(conversation=OuterRef("pk")).order_by("-created_at", "-id")
        return self.queryset_selected(request, conversation_list).annotate(
            has_emergency=Exists(
                EmergencyAlert.objects.filter(conversation=OuterRef("pk")).exclude(
                    status=EmergencyAlert.Status.DISMISSED
                )
            ),
            last_body=Subquery(last_message.values("body")[:1]),
        )

    # --- columns ---

    @admin.display(description="Handled by", ordering="bot_paused")
    def handled_by(self, obj):
        return badge("person (taken over)", "paused") if obj.bot_paused else "assistant"

    @admin.display(description="Messages", ordering="opted_out_at")
    def whatsapp_messages(self, obj):
        """Opted out (STOP): only the safety reply to their own message goes until they write again."""
        return badge(f"opted out {obj.opted_out_at:%d %b %Y}", "paused") if obj.opted_out_at else "on"

    @admin.display(description="Emergency", ordering="-has_emergency")
    def emergency(self, obj):
        return badge("EMERGENCY", "urgency-emergency", "attention") if obj.has_emergency else ""

    @admin.display(description="Last message")
    def last_message(self, obj):
        return Truncator(obj.last_body or "").chars(60)

    @admin.display(description="Last inbound", ordering="last_inbound_at")
    def last_inbound(self, obj):
        return age(obj.last_inbound_at)

    # --- list actions ---

    @admin.action(description="Take over (pause the assistant)", permissions=["change"])
    def take_over(self, request, queryset):
        changed = sum(conversation_takeover(conversation=c, user=request.user) for c in queryset)
        self.message_user(request, f"Took over {changed} conversation(s); the assistant stays silent there.")

    @admin.action(description="Hand back to the assistant", permissions=["change"])
    def hand_back(self, request, queryset):
        changed = sum(conversation_handback(conversation=c, user=request.user) for c in queryset)
        self.message_user(request, f"Handed {changed} conversation(s) back to the assistant.")

    # --- the conversation page ---

    def get_urls(self):
        def view(method):
            return self.admin_site.admin_view(require_POST(method))

        return [
            path("<path:object_id>/takeover/", view(self.takeover_view), name="conversations_conversation_takeover"),
            path("<path:object_id>/handback/", view(self.handback_view), name="conversations_conversation_handback"),
            path("<path:object_id>/send/", view(self.send_view), name="conversations_conversation_send"),
            *super().get_urls(),
        ]

    def _conversation_for_action(self, request, object_id) -> Conversation:
        conversation = self.get_object(request, object_id)
        if not self.has_change_permission(request, conversation):
            raise PermissionDenied
        return conversation

    def _back(self, conversation):
        return HttpResponseRedirect(reverse("admin:conversations_conversation_change", args=[conversation.pk]))

    def takeover_view(self, request, object_id):
        conversation = self._conversation_for_action(request, object_id)
        if conversation_takeover(conversation=conversation, user=request.user):
            self.message_user(request, "You have taken over: the assistant stays silent until you hand back.")
        else:
            self.message_user(request, "This conversation was already taken over.", messages.WARNING)
        return self._back(conversation)

    def handback_view(self, request, object_id):
        conversation = self._conversation_for_action(request, object_id)
        if conversation_handback(conversation=conversation, user=request.user):
            self.message_user(request, "Handed back: the assistant answers new messages again.")
        else:
            self.message_user(request, "The assistant was already answering.", messages.WARNING)
        return self._back(conversation)

    def send_view(self, request, object_id):
        conversation = self._conversation_for_action(request, object_id)
        form = LandlordMessageForm(request.POST)
        if not form.is_valid():
            for error in form.errors.get("body", []):
                self.message_user(request, f"Not sent: {error}", messages.ERROR)
            return self._back(conversation)
        try:
            sent = conversation_landlord_message_send(
                conversation=conversation, user=request.user, body=form.cleaned_data["body"]
            )
        except ConversationActionError as error:
            self.message_user(request, f"Not sent: {error}", messages.ERROR)
        else:
            note = "" if conversation.bot_paused else " The assistant is still answering; take over to pause it."
            self.message_user(request, f"Message queued for sending ({len(sent)} part(s)).{note}")
        return self._back(conversation)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        conversation = self.get_object(request, object_id)
        show_all = request.GET.get("all") == "1"
        extra_context = {
            **(extra_context or {}),
            **conversation_page_context(conversation, show_all=show_all),
            "can_act": self.has_change_permission(request, conversation),
            "send_form": LandlordMessageForm(),
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
        }
        return super().change_view(request, object_id, form_url, extra_context)


def conversation_page_context(conversation: Conversation, *, show_all: bool = False) -> dict:
    """The transcript as one timeline: messages (with their photos) and, after
    the inbound messages each turn handled, that turn's trace."""
    messages_qs = message_list(conversation=conversation).order_by("-created_at", "-id")
    total = conversation.messages.count()
    recent = list(messages_qs if show_all else messages_qs[:TRANSCRIPT_RECENT])
    recent.reverse()
    shown_ids = {m.pk for m in recent}
    turns = list(Turn.objects.filter(conversation=conversation).order_by("created_at", "id"))
    if not show_all and recent:
        turns = [t for t in turns if t.created_at >= recent[0].created_at]

    after_message: dict[int, list[Turn]] = {}
    loose: list[Turn] = []
    for turn in turns:
        anchors = [mid for mid in turn.message_ids if mid in shown_ids]
        if anchors:
            after_message.setdefault(max(anchors), []).append(turn)
        else:
            loose.append(turn)

    timeline: list[dict] = []
    for message in recent:
        while loose and loose[0].created_at <= message.created_at:
            timeline.append({"kind": "turn", "turn": turn_view(loose.pop(0))})
        timeline.append({"kind": "message", "message": message, "media": list(message.media.all())})
        for turn in after_message.get(message.pk, []):
            timeline.append({"kind": "turn", "turn": turn_view(turn)})
    timeline.extend({"kind": "turn", "turn": turn_view(turn)} for turn in loose)

    return {
        "timeline": timeline,
        "message_total": total,
        "messages_hidden": total - len(recent),
        "alerts": list(conversation.emergency_alerts.select_related("message").order_by("-created_at")),
        "issues": list(conversation.issues.order_by("-created_at")),
    }


def turn_view(turn: Turn) -> dict:
    """A Turn as the trace template reads it."""
    from properties.admin_display import pretty_json

    calls = []
    for call in turn.tool_calls or []:
        calls.append(
            {
                "name": call.get("name", "?"),
                "input": pretty_json(call.get("input", {})),
                "result": call.get("result"),
                "is_error": bool(call.get("is_error")),
                "rejection": call.get("rejection") or "",
            }
        )
    chosen = [c["name"] for c in calls if not c["is_error"]]
    return {
        "obj": turn,
        "calls": calls,
        "chosen": chosen[-1] if chosen else "",
        "hits": [
            {
                "document": hit.get("document") or hit.get("document_title") or hit.get("document_id", "?"),
                "heading": hit.get("heading") or hit.get("heading_path") or "",
                "score": hit.get("score", ""),
                "vector_rank": hit.get("vector_rank"),
                "keyword_rank": hit.get("keyword_rank"),
                "answers": _answers(hit),
            }
            for hit in turn.retrieval_hits or []
            if isinstance(hit, dict)
        ],
        "url": reverse("admin:orchestration_turn_change", args=[turn.pk]),
    }


def _answers(hit: dict[str, Any]) -> str:
    """Whether the search took its passages to answer, with the answerability
    head's probability where it decided (older traces have neither)."""
    if "answers" not in hit:
        return ""
    said = "yes" if hit["answers"] else "no"
    return f"{said} ({hit['answerability']:.0%})" if hit.get("answerability") is not None else said


# --- Messages and media ------------------------------------------------------------
