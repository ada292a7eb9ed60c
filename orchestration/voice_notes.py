"""Voice notes in the turn: waiting for their transcripts, and asking the
tenant to type when there is none.

* **The wait.** A turn whose messages include a voice note that is still being
  downloaded or transcribed waits for it, up to ``TRANSCRIPTION_WAIT_SECONDS``
  from the voice note's arrival, by returning the seconds to wait (the task
  queues itself again with that countdown, as the coalescing wait does: no
  worker sleeps). The transcription task queues the turn again the moment the
  transcript is done or has failed, so the wait is usually much shorter. A
  voice note and the text sent after it are therefore one burst, one turn.
* **A transcript that comes late.** One that lands after its message's turn
  stopped waiting (the turn asked the tenant to type it) sends the message to
  a turn again, so the assistant answers what was said after all; not when
  the tenant has written since that turn (their next turn reads the
  transcript in the history), nor in a contractor's conversation (dispatch
  reads typed words only). Whether the transcript landed before that turn
  (``conversations.signals.transcript_done``) or while the model was deciding
  (``late_transcripts_after_turn``: it was waiting when the turn began). No
  clocks are compared; a transcript stored between the pipeline's look and the
  turn's read (milliseconds, or as long as the turn waits for the
  conversation's lock) is answered twice.
* **The ask.** With the model on, the context tells it which voice notes could
  not be transcribed and it asks the tenant to type, in its reply. When no
  model is called (the assistant switched off for the organization, or the
  model unavailable: the fallback), the product asks itself, with the text
  below, in the tenant's language (the conversation's, else the
  organization's country default). The audio is kept either way.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from conversations.message_kinds import AUDIO
from conversations.models import Conversation, Media, Message, TranscriptionState
from conversations.outbound import outbound_text_queue
from orchestration.contractor_turns import contractor_of
from orchestration.models import Turn
from orchestration.replies import DEFAULT_LANGUAGE, reply_text

logger = logging.getLogger(__name__)

PURPOSE = "voice_note_type"

# The language the product writes in before it knows the tenant's, by the organization's country.
COUNTRY_LANGUAGE = {"GB": "en", "IE": "en", "US": "en"}


# Turn outcomes in which no model read the voice note's line in the context.
NO_MODEL_OUTCOMES = {"flag_off", "fallback"}


def _audio() -> Q:
    """A voice note: audio by its content type, or in a message WhatsApp said was audio."""
    return Q(content_type__startswith="audio/") | Q(message__kind=AUDIO)


def _waiting(message_ids: list[int]) -> Q:
    """Voice notes still on their way to a transcript: being transcribed, or not downloaded yet."""
    downloading = Q(download_state=Media.DownloadState.PENDING) & _audio()
    return Q(message_id__in=message_ids) & (Q(transcription_state=TranscriptionState.PENDING) | downloading)


def voice_notes_wait(*, message_ids: list[int]) -> float:
    """Seconds the turn for ``message_ids`` should still wait for their voice
    notes (0: go on now, transcribed or not)."""
    arrived = Media.objects.filter(_waiting(message_ids)).values_list("message__created_at", flat=True)
    if not arrived:
        return 0.0
    oldest_allowed = timezone.now().timestamp() - settings.TRANSCRIPTION_WAIT_SECONDS
    return max(0.0, max(created.timestamp() for created in arrived) - oldest_allowed)


def voice_notes_untranscribed(*, message_ids: list[int]) -> list[Media]:
    """The voice notes of ``message_ids`` that have no transcript (failed, off,
    too long, never downloaded, or still pending past the wait)."""
    return list(
        Media.objects.filter(_audio(), message_id__in=message_ids, message__direction=Message.Direction.INBOUND)
        .exclude(transcription_state=TranscriptionState.DONE)
        .order_by("id")
    )


def ask_to_type_text(conversation: Conversation) -> str:
    language = conversation.language or COUNTRY_LANGUAGE.get(conversation.organization.country, DEFAULT_LANGUAGE)
    return reply_text("voice_note_type", language=language)


def voice_notes_after_turn(*, turn: Turn | None, message_ids: list[int]) -> list[Message]:
    """After a turn in which no model was called: ask the tenant to type what
    their voice notes said (once per turn: the turn applied these messages
    once). Returns the stored asks."""
    if turn is None or turn.outcome not in NO_MODEL_OUTCOMES:
        return []
    if not voice_notes_untranscribed(message_ids=message_ids):
        return []
    conversation = Conversation.objects.select_related("organization").get(pk=turn.conversation_id)
    if conversation.bot_paused and turn.outcome != "fallback":
        return []  # a person has taken over: they answer
    return outbound_text_queue(
        conversation=conversation, body=ask_to_type_text(conversation), author=Message.Author.ASSISTANT, purpose=PURPOSE
    )


def on_transcript_done(sender: type, *, message_id: int, **kwargs: object) -> None:
    late_transcript_reopen(message_id)  # the transcription's own kick queues the turn


def voice_notes_waiting(*, message_ids: list[int]) -> list[int]:
    """The voice notes of ``message_ids`` still on their way to a transcript
    (the pipeline notes them just before a turn reads its messages)."""
    return list(Media.objects.filter(_waiting(message_ids)).values_list("pk", flat=True))


def late_transcripts_after_turn(*, turn: Turn | None, waiting: list[int]) -> list[int]:
    """Of the voice notes that were ``waiting`` when the turn began, those
    transcribed by now landed while the model was deciding: the turn read them
    untranscribed, so their messages go to a turn again. Returns the messages
    re-opened (the pipeline answers or queues them)."""
    if turn is None or not waiting:
        return []
    late = Media.objects.filter(pk__in=waiting, transcription_state=TranscriptionState.DONE).exclude(transcript="")
    return [pk for pk in late.values_list("message_id", flat=True).distinct() if late_transcript_reopen(pk, turn)]


def late_transcript_reopen(message_id: int, turn: Turn | None = None) -> bool:
    """Send a handled voice-note message to a turn again (see the module's
    docstring); True when it was re-opened. ``turn``: the turn that read it
    untranscribed, which must still be the last to have handled it (not if a
    later turn answered it with its words). Without it (the transcript was
    stored after the message was handled), the last turn to handle it read it
    untranscribed: that turn had committed before the transcript did."""
    message = Message.objects.select_related("conversation").filter(pk=message_id, processed_at__isnull=False).first()
    conversation = message.conversation if message is not None else None
    if conversation is None or contractor_of(conversation) is not None:
        return False
    last = Turn.objects.filter(conversation=conversation, message_ids__contains=[message_id]).order_by("-id").first()
    if turn is not None and (last is None or last.pk != turn.pk):
        return False
    last_handled = max(last.message_ids) if last is not None and last.message_ids else message_id
    since = Message.objects.filter(
        conversation_id=conversation.pk, direction=Message.Direction.INBOUND, id__gt=last_handled
    )
    if since.exists():
        return False  # the tenant wrote since: their next turn reads the transcript in the history
    reopened = Message.objects.filter(pk=message_id, processed_at__isnull=False).update(processed_at=None)
    if reopened:
        logger.info("voice note message %s transcribed after its turn: handled again", message_id)
    return bool(reopened)
