"""The model's side of a turn, with no lock held and nothing written: call
the model with the context and the tools, check each call (schema, then
``gating``), answer a lookup (``search_documents``) or a rejected call and let
the model call again, until it makes an allowed call that ends the turn or
runs out of tries. Everything it did goes into the ``Decision``."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError

from conversations.models import GatheringState
from llm.client import llm_complete
from llm.types import LLMError, LLMResponse, ToolCall
from orchestration.context import TurnContext, retrieval_wanted, turn_context_confirmed, turn_context_content
from orchestration.gating import create_issue_possible, rejection
from orchestration.handlers import LOOKUPS, tool_lookup
from orchestration.images import ImageCache
from orchestration.knowledge import knowledge_add
from orchestration.prompt import SYSTEM_PROMPT
from orchestration.tool_definitions import TOOLS, tool_input_errors
from orchestration.trace import Decision

logger = logging.getLogger(__name__)

SYSTEM = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
TOOL_CHOICE = {"type": "any", "disable_parallel_tool_use": True}
MAX_LOOKUPS = 2  # search_documents calls in one turn
LOOKUP_FAILED = (
    "The document search is not working right now. Do not guess from memory: answer with respond, "
    "saying you will check with the landlord if the tenant needs the answer."
)


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


def decide(context: TurnContext, decision: Decision) -> Decision:
    """Leaves ``context`` as it was (the engine checks its states after): a
    confirm_property call goes on with a copy (``turn_context_confirmed``)."""
    if retrieval_wanted(context):
        knowledge_add(context, decision)
    cache = ImageCache()  # each photo is resized once, however often the model is called
    content, images = turn_context_content(context, cache=cache)
    messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
    model = model_for(context)
    lookups = 0
    try:
        for _ in range(settings.TURN_MAX_RETRIES + 2 + MAX_LOOKUPS):
            response = llm_complete(
                model=model,
                system=SYSTEM,
                messages=messages,
                tools=TOOLS,
                tool_choice=TOOL_CHOICE,
                script_key=context.conversation.phone,
            )
            decision.add_usage(response)
            decision.add_images(images)
            if not response.tool_calls:
                reason: str | None = "Reply by calling exactly one tool."
                call = None
            else:
                call = response.tool_calls[0]
                reason = "; ".join(tool_input_errors(call.name, call.input)) or rejection(
                    call.name, call.input, context.snapshot
                )
            entry: dict[str, Any] = {
                "name": call.name if call else None,
                "input": call.input if call else {},
                "model": response.model,
            }
            decision.trace.append(entry)
            if call and call.name in LOOKUPS and not reason:
                if lookups >= MAX_LOOKUPS:
                    reason = "You have already searched; answer with respond now."
                else:
                    lookups += 1
                    try:
                        found = tool_lookup(conversation=context.conversation, name=call.name, tool_input=call.input)
                    except (OperationalError, InterfaceError):
                        raise  # the database is away: the turn's own rule (turn_run) applies
                    except Exception as exc:  # a failed search costs the passages, never the turn
                        logger.warning("%s for conversation %s failed: %s", call.name, context.conversation.pk, exc)
                        decision.note_error(f"{call.name} failed: {type(exc).__name__}: {exc}")
                        entry.update(is_error=True, result="the search failed")
                        messages += _follow_up(response, call, LOOKUP_FAILED, is_error=True)
                        continue
                    decision.add_retrieval(found.hits, elapsed_ms=found.elapsed_ms, via=call.name)
                    entry["result"] = found.result
                    messages += _follow_up(response, call, found.text, is_error=False)
                    continue
            if reason:
                decision.rejections += 1
                entry.update(is_error=True, rejection=reason)
                if decision.rejections > settings.TURN_MAX_RETRIES:
                    return _gave_up(decision, f"gave up after {decision.rejections} rejected calls")
                messages += _follow_up(response, call, reason, is_error=True)
                continue
            assert call is not None  # a turn without a call always has a reason
            decision.call, decision.call_index = call, len(decision.trace) - 1
            if decision.first is None and call.name == "confirm_property" and call.input.get("confirmed"):
                # Identity is settled: the model goes on with what the tenant
                # already said instead of asking "what can I help you with?".
                decision.first, decision.first_index, decision.call = call, decision.call_index, None
                code = call.input.get("property_code") or context.snapshot.candidate_code
                context = turn_context_confirmed(context, property_code=code)
                content, images = turn_context_content(context, cache=cache)
                messages = [{"role": "user", "content": content}]
                model = model_for(context)
                continue
            return decision
        return _gave_up(decision, "no usable tool call")
    except LLMError as exc:
        decision.note_error(f"{type(exc).__name__}: {exc}")
        logger.warning("model unavailable for conversation %s: %s", context.conversation.pk, exc)
        _confirmation_alone(decision)
    return decision


def _gave_up(decision: Decision, error: str) -> Decision:
    """No usable call: the fallback, unless a confirm_property call was made
    this turn, which then ends the turn on its own (with its own question)."""
    decision.note_error(error)
    _confirmation_alone(decision)
    return decision


def _confirmation_alone(decision: Decision) -> None:
    if decision.first is not None:
        decision.call, decision.call_index = decision.first, decision.first_index
        decision.first, decision.first_index = None, -1


def _follow_up(response: LLMResponse, call: ToolCall | None, text: str, *, is_error: bool) -> list[dict[str, Any]]:
    assistant = {"role": "assistant", "content": response.content or [{"type": "text", "text": response.text or "…"}]}
    if call is None:
        return [assistant, {"role": "user", "content": text}]
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id, "content": text}
    if is_error:
        result["is_error"] = True
    return [assistant, {"role": "user", "content": [result]}]
