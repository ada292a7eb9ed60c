"""The tenant's answers to the repair loop's own questions, settled before
anything else in the turn, with the model on or off and while a person has
taken over: "Is it fixed?" (Yes / No), its rating (1-5), and the next text
after the comment or "what is still wrong?" prompt. What they do lives in
``issues/fix_check.py``; this module reads them (``buttons``) and records the
turn. Anything else, or an answer that no longer applies, is left to the turn."""

from __future__ import annotations

from conversations.models import Conversation, Message
from issues.fix_check import RATING_ACTION, FixCheckError, fix_answer_record, follow_up_record, rating_record
from issues.fix_question import FIX_ACTION
from issues.models import Issue
from orchestration import buttons
from orchestration.gating import Snapshot
from orchestration.models import Turn
from orchestration.trace import STRUCTURED_MODEL, Decision, turn_record


def _waiting(conversation: Conversation, reference: str) -> Issue | None:
    return Issue.objects.filter(conversation=conversation, reference=reference).only("status", "fix_answer").first()


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
    return buttons.Settled(
        name="issue_rating",
        apply=lambda: rating_record(conversation=conversation, reference=payload.ref, rating=int(payload.value)),
    )


buttons.button_action_register(FIX_ACTION, _fixed, any_question=True)
buttons.button_action_register(RATING_ACTION, _rating)


def answer_settle(*, conversation: Conversation, message_ids: list[int], started: float) -> Turn | None:
    """Inside the turn's first transaction, with the conversation locked: the
    Turn when this turn's messages were an answer to the repair loop's
    questions (recorded, the tenant answered), else None."""
    messages = list(Message.objects.filter(pk__in=message_ids, direction=Message.Direction.INBOUND).order_by("id"))
    snapshot = Snapshot(identity=conversation.identity_status, gathering=conversation.gathering_state)
    answer = buttons.answer_read(conversation=conversation, messages=messages, snapshot=snapshot)
    entry: dict[str, object] = {"model": STRUCTURED_MODEL}
    if answer is not None and answer.settled is not None:
        try:
            result = answer.settled.apply()
        except FixCheckError:
            return None  # changed since it was read: the turn tells the model it does not apply
        entry |= {
            "name": answer.settled.name,
            "via": "typed" if answer.typed else "button",
            "payload": answer.payload,
            "result": result,
        }
        outcome = answer.settled.name
    elif len(messages) == 1 and (recorded := follow_up_record(conversation=conversation, message=messages[0])):
        entry |= {"name": "issue_follow_up", "via": "text", "result": recorded}
        outcome = "issue_follow_up"
    else:
        return None
    decision = Decision()
    decision.trace.append(entry)
    return turn_record(conversation, message_ids, outcome=outcome, started=started, decision=decision)
