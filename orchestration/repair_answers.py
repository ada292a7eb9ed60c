"""The tenant's answers to the repair loop's own questions, settled before
anything else in the turn, with the model on or off and while a person has
taken over: "Is it fixed?" (Yes / No), its rating (1-5) and a visit's times
end the turn, unless the tenant wrote or said more with the answer (one
burst): then what they sent after the question is recorded where the answer
asks for words, and the turn goes on to the model with a note. The next
text after the comment or "what is still wrong?" prompt is recorded on the
issue and still goes on to the turn, with a note for the model. What they do
lives in ``issues/fix_check.py``; this module reads them (``buttons``).
Anything else, or an answer that no longer applies, is left to the turn."""

from __future__ import annotations

from dataclasses import dataclass

from conversations import message_kinds
from conversations.models import Conversation, Message, message_text
from issues.appointments import VISIT_ACTION, Outcome, visit_none, visit_pick, visit_report
from issues.dispatch import DispatchError
from issues.fix_check import (
    RATING_ACTION,
    FixCheckError,
    fix_answer_record,
    follow_up_record,
    issues_answerable,
    rating_record,
)
from issues.fix_question import FIX_ACTION
from issues.models import Issue
from orchestration import buttons
from orchestration.gating import Snapshot
from orchestration.models import Turn
from orchestration.trace import STRUCTURED_MODEL, Decision, turn_record

BURST_NOTE = (
    "The tenant answered the product's own question about a repair, and the answer is recorded ({result}). "
    "Their other messages in this turn came with it: reply to them as usual (a new problem is reported as "
    "usual), and do not ask that question again."
)
FOLLOW_UP_NOTE = (
    "The tenant's latest message answered the product's own question after a repair ({result}): it is "
    "recorded on the issue and the landlord has it. Thank them briefly. If it also reports a new problem or asks "
    "something, handle that as usual."
)


def _waiting(conversation: Conversation, reference: str) -> Issue | None:
    return issues_answerable(conversation).filter(reference=reference).only("status", "fix_answer", "rating").first()


def _fixed(conversation: Conversation, payload: buttons.Payload, snapshot: Snapshot) -> buttons.Settled | str:
    issue = _waiting(conversation, payload.ref)
    if issue is None or issue.status != Issue.Status.RESOLVED or issue.fix_answer:
        return f"{payload.ref} is not waiting for the tenant's answer to 'Is it fixed?' any more"
    if payload.value not in ("yes", "no"):
        return f"{payload.value!r} is not an answer to 'Is it fixed?'"
    answer, reference = payload.value, payload.ref
    return buttons.Settled(
        name="issue_fixed",
        apply=lambda: fix_answer_record(conversation=conversation, reference=reference, answer=answer),
        apply_with_words=(
            (
                lambda words: fix_answer_record(
                    conversation=conversation, reference=reference, answer=answer, words=words
                )
            )
            if answer == "no"  # "what is still wrong?"
            else None
        ),
    )


def _rating(conversation: Conversation, payload: buttons.Payload, snapshot: Snapshot) -> buttons.Settled | str:
    if not payload.value.isdigit():
        return f"{payload.value!r} is not a rating"
    issue = _waiting(conversation, payload.ref)
    if issue is None or issue.fix_answer != "yes" or issue.rating is not None:
        return f"{payload.ref} is not waiting for a rating"
    reference, rating = payload.ref, int(payload.value)
    return buttons.Settled(
        name="issue_rating",
        apply=lambda: rating_record(conversation=conversation, reference=reference, rating=rating),
        apply_with_words=lambda words: rating_record(
            conversation=conversation, reference=reference, rating=rating, words=words
        ),
    )


def _visit(conversation: Conversation, payload: buttons.Payload, snapshot: Snapshot) -> buttons.Settled | str:
    """The tenant's pick of a visit time (or none), and either side's answer
    after the visit (the contractor's comes through their turn)."""
    if not payload.ref.isdigit():
        return f"{payload.ref!r} is not a visit"
    ref = int(payload.ref)
    if payload.value == "pick":
        return buttons.Settled("visit_pick", lambda: visit_pick(conversation=conversation, appointment_id=ref))
    if payload.value == "none":
        return buttons.Settled("visit_none", lambda: visit_none(conversation=conversation, job_id=ref))
    if payload.value in Outcome.ALL:
        outcome = payload.value
        return buttons.Settled(
            "visit_report", lambda: visit_report(conversation=conversation, appointment_id=ref, outcome=outcome)
        )
    return f"{payload.value!r} is not an answer about a visit"


buttons.button_action_register(FIX_ACTION, _fixed, any_question=True)
buttons.button_action_register(VISIT_ACTION, _visit, any_question=True)
buttons.button_action_register(RATING_ACTION, _rating)


@dataclass(frozen=True)
class SettledInBurst:
    """An answer settled whose burst holds more from the tenant: the turn goes
    on with the rest, the model told by ``note``; ``message_ids``, the
    answer's message and any repeat of it ("no" typed, then No tapped), are
    not read as answers again."""

    message_ids: tuple[int, ...]
    note: str


def answer_settle(
    *,
    conversation: Conversation,
    messages: list[Message],
    message_ids: list[int],
    started: float,
    decision: Decision,
    latest: buttons.LatestQuestion | None = None,
) -> Turn | SettledInBurst | None:
    """Inside the turn's first transaction, with the conversation locked: when
    this turn's inbound ``messages`` hold an answer to the repair loop's
    questions, record it (its line in ``decision``'s trace) and return the
    Turn, or ``SettledInBurst`` when the tenant wrote or said more with it.
    Then the answer asks for nothing more: the words sent after its question
    are recorded where it would have asked for words (what is still wrong, a
    comment; not while an emergency stands, when they are the emergency's),
    and the turn goes on to the model. None when there is no such answer."""
    if again := _settled_before(conversation, messages, decision):
        return again  # this turn ran before, was discarded after settling: the answer stands
    latest = latest or buttons.LatestQuestion(conversation)
    snapshot = Snapshot(identity=conversation.identity_status, gathering=conversation.gathering_state)
    answer = buttons.answer_read(conversation=conversation, messages=messages, snapshot=snapshot, latest=latest)
    if answer is None or answer.settled is None:
        return None
    question = _question_answered(conversation, answer, latest)
    inbound = [m for m in messages if m.direction == Message.Direction.INBOUND]
    answered = [
        m
        for m in inbound
        if m.pk == answer.message.pk
        or (m.button_payload and m.button_payload == answer.payload)
        or (not m.button_payload and buttons.choice_typed(question, m))  # "no" typed, then No tapped
    ]
    said = [
        (m, text)
        for m in inbound
        if m not in answered and m.kind in WORDS_KINDS and not m.button_payload and (text := message_text(m).strip())
    ]
    try:
        if said and answer.settled.apply_with_words is not None:
            words = "" if conversation.emergency_category else _after(said, question)
            result = answer.settled.apply_with_words(words)  # asks for nothing: the model answers
        else:
            result = answer.settled.apply()
    except (FixCheckError, DispatchError):  # a lapsed offer tapped from a number no longer a contractor's, too
        return None  # changed since it was read: the turn tells the model it does not apply
    entry = {
        "name": answer.settled.name,
        "model": STRUCTURED_MODEL,
        "via": "typed" if answer.typed else "button",
        "payload": answer.payload,
        "result": result,
    }
    decision.trace.append(entry)
    if not said:  # nothing more, or only a photo, a sticker or a pin: the answer's own reply ends the turn
        return turn_record(conversation, message_ids, outcome=answer.settled.name, started=started, decision=decision)
    # Kept with the answer's message, so that a run of this turn again knows it was settled.
    ids = tuple(m.pk for m in answered)
    kept = {"conversation": conversation.pk, "answered": list(ids), "entry": entry}
    answer.message.raw_payload = {**(answer.message.raw_payload or {}), SETTLED_KEY: kept}
    answer.message.save(update_fields=["raw_payload"])
    return SettledInBurst(message_ids=ids, note=BURST_NOTE.format(result=result))


SETTLED_KEY = "settled"
# Kinds whose text is the tenant's words (a caption, a transcript); a pin's label or a contact's name is not.
WORDS_KINDS = frozenset({"", message_kinds.TEXT, message_kinds.IMAGE, message_kinds.AUDIO, message_kinds.VIDEO})


def _question_answered(
    conversation: Conversation, answer: buttons.Answer, latest: buttons.LatestQuestion
) -> Message | None:
    """The question the answer answers: the latest one, or for a tap on an
    older question's button, that question."""
    question = latest.get()
    if answer.typed or (
        question is not None and answer.payload in {c.payload for c in buttons.question_choices(question)}
    ):
        return question
    return buttons.question_offering(conversation, answer.payload)


def _after(said: list[tuple[Message, str]], question: Message | None) -> str:
    """The words sent after ``question``: those before it did not answer it."""
    return "\n".join(text for m, text in said if question is None or m.pk > question.pk)


def _settled_before(conversation: Conversation, messages: list[Message], decision: Decision) -> SettledInBurst | None:
    for message in messages:
        kept = (message.raw_payload or {}).get(SETTLED_KEY)
        if kept and kept.get("conversation") == conversation.pk:  # not one handed on from a retired conversation
            decision.trace.append(kept["entry"])
            return SettledInBurst(
                message_ids=tuple(kept["answered"]), note=BURST_NOTE.format(result=kept["entry"]["result"])
            )
    return None


def follow_up_note(*, conversation: Conversation, messages: list[Message]) -> str:
    """Record the tenant's one text after a comment or "what is still wrong?"
    prompt on its issue; the note that tells the model so, or "". Not while an
    emergency stands: then the message is the emergency's."""
    if conversation.emergency_category or len(messages) != 1:
        return ""
    result = follow_up_record(conversation=conversation, message=messages[0])
    return FOLLOW_UP_NOTE.format(result=result) if result else ""
