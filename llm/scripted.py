"""The scripted model: answers without Claude, for tests, the golden
scenarios, the demo and load benchmarks. It says so in every response's
``model`` ("scripted").

1. Calls queued for a phone number with ``scripted_queue`` are answered first,
   in order. They live in Redis so a Celery worker in another process sees
   them. A queued item is ``{"tool": name, "input": {...}}``, or
   ``{"error": "unavailable"}`` to play an outage.
2. Otherwise a small keyword policy plays a plausible assistant (see
   ``_policy``). It is a demo, not the product: real conversations need Claude.

``SCRIPTED_MODEL_DELAY_MS`` adds pretend thinking time.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from typing import Any, cast

import redis
from django.conf import settings

from llm.types import PASSAGE_SEPARATOR, SCRIPTED_MODEL_PREFIX, LLMResponse, LLMUnavailable, ToolCall


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=2)


def _key(phone: str) -> str:
    return f"{os.environ.get('CELERY_KEY_PREFIX', '')}scripted:{phone}"


def scripted_queue(*, phone: str, calls: list[dict[str, Any]]) -> None:
    """Script the next model answers for conversations with ``phone``."""
    client = _redis()
    for call in calls:
        client.rpush(_key(phone), json.dumps(call))
    client.expire(_key(phone), 3600)


def scripted_clear(*, phone: str) -> None:
    _redis().delete(_key(phone))


def scripted_complete(
    *,
    model: str,
    system: str | list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    tool_choice: dict[str, Any] | None,
    max_tokens: int | None = None,
    script_key: str = "",
) -> LLMResponse:
    if settings.SCRIPTED_MODEL_DELAY_MS:
        time.sleep(settings.SCRIPTED_MODEL_DELAY_MS / 1000)
    raw = cast("bytes | None", _redis().lpop(_key(script_key))) if script_key else None
    if raw is not None:
        item = json.loads(raw)
        if item.get("error"):
            raise LLMUnavailable(f"scripted outage: {item['error']}")
        name, tool_input = item["tool"], item.get("input", {})
    else:
        name, tool_input = _forced_answer(tool_choice, messages) or _policy(messages)
    call = ToolCall(id=f"toolu_scripted_{uuid.uuid4().hex[:12]}", name=name, input=tool_input)
    return LLMResponse(
        model=f"{SCRIPTED_MODEL_PREFIX}:{model}",
        tool_calls=[call],
        text="",
        stop_reason="tool_use",
        content=[{"type": "tool_use", "id": call.id, "name": name, "input": tool_input}],
    )


YES = re.compile(r"^\s*(yes|yeah|yep|y|correct|that'?s (it|right)|si|sí|tak|da|sim)\b", re.I)
QUESTION = re.compile(r"\?|^\s*(how|where|when|what|which|can i|do i)\b", re.I)
LATER = re.compile(r"\b(later|a min(ute)?|gimme|take pics|in a bit|tonight|tomorrow)\b", re.I)
DECLINE = re.compile(r"\b(no photo|can'?t (take|send)|cannot (take|send)|don'?t have a (photo|camera))\b", re.I)
HUMAN = re.compile(r"\b(human|real person|speak to (someone|a person)|manager|useless)\b", re.I)


def _forced_answer(tool_choice: dict | None, messages: list[dict]) -> tuple[str, dict] | None:
    """Calls outside the turn that force one tool: the emergency check stands
    by the alert (when unsure it is an emergency) and says it is scripted."""
    if not tool_choice or tool_choice.get("name") != "emergency_verdict":
        return None
    prompt = messages[0]["content"] if isinstance(messages[0]["content"], str) else ""
    category = re.search(r"^Alert category[^:]*: (\w+)", prompt, re.M)
    return "emergency_verdict", {
        "reasoning": "Scripted check (no ANTHROPIC_API_KEY): the alert stands as raised; with Claude configured "
        "the wording is weighed and false alarms are stood down.",
        "is_emergency": True,
        "category": category.group(1) if category else "gas",
    }


def _policy(messages: list[dict]) -> tuple[str, dict]:
    """A plausible next tool from the context block and the last tool result."""
    context = messages[0]["content"]
    state = dict(re.findall(r"^(identity_status|gathering_state): (\w+)$", context, re.M))
    new = context.rsplit("New message(s) from the tenant:", 1)[-1]
    text = " ".join(re.sub(r"^\[[^\]]*\] Tenant: ", "", line) for line in new.strip().splitlines()).strip()
    photo = "[sent " in new
    last = messages[-1]["content"]
    if isinstance(last, list) and last and last[0].get("type") == "tool_result":
        if last[0].get("is_error"):
            return "respond", {"message": "Sorry, could you tell me a bit more?"}
        return "respond", {"message": _answer_from(last[0]["content"])}
    identity, gathering = state.get("identity_status"), state.get("gathering_state")
    emergency = "EMERGENCY reported" in context
    if HUMAN.search(text):
        return "escalate", {"reason": "tenant asked for a person", "message": "I'll pass you to a member of the team."}
    if identity == "unidentified":
        if re.search(r"\d", text):
            return "find_property", {"address": text}
        return "respond", {"message": "Hello! Which property do you live in? Please send the address or postcode."}
    if identity == "identified":
        codes = re.findall(r"([A-Z][A-Z0-9]*-\d+) - ", context)
        chosen = next((code for code in codes if code.lower() in text.lower()), "")
        if chosen:
            return "confirm_property", {"confirmed": True, "property_code": chosen}
        return "confirm_property", {"confirmed": bool(YES.search(text))}
    if QUESTION.search(text) and gathering in ("idle", "issue_created"):
        return "search_documents", {"query": text}
    if emergency or (gathering == "awaiting_photo" and (photo or DECLINE.search(text))):
        return "create_issue", _issue_input(context, text, photo, emergency)
    if gathering == "awaiting_photo":
        if LATER.search(text):
            return "respond", {"message": "No rush, send the photo whenever you're ready."}
        return "respond", {"message": "Thanks. When you can, please send a photo of the problem."}
    if gathering == "gathering_details":
        return "ask_for_photo", {"message": "Thanks, that helps. Could you send a photo of it?"}
    if re.search(r"\b(thanks|thank you|cheers|hi|hello)\b", text, re.I) and len(text) < 30:
        return "respond", {"message": "Hello! How can I help with your home today?"}
    return "ask_for_details", {"question": "Sorry to hear that. Where in the home is it, and since when?"}


def _issue_input(context: str, text: str, photo: bool, emergency: bool) -> dict:
    history = " ".join(re.findall(r"\] Tenant: (.+)$", context, re.M)) or text
    return {
        "title": history[:60] or "Repair",
        "description": history[:500] or "Reported over WhatsApp",
        "category": "other",
        "urgency": "emergency" if emergency else "routine",
        "location": "as described",
        "photo": "not_needed" if emergency else ("provided" if photo else "declined"),
        "message": "Thanks, I've logged this repair with your landlord.",
    }


def _answer_from(passages: str) -> str:
    if passages.startswith("No matching passage"):
        return "I couldn't find that in your landlord's documents. I'll pass the question on."
    first = passages.split(PASSAGE_SEPARATOR, 1)[0]
    body = first.split("\n", 1)[-1].strip()
    return f"From your home's guide:\n{body[:900]}"
