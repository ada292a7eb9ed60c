"""Conversations and their messages (read only)."""

from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api.filtering import OrganizationFilterSet, StrictFilterBackend
from api.pagination import MessageCursorPagination
from api.scoping import OrganizationScopedApi
from conversations.models import Conversation, GatheringState, IdentityStatus, Media, Message
from conversations.selectors import conversation_list, message_list


class ConversationFilter(OrganizationFilterSet):
    identity_status = django_filters.MultipleChoiceFilter(choices=IdentityStatus.choices)
    gathering_state = django_filters.MultipleChoiceFilter(choices=GatheringState.choices)
    bot_paused = django_filters.BooleanFilter()
    escalated = django_filters.BooleanFilter(field_name="escalated_at", lookup_expr="isnull", exclude=True)
    tenant = django_filters.NumberFilter(field_name="tenant_id")
    property = django_filters.NumberFilter(field_name="property_id")
    phone = django_filters.CharFilter(field_name="phone")
    # retired=false: each number's live conversation only (conversations.number_change).
    retired = django_filters.BooleanFilter(field_name="retired_at", lookup_expr="isnull", exclude=True)

    class Meta:
        model = Conversation
        fields: list[str] = []


class ConversationOutput(serializers.ModelSerializer):
    class TenantRef(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()

        class Meta:
            ref_name = "ConversationTenant"

    class PropertyRef(serializers.Serializer):
        id = serializers.IntegerField()
        code = serializers.CharField()

        class Meta:
            ref_name = "ConversationProperty"

    tenant = TenantRef(allow_null=True)
    property = PropertyRef(allow_null=True)

    class Meta:
        model = Conversation
        ref_name = "Conversation"
        fields = [
            "id",
            "organization",
            "phone",
            "profile_name",
            "tenant",
            "property",
            "language",
            "identity_status",
            "gathering_state",
            "bot_paused",
            "emergency_category",
            "escalated_at",
            "escalation_reason",
            "opted_out_at",
            "retired_at",
            "last_inbound_at",
            "last_turn_at",
            "created_at",
        ]


class ConversationListApi(OrganizationScopedApi, generics.ListAPIView):
    OutputSerializer = ConversationOutput
    serializer_class = OutputSerializer
    filterset_class = ConversationFilter
    ordering_fields = ["last_inbound_at", "created_at", "updated_at"]
    ordering = ["-last_inbound_at", "-id"]

    def get_queryset(self):
        return self.selected(conversation_list)


class ConversationDetailApi(OrganizationScopedApi, APIView):
    OutputSerializer = ConversationOutput

    @extend_schema(responses=OutputSerializer)
    def get(self, request, pk: int):
        return Response(self.OutputSerializer(self.selected_object(conversation_list, pk=pk)).data)


class MessageListApi(OrganizationScopedApi, generics.ListAPIView):
    """A conversation's messages in the order they happened (cursor pagination:
    follow ``next``)."""

    class OutputSerializer(serializers.ModelSerializer):
        class MediaOutput(serializers.ModelSerializer):
            class Meta:
                model = Media
                ref_name = "MessageMedia"
                fields = [
                    "id",
                    "index",
                    "content_type",
                    "size",
                    "download_state",
                    "duration_seconds",
                    "transcription_state",
                    "transcript",
                    "transcript_language",
                ]

        media = MediaOutput(many=True, read_only=True)

        class Meta:
            model = Message
            ref_name = "Message"
            fields = [
                "id",
                "direction",
                "author",
                "kind",
                "body",
                "latitude",
                "longitude",
                "location_name",
                "button_payload",
                "button_text",
                "status",
                "flags",
                "media",
                "template_sid",
                "error_code",
                "created_at",
                "sent_at",
            ]

    serializer_class = OutputSerializer
    pagination_class = MessageCursorPagination
    filter_backends = [StrictFilterBackend]  # cursor and page_size only: one fixed order

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator
            return Message.objects.none()
        conversation = self.scoped_object(Conversation.objects.all(), pk=self.kwargs["pk"])
        return message_list(conversation=conversation)
