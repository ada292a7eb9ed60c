"""Test helpers for the emergency screening."""

from __future__ import annotations

from conversations.models import Message
from emergencies.screening import Screened, message_screen


def screen_waiting() -> list[Screened | None]:
    """Do what the ``emergency`` queue's worker does with the screening tasks
    the webhook queued so far, in arrival order."""
    waiting = Message.objects.filter(
        direction=Message.Direction.INBOUND, screened_at__isnull=True, conversation__isnull=False
    ).order_by("id")
    return [message_screen(message_id=pk, stage="worker") for pk in waiting.values_list("id", flat=True)]


def safety_texts(conversation_phone: str) -> list[str]:
    """The safety texts sent to this number as WhatsApp messages (not TwiML)."""
    from emergencies.screening import SAFETY_PURPOSE

    return list(
        Message.objects.filter(
            direction=Message.Direction.OUTBOUND,
            conversation__phone=conversation_phone,
            raw_payload__purpose=SAFETY_PURPOSE,
        )
        .order_by("id")
        .values_list("body", flat=True)
    )
