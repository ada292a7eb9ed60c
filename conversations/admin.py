from django.contrib import admin

from conversations.models import Conversation, Media, Message


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    fields = ["created_at", "direction", "author", "body", "status", "flags"]
    readonly_fields = fields
    can_delete = False


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = [
        "phone",
        "organization",
        "tenant",
        "identity_status",
        "gathering_state",
        "bot_paused",
        "last_inbound_at",
    ]
    list_select_related = ["organization", "tenant"]
    list_filter = ["identity_status", "gathering_state", "bot_paused"]
    search_fields = ["phone"]
    raw_id_fields = ["tenant", "property", "candidate_property"]
    inlines = [MessageInline]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["created_at", "direction", "author", "conversation", "status", "flags"]
    list_select_related = ["conversation"]
    list_filter = ["direction", "status"]
    raw_id_fields = ["conversation", "organization"]
    show_full_result_count = False


@admin.register(Media)
class MediaAdmin(admin.ModelAdmin):
    list_display = ["message", "index", "content_type", "size", "download_state"]
    raw_id_fields = ["message"]
