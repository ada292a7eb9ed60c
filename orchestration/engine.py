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
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from conversations.models import Conversation, GatheringState, IdentityStatus, Message
from conversations.outbound import outbound_text_queue
from llm.client import llm_complete
from llm.types import LLMError, LLMResponse, ToolCall
from orchestration import services
from orchestration.context import (
    TurnContext,
    gathering_is_stale,
    retrieval_wanted,
    turn_context_load,
    turn_context_render,
)
from orchestration.gating import create_issue_possible, rejection
from orchestration.handlers import Applied, tool_apply
from orchestration.knowledge import knowledge_lookup
from orchestration.models import Turn
from orchestration.prompt import PROMPT_VERSION, SYSTEM_PROMPT
from orchestration.replies import reply_text
from orchestration.tool_definitions import TOOL_NAMES, TOOLS, tool_input_errors

logger = logging.getLogger(__name__)

SYSTEM = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
TOOL_CHOICE = {"type": "any", "disable_parallel_tool_use": True}
MAX_SEARCHES = 2
STALE_NOTE = (
    "The tenant's previous report was left unfinished for more than {hours} hours and has been closed. "
    "Tell the tenant so in your reply, in their language, and ask them to describe the problem again if it is "
    "still there. Their identity and property are unchanged."
)


class StateMoved(Exception):
    """The conversation changed while the model was thinking; run the turn again."""


@dataclass
class Decision:
    call: ToolCall | None = None
    model: str = ""
    trace: list[dict] = field(default_factory=list)
    retrieval_hits: list[dict] = field(default_factory=list)
    rejections: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    model_ms: int = 0
    retrieval_ms: int = 0
    error: str = ""

    def note_error(self, text: str) -> None:
        self.error = f"{self.error}; {text}" if self.error else text

    def add_usage(self, response: LLMResponse) -> None:
        self.model = response.model
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens
        self.cache_read_tokens += response.cache_read_tokens
        self.cache_write_tokens += response.cache_write_tokens
        self.cost_usd += response.cost_usd
        self.model_ms += response.latency_ms


def llm_enabled(conversation: Conversation) -> bool:
    override = conversation.organization.llm_orchestration_enabled
    return settings.USE_LLM_ORCHESTRATION if override is None else override


def model_for(context: TurnContext) -> str:
    """The ADR's routing: the small model (``LLM_MODEL_SMALL``) for gathering
    turns (gathering_details, awaiting_photo) in which create_issue would not
    pass gating; the large one (``LLM_MODEL_LARGE``) for a conversation's
    first turn (idle), after an issue, and whenever an issue may be created."""
    s = context.snapshot
    gathering = s.gathering in (GatheringState.GATHERING_DETAILS, GatheringState.AWAITING_PHOTO)
    if gathering and not create_issue_possible(s):
        return settings.LLM_MODEL_SMALL
    return settings.LLM_MODEL_LARGE


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
        if conversation.bot_paused:
            return _finish_silently(conversation, message_ids, outcome="paused", started=started)
        if not llm_enabled(conversation):
            return _flag_off(conversation, message_ids, started=started)
        at_start = (conversation.identity_status, conversation.gathering_state)
        if conversation.identity_status == IdentityStatus.UNIDENTIFIED and conversation.tenant_id is None:
            services.conversation_identify_by_phone(conversation=conversation)
        notes = []
        if gathering_is_stale(conversation):
            services.gathering_restart(conversation=conversation)
            notes.append(STALE_NOTE.format(hours=settings.GATHERING_STALE_HOURS))
        context = turn_context_load(conversation=conversation, message_ids=message_ids)
        services.conversation_language_note(conversation=conversation, text=context.latest_text)
        context.notes = notes
        context.identity_at_start, context.gathering_at_start = at_start

    _decide(context, decision)

    try:
        with transaction.atomic():
            conversation = _lock(conversation_id)
            if _any_processed(message_ids):
                logger.info("turn for conversation %s discarded: messages handled by another worker", conversation_id)
                return None
            if conversation.bot_paused:
                return _finish_silently(conversation, message_ids, outcome="paused", started=started)
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


def _decide(context: TurnContext, decision: Decision) -> Decision:
    if retrieval_wanted(context):
        _knowledge_add(context, decision)
    messages: list[dict] = [{"role": "user", "content": turn_context_render(context)}]
    model = model_for(context)
    searches = 0
    try:
        for _ in range(settings.TURN_MAX_RETRIES + 1 + MAX_SEARCHES):
            response = llm_complete(
                model=model,
                system=SYSTEM,
                messages=messages,
                tools=TOOLS,
                tool_choice=TOOL_CHOICE,
                script_key=context.conversation.phone,
            )
            decision.add_usage(response)
            if not response.tool_calls:
                reason, call = "Reply by calling exactly one tool.", None
            else:
                call = response.tool_calls[0]
                reason = "; ".join(tool_input_errors(call.name, call.input)) or rejection(
                    call.name, call.input, context.snapshot
                )
            entry = {"name": call.name if call else None, "input": call.input if call else {}, "model": response.model}
            decision.trace.append(entry)
            if call and call.name == "search_documents" and not reason:
                if searches >= MAX_SEARCHES:
                    reason = "You have already searched; answer with respond now."
                else:
                    searches += 1
                    text, hits, elapsed = knowledge_lookup(conversation=context.conversation, query=call.input["query"])
                    decision.retrieval_hits += [{**hit, "via": "search_documents"} for hit in hits]
                    decision.retrieval_ms += elapsed
                    entry["result"] = f"{len(hits)} passages"
                    messages += _follow_up(response, call, text, is_error=False)
                    continue
            if reason:
                decision.rejections += 1
                entry.update(is_error=True, rejection=reason)
                if decision.rejections > settings.TURN_MAX_RETRIES:
                    decision.error = f"gave up after {decision.rejections} rejected calls"
                    return decision
                messages += _follow_up(response, call, reason, is_error=True)
                continue
            decision.call = call
            return decision
        decision.error = "no usable tool call"
    except LLMError as exc:
        decision.note_error(f"{type(exc).__name__}: {exc}")
        logger.warning("model unavailable for conversation %s: %s", context.conversation.pk, exc)
    return decision


def _knowledge_add(context: TurnContext, decision: Decision) -> None:
    """Conditional retrieval: the property's best passages for the tenant's
    words, with document titles and headings, go into the context. A failed
    search costs the passages, never the turn."""
    try:
        text, hits, elapsed = knowledge_lookup(conversation=context.conversation, query=context.latest_text)
    except Exception as exc:
        logger.warning("retrieval for conversation %s failed: %s", context.conversation.pk, exc)
        decision.note_error(f"retrieval skipped: {type(exc).__name__}: {exc}")
        return
    decision.retrieval_ms += elapsed
    decision.retrieval_hits += [{**hit, "via": "context"} for hit in hits]
    if hits:
        context.knowledge = text


def _follow_up(response: LLMResponse, call: ToolCall | None, text: str, *, is_error: bool) -> list[dict]:
    assistant = {"role": "assistant", "content": response.content or [{"type": "text", "text": response.text or "…"}]}
    if call is None:
        return [assistant, {"role": "user", "content": text}]
    result = {"type": "tool_result", "tool_use_id": call.id, "content": text}
    if is_error:
        result["is_error"] = True
    return [assistant, {"role": "user", "content": [result]}]


def _apply(conversation, context, decision: Decision, message_ids, started) -> Turn:
    if decision.call is not None:
        applied = tool_apply(
            conversation=conversation,
            name=decision.call.name,
            tool_input=decision.call.input,
            first_message_at=context.new_messages[0].created_at if context.new_messages else None,
            last_message_at=context.new_messages[-1].created_at if context.new_messages else None,
        )
        decision.trace[-1]["result"] = applied.result
        outcome = "tool"
    else:
        applied = _fallback(conversation, decision.error)
        outcome = "fallback"
    outbound_text_queue(conversation=conversation, body=applied.reply, author=Message.Author.ASSISTANT, purpose="reply")
    return _record(
        conversation,
        message_ids,
        outcome=outcome,
        started=started,
        decision=decision,
        identity_before=context.identity_at_start,
        gathering_before=context.gathering_at_start,
    )


def _fallback(conversation: Conversation, error: str) -> Applied:
    services.conversation_escalate(conversation=conversation, reason=f"assistant unavailable: {error}"[:2000])
    reply = reply_text("fallback", language=conversation.language, organization=conversation.organization.name)
    return Applied(reply=reply, result="fallback")


def _fail_safe(conversation_id: int, message_ids: list[int], decision: Decision, started: float) -> Turn | None:
    """After an unexpected error: the fallback reply and escalation, in a fresh
    transaction (whatever the failed one wrote was rolled back)."""
    with transaction.atomic():
        conversation = _lock(conversation_id)
        if _any_processed(message_ids):
            return None
        identity, gathering = conversation.identity_status, conversation.gathering_state
        if conversation.bot_paused:
            outcome = "paused"
        else:
            applied = _fallback(conversation, decision.error)
            outbound_text_queue(
                conversation=conversation, body=applied.reply, author=Message.Author.ASSISTANT, purpose="reply"
            )
            outcome = "fallback"
        return _record(
            conversation,
            message_ids,
            outcome=outcome,
            started=started,
            decision=decision,
            identity_before=identity,
            gathering_before=gathering,
        )


def _flag_off(conversation: Conversation, message_ids, *, started) -> Turn:
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
    return _finish_silently(conversation, message_ids, outcome="flag_off", started=started)


def _finish_silently(conversation, message_ids, *, outcome: str, started) -> Turn:
    return _record(
        conversation,
        message_ids,
        outcome=outcome,
        started=started,
        decision=Decision(),
        identity_before=conversation.identity_status,
        gathering_before=conversation.gathering_state,
    )


def _record(conversation, message_ids, *, outcome, started, decision: Decision, identity_before, gathering_before):
    now = timezone.now()
    Message.objects.filter(pk__in=message_ids).update(processed_at=now, status=Message.Status.PROCESSED)
    conversation.last_turn_at = now
    conversation.save(update_fields=["last_turn_at", "updated_at"])
    return Turn.objects.create(
        conversation=conversation,
        message_ids=message_ids,
        backend=settings.LLM_BACKEND if decision.trace else "",
        model=decision.model,
        prompt_version=PROMPT_VERSION,
        tools_offered=TOOL_NAMES if decision.trace else [],
        tool_calls=decision.trace,
        gating_rejections=decision.rejections,
        retrieval_hits=decision.retrieval_hits,
        identity_before=identity_before,
        identity_after=conversation.identity_status,
        gathering_before=gathering_before,
        gathering_after=conversation.gathering_state,
        latency_total_ms=int((time.monotonic() - started) * 1000),
        latency_model_ms=decision.model_ms or None,
        latency_retrieval_ms=decision.retrieval_ms or None,
        input_tokens=decision.input_tokens,
        output_tokens=decision.output_tokens,
        cache_read_tokens=decision.cache_read_tokens,
        cache_write_tokens=decision.cache_write_tokens,
        cost_usd=decision.cost_usd,
        outcome=outcome,
        error=decision.error,
    )
