"""The webhook-time path: runs inside the request for every new inbound
message and returns the safety text for the TwiML when the request decides
(``emergencies.screening`` says which decisions are taken there)."""

from __future__ import annotations

from conversations.models import Message
from emergencies.models import EmergencyAlert
from emergencies.screening import SAFETY_PURPOSE, message_screen_in_request


def on_inbound_stored(sender, message, repeat=False, **kwargs) -> str | None:
    if (conversation_id := message.conversation_id) is None:
        return None
    if repeat:  # the same TwiML as the first delivery got, unless a WhatsApp message carried it
        return _reply_given_in_request(message, conversation_id)
    return message_screen_in_request(message)


def _reply_given_in_request(message: Message, conversation_id: int) -> str | None:
    sent = EmergencyAlert.objects.filter(message=message).values_list("safety_reply", flat=True).first()
    if not sent:
        return None
    sent_by_worker = Message.objects.filter(
        conversation_id=conversation_id,
        direction=Message.Direction.OUTBOUND,
        raw_payload__purpose=SAFETY_PURPOSE,
        pk__gt=message.pk,
    ).exists()
    return None if sent_by_worker else sent
