"""Reads of conversations and their messages that the admin and the API share."""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Prefetch, QuerySet

from conversations.models import Conversation, Media, Message
from properties.scoping import queryset_for_organizations_or_all


def conversation_list(*, organization_ids: Collection[int] | None) -> QuerySet[Conversation]:
    """Conversations of ``organization_ids`` (every organization when None)
    with their tenant and property loaded."""
    queryset = Conversation.objects.select_related("tenant", "property")
    return queryset_for_organizations_or_all(queryset, organization_ids)


def message_list(*, conversation: Conversation) -> QuerySet[Message]:
    """The conversation's messages with their media in the order they arrived
    (``index``); callers order the messages."""
    return conversation.messages.prefetch_related(Prefetch("media", queryset=Media.objects.order_by("index")))
