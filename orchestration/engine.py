"""The turn engine: one model turn for a conversation's new messages.

    read (short transaction) -> call the model (no lock held) -> re-lock,
    check nothing moved -> apply the tool, queue the reply, write the Turn
    trace and mark the messages processed (one transaction)

The model acts only through tools; ``gating`` decides what is allowed in the
current ``identity_status`` and ``gathering_state``. A call that is not
allowed is answered with an ``is_error`` tool result and the model gets at
most ``TURN_MAX_RETRIES`` more tries; then, as when Claude is unavailable, the
tenant gets a safe fallback reply and the conversation is escalated.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction

from conversations.models import Conversation, IdentityStatus, Message
from conversations.outbound import outbound_text_queue
from orchestration import services
from orchestration.context import TurnContext, gathering_is_stale, turn_context_load
from orchestration.decide import decide
from orchestration.emergency_reports import emergency_report_note, emergency_report_open
from orchestration.handlers import tool_apply
from orchestration.models import Turn
from orchestration.replies import reply_text
from orchestration.trace import Decision, turn_record

logger = logging.getLogger(__name__)

STALE_NOTE = (
    "The tenant's previous report was left unfinished for more than {hours} hours and has been closed. "
    "Tell the tenant so in your reply, in their language, and ask them to describe the problem again if it is "
    "still there. Their identity and property are unchanged."
)


class StateMoved(Exception):
    """The conversation changed while the model was thinking; run the turn again."""


def llm_enabled(conversation: Conversation) -> bool:
    override = conversation.organization.llm_orchestration_enabled
    return settings.USE_LLM_ORCHESTRATION if override is None else override


def turn_run(*, conversation_id: int, message_ids: list[int]) -> Turn | None:
    """Handle ``message_ids`` (a conversation's unprocessed inbound messages, in
    order) in one turn. Returns None when another worker handled them first or
    the conversation changed underneath (the pipeline then runs again).

    Any failure other than the model's (a handler, the database, a bug) ends
    the turn like a model outage: the fallback reply, escalation (which pauses
    the assistant, so no further model calls are paid for) and the error in
    the Turn trace. A database that is away (a dropped connection, a
    deadlock) is not the tenant's problem: that error propagates, leaving the
    messages unprocessed for the sweeper, as does one the fallback itself hits."""
    started = time.monotonic()
    decision = Decision()
    try:
        return _turn(conversation_id, message_ids, started, decision)
    except (OperationalError, InterfaceError):
        raise  # the database itself is away: the messages stay unprocessed and the sweeper runs them again
    except Exception as exc:
        logger.exception("turn for conversation %s failed; answering with the fallback", conversation_id)
        decision.call = None
        decision.note_error(f"{type(exc).__name__}: {exc}")
        return _fail_safe(conversation_id, message_ids, decision, started)


def _turn(conversation_id: int, message_ids: list[int], started: float, decision: Decision) -> Turn | None:
    with transaction.atomic():
        conversation = _lock(conversation_id)
        if _any_processed(message_ids):
            return None
        if conversation.bot_paused or not llm_enabled(conversation):  # an emergency's issue does not wait
            emergency_report_open(conversation=conversation)
        if conversation.bot_paused:
            return turn_record(conversation, message_ids, outcome="paused", started=started)
        if not llm_enabled(conversation):
            return _flag_off(conversation, message_ids, started=started)
        at_start = (conversation.identity_status, conversation.gathering_state)
        if conversation.identity_status == IdentityStatus.UNIDENTIFIED and conversation.tenant_id is None:
            services.conversation_identify_by_phone(conversation=conversation)
        emergency_report_open(conversation=conversation)  # once the property is known, the emergency's issue
        notes = []
        if gathering_is_stale(conversation):
            services.gathering_restart(conversation=conversation)
            notes.append(STALE_NOTE.format(hours=settings.GATHERING_STALE_HOURS))
        if emergency_note := emergency_report_note(conversation):
            notes.append(emergency_note)
        context = turn_context_load(conversation=conversation, message_ids=message_ids)
        services.conversation_language_note(conversation=conversation, text=context.latest_text)
        context.notes = notes
        context.identity_at_start, context.gathering_at_start = at_start

    decide(context, decision)

    try:
        with transaction.atomic():
            conversation = _lock(conversation_id)
            if _any_processed(message_ids):
                logger.info("turn for conversation %s discarded: messages handled by another worker", conversation_id)
                return None
            if conversation.bot_paused:
                return turn_record(conversation, message_ids, outcome="paused", started=started)
            if (conversation.identity_status, conversation.gathering_state) != (
                context.snapshot.identity,
                context.snapshot.gathering,
            ):
                raise StateMoved
            return _apply(conversation, context, decision, message_ids, started)
    except StateMoved:
        logger.info("conversation %s changed during the model call; the turn will run again", conversation_id)
        return None


def _lock(conversation_id: int) -> Conversation:
    # Lock first, then read with the joins: a locking query that waited for
    # another turn re-reads the locked row but not the rows it joined.
    list(Conversation.objects.select_for_update().filter(pk=conversation_id).values_list("pk"))
    return Conversation.objects.select_related("organization", "tenant", "property", "candidate_property").get(
        pk=conversation_id
    )


def _any_processed(message_ids: list[int]) -> bool:
    return Message.objects.filter(pk__in=message_ids, processed_at__isnull=False).exists()


def _apply(
    conversation: Conversation, context: TurnContext, decision: Decision, message_ids: list[int], started: float
) -> Turn:
    before = (context.identity_at_start, context.gathering_at_start)
    if decision.call is None:
        return _fallback(conversation, message_ids, decision, started, before=before)
    times = {
        "first_message_at": context.new_messages[0].created_at if context.new_messages else None,
        "last_message_at": context.new_messages[-1].created_at if context.new_messages else None,
    }
    lead = ""
    if decision.first is not None:  # confirm_property, then the model went on with the report
        first = tool_apply(
            conversation=conversation, name=decision.first.name, tool_input=decision.first.input, **times
        )
        decision.trace[decision.first_index]["result"] = first.result
        lead = first.lead or first.reply
    applied = tool_apply(conversation=conversation, name=decision.call.name, tool_input=decision.call.input, **times)
    decision.trace[decision.call_index]["result"] = applied.result
    reply = f"{lead}\n{applied.reply}" if lead else applied.reply
    outbound_text_queue(conversation=conversation, body=reply, author=Message.Author.ASSISTANT, purpose="reply")
    return turn_record(conversation, message_ids, outcome="tool", started=started, decision=decision, before=before)


def _fail_safe(conversation_id: int, message_ids: list[int], decision: Decision, started: float) -> Turn | None:
    """After an unexpected error: the fallback, in a fresh transaction (whatever
    the failed one wrote was rolled back)."""
    with transaction.atomic():
        conversation = _lock(conversation_id)
        if _any_processed(message_ids):
            return None
        if conversation.bot_paused:
            return turn_record(conversation, message_ids, outcome="paused", started=started, decision=decision)
        return _fallback(conversation, message_ids, decision, started)


def _fallback(
    conversation: Conversation,
    message_ids: list[int],
    decision: Decision,
    started: float,
    *,
    before: tuple[str, str] | None = None,
) -> Turn:
    """The one way a turn ends without a usable call (the model unavailable,
    calls rejected too often, an unexpected error): the tenant gets a safe
    reply and the conversation is escalated, which pauses the assistant.
    ``before``: the (identity, gathering) states the turn started from, when
    not the conversation's current ones."""
    before = before or (conversation.identity_status, conversation.gathering_state)  # before the escalation
    reason = f"assistant unavailable: {decision.error}"[:2000]
    services.conversation_escalate(conversation=conversation, reason=reason)
    reply = reply_text("fallback", language=conversation.language, organization=conversation.organization.name)
    outbound_text_queue(conversation=conversation, body=reply, author=Message.Author.ASSISTANT, purpose="reply")
    return turn_record(conversation, message_ids, outcome="fallback", started=started, decision=decision, before=before)


def _flag_off(conversation: Conversation, message_ids: list[int], *, started: float) -> Turn:
    """Without the assistant: acknowledge once and put the conversation in the
    landlord's inbox; later messages wait there silently."""
    if conversation.escalated_at is None:
        text = "\n".join(Message.objects.filter(pk__in=message_ids).values_list("body", flat=True))
        services.conversation_language_note(conversation=conversation, text=text)
        services.conversation_escalate(
            conversation=conversation, reason="assistant switched off for this organization", pause_bot=False
        )
        outbound_text_queue(
            conversation=conversation,
            body=reply_text(
                "assistant_off", language=conversation.language, organization=conversation.organization.name
            ),
            author=Message.Author.ASSISTANT,
            purpose="reply",
        )
    return turn_record(conversation, message_ids, outcome="flag_off", started=started)
