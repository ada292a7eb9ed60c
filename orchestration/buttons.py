"""Tap-to-answer: questions sent with choices, and the tenant's answers read
as structured answers, never as free text.

A choice's payload is ``<action>:<value>[:<ref>]`` (at most 256 characters,
Twilio's ``ButtonPayload``): ``confirm_property:yes:FLAT-3``,
``confirm_property:no:FLAT-3``, ``choose_property:pick:FLAT-3``. The action
names what the answer does, the value which answer it is, the ref what the
question was about. The repair-loop work adds its own actions
(``button_action_register``) such as ``issue_fixed:yes:<reference>``.

An answer is the newest of the turn's messages that is

- a tapped button (``Message.button_payload``), or
- a bare number ("1", "2.") typed right after a question whose choices went
  out as numbered text (nothing else was said to the tenant since), or
- a choice's title typed the same way ("no", "Tak!"), or the tap of a button
  whose payload is not ours but whose text is a choice's title (a client that
  shows our numbered text as buttons of its own).

It counts only if it answers the conversation's latest question with
choices (its payload is one of that question's choices) and its action's
handler accepts it in the conversation's state now (``confirm_property``
needs the same candidate still waiting for its yes). Anything else, a
button from an older question or a payload we never sent, is *refused*: the
engine applies nothing and tells the model plainly that the tap does not
apply. An accepted answer becomes a tool call the engine applies itself,
through the same gating and handlers as the model's own calls (docs/whatsapp-pins-buttons.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conversations.models import Conversation, IdentityStatus, Message, message_text
from conversations.outbound import Choice
from orchestration.gating import Snapshot, rejection

CONFIRM_PROPERTY = "confirm_property"
CHOOSE_PROPERTY = "choose_property"
PAYLOAD_MAX_CHARS = 256
# "1", "2.", " 2) " — a number and nothing else.
NUMBER_ANSWER = re.compile(r"^\s*(\d{1,2})\s*[.)]?\s*$")
TITLE_MAX_CHARS = 40  # longer text is never read as a choice's title


def _title_key(text: str) -> str:
    """A title as typed: case, punctuation, emoji and spacing ignored."""
    return " ".join(re.sub(r"[^\w\s]", " ", text).split()).casefold()


def _titled(choices: list[Choice], text: str) -> Choice | None:
    key = _title_key(text)
    return next((c for c in choices if key and _title_key(c.title) == key), None)


def payload_make(action: str, value: str, ref: str = "") -> str:
    payload = f"{action}:{value}:{ref}" if ref else f"{action}:{value}"
    if len(payload) > PAYLOAD_MAX_CHARS:
        raise ValueError(f"button payload longer than {PAYLOAD_MAX_CHARS} characters: {payload[:40]}...")
    return payload


@dataclass(frozen=True)
class Payload:
    action: str
    value: str
    ref: str = ""


def payload_parse(payload: str) -> Payload | None:
    """The parts of one of our payloads, or None for anything else."""
    parts = payload.strip().split(":", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    return Payload(action=parts[0], value=parts[1], ref=parts[2] if len(parts) == 3 else "")


@dataclass
class Structured:
    """What an accepted answer does: one tool call applied by the engine.
    ``model_continues``: the model is asked afterwards in the same turn with
    the new state (a confirmed home, to go on with the report), else the
    call's own reply ends the turn."""

    tool: str
    tool_input: dict[str, Any]
    model_continues: bool


@dataclass
class Settled:
    """An answer the product settles itself, with no tool call and no model:
    the repair loop's "Is it fixed?" and its rating. ``apply()`` does it and
    returns the line for the turn's trace; ``name`` labels the trace entry.
    ``apply_with_words(words)``, where the answer prompts for words (what is
    still wrong, a comment): the same without the prompt, the words the
    tenant sent along with it recorded (none when ``words`` is empty)."""

    name: str
    apply: Callable[[], str]
    apply_with_words: Callable[[str], str] | None = None


@dataclass
class Answer:
    message: Message
    payload: str
    typed: bool  # a number typed in reply to numbered text, not a tap
    structured: Structured | None = None
    settled: Settled | None = None
    refused: str = ""  # why it does not apply (then ``structured`` and ``settled`` are None)
    notes: list[str] = field(default_factory=list)


# action -> handler(conversation, payload, snapshot) -> Structured or Settled, or a str saying why it does not apply.
ActionHandler = Callable[[Conversation, Payload, Snapshot], "Structured | Settled | str"]
ACTIONS: dict[str, ActionHandler] = {}
# Actions whose payload names what it answers (``issue_fixed:yes:<reference>``):
# a tap on a button of any question we sent in the conversation counts, not only
# the latest's, since two issues resolved together ask two questions.
ANY_QUESTION_ACTIONS: set[str] = set()


def button_action_register(action: str, handler: ActionHandler, *, any_question: bool = False) -> None:
    """Let an answer with ``action`` do something (the repair loop's
    "is it fixed?" registers here). ``any_question``: see ANY_QUESTION_ACTIONS."""
    ACTIONS[action] = handler
    if any_question:
        ANY_QUESTION_ACTIONS.add(action)


def _confirm_property(conversation: Conversation, payload: Payload, snapshot: Snapshot) -> Structured | str:
    if snapshot.identity != IdentityStatus.IDENTIFIED or not snapshot.candidate_code:
        return "no home is waiting for the tenant's yes or no any more"
    if payload.ref != snapshot.candidate_code:
        return f"it answers a question about {payload.ref}, but the home now proposed is {snapshot.candidate_code}"
    if payload.value == "yes":
        return Structured(CONFIRM_PROPERTY, {"confirmed": True, "property_code": payload.ref}, model_continues=True)
    if payload.value == "no":
        return Structured(CONFIRM_PROPERTY, {"confirmed": False}, model_continues=False)
    return f"{payload.value!r} is not an answer to the question"


def _choose_property(conversation: Conversation, payload: Payload, snapshot: Snapshot) -> Structured | str:
    if snapshot.identity != IdentityStatus.IDENTIFIED or not snapshot.property_codes:
        return "the tenant is not choosing between their homes any more"
    if payload.ref not in snapshot.property_codes:
        return f"{payload.ref} is not one of the tenant's homes"
    return Structured(CONFIRM_PROPERTY, {"confirmed": True, "property_code": payload.ref}, model_continues=True)


button_action_register(CONFIRM_PROPERTY, _confirm_property)
button_action_register(CHOOSE_PROPERTY, _choose_property)


def question_latest(conversation: Conversation) -> Message | None:
    """The conversation's latest question sent with choices."""
    return (
        Message.objects.filter(
            conversation=conversation, direction=Message.Direction.OUTBOUND, raw_payload__has_key="choices"
        )
        .order_by("-id")
        .first()
    )


def question_choices(question: Message) -> list[Choice]:
    return [Choice(payload=c["payload"], title=c["title"]) for c in (question.raw_payload or {}).get("choices", [])]


def question_offering(conversation: Conversation, payload: str) -> Message | None:
    """The latest question sent in the conversation that offered ``payload``."""
    return (
        Message.objects.filter(
            conversation=conversation,
            direction=Message.Direction.OUTBOUND,
            raw_payload__choices__contains=[{"payload": payload}],
        )
        .order_by("-id")
        .first()
    )


def choice_typed(question: Message | None, message: Message) -> bool:
    """Whether ``message`` is only a choice of ``question`` typed or said:
    its number or its title ("2", "No")."""
    body = message_text(message).strip()
    if question is None or not body or len(body) > TITLE_MAX_CHARS:
        return False
    choices = question_choices(question)
    number = NUMBER_ANSWER.match(body)
    return (number is not None and 0 < int(number.group(1)) <= len(choices)) or _titled(choices, body) is not None


class LatestQuestion:
    """``question_latest`` read at most once: a turn's first transaction reads
    the answers twice (before and after its automatic steps; one that asks a
    question with choices, an answer settled with more, reads it afresh)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._read = False
        self._question: Message | None = None

    def get(self) -> Message | None:
        if not self._read:
            self._question, self._read = question_latest(self.conversation), True
        return self._question


def answer_read(
    *, conversation: Conversation, messages: list[Message], snapshot: Snapshot, latest: LatestQuestion | None = None
) -> Answer | None:
    """The structured answer among ``messages`` (this turn's, in order), or
    None when none of them is a tap or a numbered reply. See the module's
    docstring for when an answer is accepted or refused. ``latest`` shares
    the lookup of the question answered with an earlier read in the same
    transaction."""
    latest = latest or LatestQuestion(conversation)
    for message in reversed(messages):
        if message.direction != Message.Direction.INBOUND:
            continue
        if message.button_payload:
            question = latest.get()
            payload = message.button_payload
            if payload_parse(payload) is None and question is not None:
                titled = _titled(question_choices(question), message.button_text or "")
                payload = titled.payload if titled else payload
            return _judge(conversation, message, payload, question, snapshot, typed=False)
        body = (message.body or "") if message.kind in ("", "text") else ""
        number = NUMBER_ANSWER.match(body)
        if number is None and 0 < len(body) <= TITLE_MAX_CHARS:
            question = latest.get()
            titled = _titled(question_choices(question), body) if question is not None else None
            if titled is not None and question is not None and _last_said(conversation, question, message):
                return _judge(conversation, message, titled.payload, question, snapshot, typed=True)
        if number is not None:
            question = latest.get()
            if question is None or not _last_said(conversation, question, message):
                return None  # a number that answers no numbered question of ours: plain text for the model
            choices = question_choices(question)
            index = int(number.group(1)) - 1
            if not 0 <= index < len(choices):
                return Answer(
                    message=message,
                    payload="",
                    typed=True,
                    refused=f"there is no choice {index + 1}; the question offered 1 to {len(choices)}",
                )
            return _judge(conversation, message, choices[index].payload, question, snapshot, typed=True)
    return None


def _last_said(conversation: Conversation, question: Message, answer: Message) -> bool:
    """True when ``question`` is the last thing we said before ``answer``."""
    later = Message.objects.filter(
        conversation=conversation, direction=Message.Direction.OUTBOUND, id__gt=question.pk, id__lt=answer.pk
    ).exclude(author=Message.Author.SYSTEM)
    return not later.exists()


def _judge(
    conversation: Conversation,
    message: Message,
    payload: str,
    question: Message | None,
    snapshot: Snapshot,
    *,
    typed: bool,
) -> Answer:
    answer = Answer(message=message, payload=payload, typed=typed)
    parsed = payload_parse(payload)
    handler = ACTIONS.get(parsed.action) if parsed else None
    if parsed is None or handler is None:
        answer.refused = "it is not a button we sent"
        return answer
    offered = {c.payload for c in question_choices(question)} if question is not None else set()
    if payload not in offered and not (
        not typed and parsed.action in ANY_QUESTION_ACTIONS and _sent(conversation, payload)
    ):
        answer.refused = "it belongs to an earlier question, not the latest one"
        return answer
    outcome = handler(conversation, parsed, snapshot)
    if isinstance(outcome, str):
        answer.refused = outcome
        return answer
    if isinstance(outcome, Settled):  # no tool call: nothing for gating to check
        answer.settled = outcome
        return answer
    # The same gate as the model's calls: a structured answer is never a way round it.
    if reason := rejection(outcome.tool, outcome.tool_input, snapshot):
        answer.refused = reason
        return answer
    answer.structured = outcome
    return answer


def _sent(conversation: Conversation, payload: str) -> bool:
    """Whether any question sent in the conversation offered ``payload``."""
    return question_offering(conversation, payload) is not None


REFUSED_NOTE = (
    "The tenant's latest message is a tap on a button{typed} ({payload}) that does not apply now: {reason}. "
    "Nothing was changed by it. Do not act on it as an answer; if something still needs their answer, ask "
    "again in words."
)


def refused_note(answer: Answer) -> str:
    typed = " (typed as a number)" if answer.typed else ""
    return REFUSED_NOTE.format(typed=typed, payload=answer.payload or "no choice", reason=answer.refused)
