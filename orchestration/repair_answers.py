"""The tenant's answers to the repair loop's own questions, settled before
anything else in the turn, with the model on or off and while a person has
taken over: "Is it fixed?" (Yes / No) and its rating (1-5) end the turn; the
next text after the comment or "what is still wrong?" prompt is recorded on
the issue and still goes on to the turn, with a note for the model. What
they do lives in ``issues/fix_check.py``; this module reads them
(``buttons``). Anything else, or an answer that no longer applies, is left
to the turn."""

from __future__ import annotations

from conversations.models import Conversation, Message
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
    return buttons.Settled(
        name="issue_fixed",
        apply=lambda: fix_answer_record(conversation=conversation, reference=payload.ref, answer=payload.value),
    )


def _rating(conversation: Conversation, payload: buttons.Payload, snapshot: Snapshot) -> buttons.Settled | str:
    if not payload.value.isdigit():
        return f"{payload.value!r} is not a rating"
    issue = _waiting(conversation, payload.ref)
    if issue is None or issue.fix_answer != "yes" or issue.rating is not None:
        return f"{payload.ref} is not waiting for a rating"
    return buttons.Settled(
        name="issue_rating",
        apply=lambda: rating_record(conversation=conversation, reference=payload.ref, rating=int(payload.value)),
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


def answer_settle(
    *,
    conversation: Conversation,
    messages: list[Message],
    message_ids: list[int],
    started: float,
    latest: buttons.LatestQuestion | None = None,
) -> Turn | None:
    """Inside the turn's first transaction, with the conversation locked: the
    Turn when this turn's inbound ``messages`` were an answer to the repair
    loop's questions (recorded, the tenant answered), else None."""
    snapshot = Snapshot(identity=conversation.identity_status, gathering=conversation.gathering_state)
    answer = buttons.answer_read(conversation=conversation, messages=messages, snapshot=snapshot, latest=latest)
    if answer is None or answer.settled is None:
        return None
    try:
        result = answer.settled.apply()
    except (FixCheckError, DispatchError):  # a lapsed offer tapped from a number no longer a contractor's, too
        return None  # changed since it was read: the turn tells the model it does not apply
    decision = Decision()
    decision.trace.append(
        {
            "name": answer.settled.name,
            "model": STRUCTURED_MODEL,
            "via": "typed" if answer.typed else "button",
            "payload": answer.payload,
            "result": result,
        }
    )
    return turn_record(conversation, message_ids, outcome=answer.settled.name, started=started, decision=decision)


def follow_up_note(*, conversation: Conversation, messages: list[Message]) -> str:
    """Record the tenant's one text after a comment or "what is still wrong?"
    prompt on its issue; the note that tells the model so, or "". Not while an
    emergency stands: then the message is the emergency's."""
    if conversation.emergency_category or len(messages) != 1:
        return ""
    result = follow_up_record(conversation=conversation, message=messages[0])
    return FOLLOW_UP_NOTE.format(result=result) if result else ""
