"""A person takes a conversation over from the assistant, hands it back, and
writes to the tenant themselves.

While ``bot_paused`` is set (a person took over, or the assistant escalated the
conversation) the turn engine stays silent; inbound messages are still stored
and shown to the landlord. Handing back resumes the assistant.
"""

from __future__ import annotations

import logging

from django.db import transaction

from conversations.models import Conversation, Message
from conversations.outbound import WHATSAPP_MAX_CHARS, outbound_text_queue

logger = logging.getLogger(__name__)

# A landlord's message may be split into several WhatsApp messages, up to this many.
LANDLORD_MESSAGE_MAX_CHARS = 4 * WHATSAPP_MAX_CHARS


class ConversationActionError(ValueError):
    """The request cannot be done; the message says why, for the user."""


def conversation_takeover(*, conversation: Conversation, user) -> bool:
    """Pause the assistant on ``conversation``. Returns False if it was already paused."""
    changed = Conversation.objects.filter(pk=conversation.pk, bot_paused=False).update(bot_paused=True)
    conversation.bot_paused = True
    if changed:
        logger.info("conversation %s taken over by user %s", conversation.pk, getattr(user, "pk", None))
    return bool(changed)


def conversation_handback(*, conversation: Conversation, user) -> bool:
    """Let the assistant answer again; this also closes an escalation (the
    ``escalate`` tool and the fallback pause the assistant until a person hands
    the conversation back). Returns False if it was not paused."""
    changed = Conversation.objects.filter(pk=conversation.pk, bot_paused=True).update(
        bot_paused=False, escalated_at=None
    )
    conversation.bot_paused = False
    if changed:
        conversation.escalated_at = None
        logger.info("conversation %s handed back by user %s", conversation.pk, getattr(user, "pk", None))
    return bool(changed)


def conversation_landlord_message_send(*, conversation: Conversation, user, body: str) -> list[Message]:
    """Send ``body`` to the tenant as the landlord. Outside the 24-hour window
    the outbound task sends the ``generic`` template instead. Returns the
    stored outbound messages (sent after commit)."""
    body = (body or "").strip()
    if conversation.retired_at is not None:
        raise ConversationActionError(
            "This number stopped being the tenant's: write to them in the conversation with their current number."
        )
    if not body:
        raise ConversationActionError("The message is empty.")
    if len(body) > LANDLORD_MESSAGE_MAX_CHARS:
        raise ConversationActionError(f"The message is longer than {LANDLORD_MESSAGE_MAX_CHARS} characters.")
    with transaction.atomic():
        messages = outbound_text_queue(
            conversation=conversation, body=body, author=Message.Author.LANDLORD, purpose="generic"
        )
        # Who wrote it, for the record (the message rows have no user column).
        for message in messages:
            message.raw_payload = {**message.raw_payload, "sent_by_user_id": getattr(user, "pk", None)}
            message.save(update_fields=["raw_payload"])
    return messages
