"""From a stored inbound message to a turn, in order, once.

Every inbound message queues its own ``inbound.process`` task, but only the
task of a conversation's newest unprocessed message does the work: it waits
until that message is ``INBOUND_COALESCE_SECONDS`` old (so a burst of messages
becomes one turn), then hands all the conversation's unprocessed messages, in
arrival order (by id), to the turn engine. The conversation row lock in
PostgreSQL serialises this across any number of workers and machines; the engine marks
the messages processed in the transaction that applies the turn and discards
a result whose messages another worker handled first.

A burst with a voice note also waits for its transcript, up to
``TRANSCRIPTION_WAIT_SECONDS`` (``orchestration.voice_notes``), in the same
way: by returning the wait, never by sleeping in the worker.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.tasks import INBOUND_PROCESS, queue_task
from conversations.models import Conversation, Message
from emergencies.screening import message_screen
from orchestration.voice_notes import (
    late_transcripts_after_turn,
    voice_notes_after_turn,
    voice_notes_wait,
    voice_notes_waiting,
)

logger = logging.getLogger(__name__)

MAX_ROUNDS = 3


def inbound_process(*, message_id: int) -> float | None:
    """Handle the backlog ``message_id`` belongs to. Returns the seconds to wait
    before calling again when the burst may not be over, else None."""
    from orchestration.engine import turn_run

    row = Message.objects.filter(pk=message_id, direction=Message.Direction.INBOUND).values(
        "conversation_id", "processed_at"
    )
    message = row.first()
    if message is None or message["processed_at"] or message["conversation_id"] is None:
        return None
    conversation_id = message["conversation_id"]
    for _ in range(MAX_ROUNDS):
        pending = _pending(conversation_id)
        ids = [pk for pk, _ in pending]
        if message_id not in ids:
            return None  # handled meanwhile
        if ids[-1] != message_id:
            return None  # a newer message's task will handle the whole burst
        wait = settings.INBOUND_COALESCE_SECONDS - (timezone.now() - pending[-1][1]).total_seconds()
        if wait > 0:
            return wait
        if (wait := voice_notes_wait(message_ids=ids)) > 0:
            return wait  # the transcription task queues the turn again as soon as it is done
        for pk in _unscreened(ids):  # the emergency worker has not got to them: the model must not decide first
            message_screen(message_id=pk, stage="turn")
        waiting = voice_notes_waiting(message_ids=ids)  # past the wait: the turn reads them untranscribed
        turn = turn_run(conversation_id=conversation_id, message_ids=ids)
        voice_notes_after_turn(turn=turn, message_ids=ids)
        if (reopened := late_transcripts_after_turn(turn=turn, waiting=waiting)) and max(reopened) != message_id:
            queue_task(INBOUND_PROCESS, [max(reopened)])  # the next round serves only this task's own burst
        # If another worker won the race for some of these messages the engine
        # discarded this result; go round again for whatever is left.
        if not Message.objects.filter(pk__in=ids, processed_at__isnull=True).exists():
            return None
    logger.warning("conversation %s still has unprocessed messages after %d rounds", conversation_id, MAX_ROUNDS)
    return None


def _pending(conversation_id: int) -> list[tuple[int, datetime]]:
    with transaction.atomic():
        # Waits for a turn that is being applied right now, so we never read
        # half of its effects.
        list(Conversation.objects.select_for_update().filter(pk=conversation_id).values_list("pk"))
        return list(
            Message.objects.filter(
                conversation_id=conversation_id, direction=Message.Direction.INBOUND, processed_at__isnull=True
            )
            # Arrival order is the order PostgreSQL's sequence handed out ids:
            # created_at comes from the web servers' clocks, which may disagree,
            # and the sweeper picks a conversation's highest id too.
            .order_by("id")
            .values_list("id", "created_at")
        )


def _unscreened(ids: list[int]) -> list[int]:
    unscreened = Message.objects.filter(pk__in=ids, screened_at__isnull=True).order_by("id")
    return list(unscreened.values_list("id", flat=True))
