"""The webhook-time path: runs inside the request for every new inbound
message and returns the safety text for the TwiML when the request decides
(``emergencies.screening`` says which decisions are taken there)."""

from __future__ import annotations

from django.db import transaction

from conversations.models import Message
from emergencies.screening import message_screen_in_request


def on_inbound_stored(sender, message, repeat=False, **kwargs) -> str | None:
    if message.conversation_id is None:
        return None
    if repeat:
        return _repeat_reply(message)
    return message_screen_in_request(message)


def _repeat_reply(message: Message) -> str | None:
    """Twilio repeats a delivery when our answer was slow or lost: answer with
    the safety text the first answer carried (``Message.twiml_reply``, written
    with ``screened_at``). A message not screened yet may be being decided by
    the first delivery's request right now: its row lock makes this wait for
    that decision. One nobody screened (the first request died after storing
    it) is screened here where the request decides; the worker's part is
    already queued, or left to the sweeper."""
    screened = Message.objects.filter(pk=message.pk).values_list("screened_at", "twiml_reply").first()
    if screened is None:
        return None
    if screened[0] is not None:
        return screened[1] or None
    with transaction.atomic():
        locked = (
            Message.objects.select_for_update(of=("self",))
            .select_related("conversation__organization")
            .filter(pk=message.pk)
            .first()
        )
    if locked is None:
        return None
    if locked.screened_at is not None:
        return locked.twiml_reply or None
    # The first request may lock and decide between our look and our own screening (its
    # insert committed while ours waited on the same MessageSid): then its answer is the one to give.
    if reply := message_screen_in_request(locked, repeat=True):
        return reply
    return Message.objects.filter(pk=message.pk).values_list("twiml_reply", flat=True).first() or None
