"""The scripted model: answers without Claude, for tests, the golden
scenarios, the demo and load benchmarks. It says so in every response's
``model`` ("scripted").

1. Calls queued for a phone number with ``scripted_queue`` are answered first,
   in order. They live in Redis so a Celery worker in another process sees
   them. A queued item is ``{"tool": name, "input": {...}}``, or
   ``{"error": "unavailable"}`` to play an outage.
2. Otherwise a small policy plays a plausible assistant (``_policy``): it
   reads the context block the turn engine renders, summarises the report
   with the word table in ``llm.scripted_summary`` (title, category, urgency,
   place; English, Spanish and Polish), asks for what is missing, answers
   from a passage only when the passage shares the question's words, and
   says it did not understand otherwise. It calls only the tools it is
   offered, and uses optional fields only when the offered schema has them.
   It is a demo, not the product: real conversations need Claude.
   A message's content may be a list of blocks (the turn engine puts the
   tenant's photos before the context): it reads the text blocks and does
   not look at images.

``SCRIPTED_MODEL_DELAY_MS`` adds pretend thinking time.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
import uuid
from typing import Any, cast

import redis
from django.conf import settings

from llm.scripted_summary import (
    Summary,
    clean_words,
    has_problem,
    is_filler,
    language_of,
    looks_like_words,
    passage_fits,
    report_summary,
    say,
    understood,
    went_away,
)
from llm.types import (
    NO_ANSWER,
    PASSAGE_SEPARATOR,
    SCRIPTED_MODEL_PREFIX,
    LLMResponse,
    LLMUnavailable,
    ToolCall,
    content_text,
)

_clients: dict[str, redis.Redis] = {}


def _redis() -> redis.Redis:
    """One client (and connection pool) per Redis URL and process: a new
    client per call opened a connection per model call, 3 ms of every turn."""
    url = settings.REDIS_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)
    return _clients[url]


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
        name, tool_input = _forced_answer(tool_choice, messages) or _policy(messages, tools)
    call = ToolCall(id=f"toolu_scripted_{uuid.uuid4().hex[:12]}", name=name, input=tool_input)
    return LLMResponse(
        model=f"{SCRIPTED_MODEL_PREFIX}:{model}",
        tool_calls=[call],
        text="",
        stop_reason="tool_use",
        content=[{"type": "tool_use", "id": call.id, "name": name, "input": tool_input}],
    )


YES = re.compile(r"^\s*(yes|yeah|yep|y|correct|that'?s (it|right)|si|sí|tak|da|sim)\b", re.I)
QUESTION = re.compile(
    r"\?|^\s*(how|where|when|what|which|can i|do i|is there"
    r"|c[oó]mo|d[oó]nde|cu[aá]ndo|qu[eé]|puedo|jak|gdzie|kiedy|czy)\b",
    re.I,
)
LATER = re.compile(
    r"\b(later|a min(ute)?|gimme|take pics|in a bit|tonight|tomorrow"
    r"|luego|m[aá]s tarde|ma[ñn]ana|p[óo][źz]niej|jutro)\b",
    re.I,
)
DECLINE = re.compile(
    r"\b(no photo|can'?t (take|send)|cannot (take|send)|don'?t have a (photo|camera)"
    r"|no (puedo|tengo) (hacer|enviar|mandar)?\s*(una )?foto|sin foto"
    r"|nie (mog[ęe]|mam) (zrobi[ćc] |wys[łl]a[ćc] )?zdj[ęe]\w*|bez zdj[ęe]\w*)",
    re.I,
)
THANKS = re.compile(r"\b(thanks|thank you|cheers|ta|gracias|dzi[ęe]kuj[ęe]|dzi[ęe]ki)\b", re.I)
HUMAN = re.compile(r"\b(human|real person|speak to (someone|a person)|manager|useless)\b", re.I)
PHOTO_MARK = re.compile(r"\s*\[sent \d+ (photo\(s\)|file\(s\) we could not accept)\]")
STAMP = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d\] (Tenant|You|Agency staff|System): ?(.*)$")
POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b|\b\d{2}-\d{3}\b|\b\d{5}\b", re.I)
KNOWLEDGE_HEAD = "Passages from the landlord's documents that may help"
# Tools every context offers, when a caller passes no tool list.
BASIC_TOOLS = {
    "find_property",
    "confirm_property",
    "respond",
    "ask_for_details",
    "ask_for_photo",
    "create_issue",
    "search_documents",
    "escalate",
}


def _forced_answer(tool_choice: dict | None, messages: list[dict]) -> tuple[str, dict] | None:
    """Calls outside the turn that force one tool: the emergency check stands
    by the alert (when unsure it is an emergency) and says it is scripted."""
    if not tool_choice or tool_choice.get("name") != "emergency_verdict":
        return None
    prompt = content_text(messages[0]["content"])
    category = re.search(r"^Alert category[^:]*: (\w+)", prompt, re.M)
    return "emergency_verdict", {
        "reasoning": "Scripted check (no ANTHROPIC_API_KEY): the alert stands as raised; with Claude configured "
        "the wording is weighed and false alarms are stood down.",
        "is_emergency": True,
        "category": category.group(1) if category else "gas",
    }


class _Offer:
    """The tools of this call, and the fields each one takes."""

    def __init__(self, tools: list[dict[str, Any]] | None):
        self.fields: dict[str, set[str]] | None = (
            None
            if tools is None
            else {t["name"]: set(t.get("input_schema", {}).get("properties", {})) for t in tools if "name" in t}
        )

    def has(self, name: str) -> bool:
        return name in BASIC_TOOLS if self.fields is None else name in self.fields

    def takes(self, name: str, *keys: str) -> bool:
        return self.fields is not None and set(keys) <= self.fields.get(name, set())


class _Chat:
    """What the policy reads from the context block the turn engine renders."""

    def __init__(self, context: str):
        self.context = context
        self.state = dict(re.findall(r"^(identity_status|gathering_state): (\w+)$", context, re.M))
        self.identity = self.state.get("identity_status", "")
        self.gathering = self.state.get("gathering_state", "")
        self.emergency = "EMERGENCY reported" in context
        self.codes = re.findall(r"([A-Z][A-Z0-9]*-\d+) - ", context)
        self.knowledge = ""
        if KNOWLEDGE_HEAD in context:
            after = context.split(KNOWLEDGE_HEAD, 1)[1].split("\n", 1)[-1]
            self.knowledge = re.split(r"^(Conversation so far:|New message\(s\) from the tenant:)$", after, flags=re.M)[
                0
            ]
        # (author, text without photo marks, photos sent, new in this turn)
        self.messages: list[tuple[str, str, bool, bool]] = []
        section = ""
        for line in context.splitlines():
            if line in ("Conversation so far:", "New message(s) from the tenant:"):
                section = line
                continue
            if not section:
                continue
            stamp = STAMP.match(line)
            if stamp:
                body = stamp.group(2)
                photo = bool(re.search(r"\[sent [1-9]\d* photo\(s\)\]", body))
                self.messages.append(
                    (stamp.group(1), PHOTO_MARK.sub("", body).strip(), photo, section.startswith("New"))
                )
            elif self.messages:  # a message of several lines
                who, body, photo, is_new = self.messages[-1]
                self.messages[-1] = (who, f"{body}\n{line}".strip(), photo, is_new)
        latest = [m for m in self.messages if m[3]]
        self.text = " ".join(m[1] for m in latest if m[1]).strip()
        self.photo = any(m[2] for m in latest)

    def _current(self) -> list[tuple[str, str, bool, bool]]:
        """The messages since the last issue was logged or report closed."""
        start = 0
        for index, (who, body, _, _) in enumerate(self.messages):
            if who == "You" and _ends_report(body):
                start = index + 1
        return self.messages[start:]

    def report(self) -> list[str]:
        """The tenant's words about the current report, without addresses,
        greetings, yes / no, photo excuses, questions and small talk: what
        names a repair word, or answers a question we asked about it."""
        said = []
        asked = False  # the message before was our question about the report
        for who, body, _, _ in self._current():
            answer, asked = asked, who == "You" and body.rstrip().endswith("?") and not _asked_address(body)
            if who != "Tenant" or not body or is_filler(body) or went_away(body) or HUMAN.search(body):
                continue
            if POSTCODE.search(body) and not has_problem(body):
                continue  # an address
            if re.search(r"\d", body) and not understood(body):
                continue
            if (DECLINE.search(body) or LATER.search(body)) and not has_problem(body):
                continue
            if understood(body) or (answer and looks_like_words(body) and not QUESTION.search(body)):
                said.append(body)
        return said

    def where_answer(self) -> str:
        """What the tenant answered to our question where the problem is."""
        current = self._current()
        for (who, body, _, _), (next_who, answer, _, _) in itertools.pairwise(current):
            asked = who == "You" and _asked_where(body) and next_who == "Tenant"
            if asked and looks_like_words(answer) and len(answer.split()) <= 8 and not is_filler(answer):
                return clean_words(answer, limit=40).lower()
        return ""

    @property
    def photo_received(self) -> bool:
        return "Photo received for this report: yes" in self.context


def _ends_report(body: str) -> bool:
    return bool(re.search(r"\bR\d{4}-[0-9A-F]{6}\b", body)) or any(
        body.startswith(say(key, lang)[:30]) for key in ("closed", "logged") for lang in ("en", "es", "pl")
    )


def _asked_address(body: str) -> bool:
    return any(
        say(key, lang) in body for key in ("ask_address", "ask_address_problem") for lang in ("en", "es", "pl")
    ) or bool(re.search(r"\b(yes or no|s[ií] o no|tak lub nie)\b", body, re.I))


def _asked_where(body: str) -> bool:
    return any(say(key, lang) in body for key in ("ask_where", "ask_photo_what") for lang in ("en", "es", "pl"))


def _policy(messages: list[dict], tools: list[dict[str, Any]] | None = None) -> tuple[str, dict]:
    """A plausible next tool from the context block and the last tool result."""
    offer = _Offer(tools)
    chat = _Chat(content_text(messages[0]["content"]))  # the context's words; photos are not read
    last = messages[-1]["content"]
    if isinstance(last, list) and last and last[0].get("type") == "tool_result":
        return _after_tool(messages, chat, offer)
    text, gathering = chat.text, chat.gathering
    said = chat.report()
    summary = report_summary(said, emergency=chat.emergency)
    lang = language_of(text) if (text and understood(text)) or not said else summary.language
    if HUMAN.search(text) and offer.has("escalate"):
        return "escalate", {"reason": "tenant asked for a person", "message": "I'll pass you to a member of the team."}
    if chat.identity == "unidentified":
        if re.search(r"\d", text) and offer.has("find_property"):
            return "find_property", {"address": text}
        return "respond", {"message": say("ask_address_problem" if summary.problem else "ask_address", lang)}
    if chat.identity == "identified" and offer.has("confirm_property"):
        chosen = next((code for code in chat.codes if code.lower() in text.lower()), "")
        if chosen:
            return "confirm_property", {"confirmed": True, "property_code": chosen}
        return "confirm_property", {"confirmed": bool(YES.search(text))}
    reporting = gathering in ("gathering_details", "awaiting_photo")
    if went_away(text):
        if reporting and offer.has("close_report"):
            return "close_report", {
                "reason": f"the tenant says the problem went away: {text[:200]}",
                "message": say("closed", lang),
            }
        return "respond", {"message": say("closed" if reporting else "glad", lang)}
    if chat.emergency:
        return "create_issue", _issue_input(chat, summary, photo="not_needed")
    if gathering == "awaiting_photo":
        return _awaiting_photo(chat, summary, lang)
    if gathering == "gathering_details":
        return _gathering(chat, summary, lang, offer)
    return _idle(chat, summary, lang, offer)


def _idle(chat: _Chat, summary: Summary, lang: str, offer: _Offer) -> tuple[str, dict]:
    """No report under way (idle, or after an issue): a new report, a
    question, small talk, or nothing we understood."""
    text = chat.text
    if text and QUESTION.search(text) and not has_problem(text) and offer.has("search_documents"):
        return "search_documents", {"query": text}
    if text and not understood(text):
        if not is_filler(text) and chat.knowledge and passage_fits(text, chat.knowledge):
            return "respond", {"message": _answer_from(chat.knowledge, text, lang)}
        if not (summary.problem and is_filler(text)):  # "yes" after the address goes on with the report
            if is_filler(text) and len(text) < 30:
                return "respond", {"message": say("welcome" if THANKS.search(text) else "hello", lang)}
            return "respond", {"message": say("not_understood", lang)}
    if not summary.problem:
        if chat.photo and not text:
            return "ask_for_details", {"question": say("ask_photo_what", lang)}
        if summary.location:
            return "ask_for_details", {"question": say("ask_what", lang)}
        return "respond", {"message": say("hello" if is_filler(text) else "not_understood", lang)}
    if summary.place_stated and offer.takes("ask_for_photo", "problem", "location"):
        return "ask_for_photo", {
            "message": say("ask_photo", lang),
            "problem": summary.title,
            "location": summary.location,
        }
    return "ask_for_details", {"question": say("ask_since" if summary.location else "ask_where", lang)}


def _gathering(chat: _Chat, summary: Summary, lang: str, offer: _Offer) -> tuple[str, dict]:
    """A report under way, after our question: ask for a photo once what and
    where are known, else ask for what is missing."""
    text = chat.text
    if text and not understood(text) and not looks_like_words(text):
        return "respond", {"message": say("not_understood", lang)}
    location = summary.location or chat.where_answer()
    if not summary.problem:
        return "ask_for_details", {"question": say("ask_what", lang)}
    if not location:
        return "ask_for_details", {"question": say("ask_where", lang)}
    if chat.photo_received:  # the photo came first ("what does it show?"): nothing left to ask
        return "create_issue", _issue_input(chat, summary, photo="provided")
    photo_input = {"message": say("ask_photo", lang)}
    if offer.takes("ask_for_photo", "problem", "location"):
        photo_input |= {"problem": summary.title, "location": location}
    return "ask_for_photo", photo_input


def _awaiting_photo(chat: _Chat, summary: Summary, lang: str) -> tuple[str, dict]:
    text = chat.text
    if chat.photo or DECLINE.search(text):
        if not (summary.location or chat.where_answer()):
            return "ask_for_details", {"question": say("ask_where", lang)}
        return "create_issue", _issue_input(chat, summary, photo="provided" if chat.photo else "declined")
    if LATER.search(text):
        return "respond", {"message": say("photo_later", lang)}
    return "respond", {"message": say("photo_remind", lang)}


def _issue_input(chat: _Chat, summary: Summary, *, photo: str) -> dict:
    location = summary.location or chat.where_answer() or "not stated yet"
    return {
        "title": summary.title,
        "description": summary.description or chat.text or "Reported over WhatsApp",
        "category": summary.category,
        "urgency": summary.urgency,
        "location": location,
        "photo": photo,
        "message": say("logged", summary.language),
    }


def _after_tool(messages: list[dict], chat: _Chat, offer: _Offer) -> tuple[str, dict]:
    """The answer after a tool result: a search's passages, or a rejection."""
    result = messages[-1]["content"][0]
    content = result.get("content")
    content = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content or [])
    asked = next(
        (b for b in (messages[-2].get("content") or []) if isinstance(b, dict) and b.get("type") == "tool_use"), {}
    )
    said = chat.report()
    lang = language_of(chat.text) if chat.text else report_summary(said).language
    if result.get("is_error"):
        if chat.emergency and asked.get("name") in ("ask_for_photo", "ask_for_details", "close_report"):
            # The refusal says so: an emergency is recorded now, without a photo.
            return "create_issue", _issue_input(chat, report_summary(said, emergency=True), photo="not_needed")
        if asked.get("name") == "ask_for_photo" and offer.has("ask_for_details"):
            summary = report_summary(said)
            return "ask_for_details", {"question": say("ask_since" if summary.location else "ask_where", lang)}
        if asked.get("name") == "create_issue" and chat.emergency:
            return "respond", {"message": say("emergency_noted", lang)}
        if asked.get("name") == "close_report":
            return "respond", {"message": say("glad", lang)}
        return "respond", {"message": say("more", lang)}
    query = (asked.get("input") or {}).get("query") or chat.text
    return "respond", {"message": _answer_from(content, query, lang)}


def _answer_from(passages: str, query: str, lang: str) -> str:
    """The first passage that shares the question's words; a search returns
    its nearest passages whether or not they answer anything."""
    if passages.startswith(NO_ANSWER):
        return say("not_in_documents" if understood(query) else "not_understood", lang)
    for passage in passages.split(PASSAGE_SEPARATOR):
        if passage_fits(query, passage):
            body = passage.split("\n", 1)[-1].strip()
            return f"{say('from_guide', lang)}\n{body[:900]}"
    return say("not_in_documents" if understood(query) else "not_understood", lang)
