"""A contractor's messages: recognised by their number (an active
``Contractor`` of the organization), they go to the dispatch flow and never
to the tenant's turn engine. A tap or typed number answering a job offer
(Accept / Decline, ``job:accept:<id>``) or the visit times
(``slot:...:<id>``, ``issues/appointments.py``) is applied there; typed
text while a job awaits times is read for times; anything else is passed on
to the landlord, and the contractor is told so."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, Subquery

from conversations.models import Conversation, Message
from conversations.outbound import outbound_text_queue
from issues.appointments import SLOT_ACTION, job_reply, slot_propose, slots_send, slots_typed, window_parse
from issues.dispatch import JOB_ACTION, DispatchError, message_pass_on
from issues.models import Issue, Job
from orchestration import buttons
from orchestration.gating import Snapshot
from orchestration.models import Turn
from orchestration.trace import STRUCTURED_MODEL, Decision, turn_record
from properties.models import Contractor


def _job(conversation: Conversation, payload: buttons.Payload, snapshot: Snapshot) -> buttons.Settled | str:
    if payload.value not in ("accept", "decline") or not payload.ref.isdigit():
        return f"{payload.value!r} is not an answer to a job offer"
    return buttons.Settled(
        name="job_answer",
        apply=lambda: job_reply(conversation=conversation, job_id=int(payload.ref), accept=payload.value == "accept"),
    )


def _slot(conversation: Conversation, payload: buttons.Payload, snapshot: Snapshot) -> buttons.Settled | str:
    if not payload.ref.isdigit():
        return f"{payload.ref!r} is not a job"
    job_id = int(payload.ref)
    if payload.value == "send":
        return buttons.Settled(name="slots_send", apply=lambda: slots_send(conversation=conversation, job_id=job_id))
    window = window_parse(payload.value)
    if window is None:
        return f"{payload.value!r} is not a visit time"
    return buttons.Settled(
        name="slot_propose", apply=lambda: slot_propose(conversation=conversation, job_id=job_id, window=window)
    )


buttons.button_action_register(JOB_ACTION, _job, any_question=True)
buttons.button_action_register(SLOT_ACTION, _slot, any_question=True)


def _working() -> Q:
    """An active contractor, or one made inactive who still holds a job they
    accepted on an open issue: it stays theirs until the landlord withdraws
    it, so their "running late" and their times still reach dispatch."""
    holding = Job.objects.filter(
        contractor=OuterRef("pk"), state=Job.State.ACCEPTED, issue__status__in=Issue.OPEN_STATUSES
    )
    return Q(active=True) | Q(Exists(holding))


def contractor_pk() -> Subquery:
    """For a query of conversations: the pk of the working contractor whose
    number each one is (NULL for a tenant's). The turn's lock reads it as
    ``contractor_pk``, so a tenant's turn makes no query of its own for it."""
    contractors = Contractor.objects.filter(
        _working(), organization_id=OuterRef("organization_id"), whatsapp=OuterRef("phone")
    )
    return Subquery(contractors.order_by("pk").values("pk")[:1])


def contractor_of(conversation: Conversation) -> Contractor | None:
    contractors = Contractor.objects.filter(_working())
    if hasattr(conversation, "contractor_pk"):  # read with the turn's lock
        pk = getattr(conversation, "contractor_pk")  # noqa: B009 (an annotation: not on the model)
        return contractors.filter(pk=pk).first() if pk is not None else None
    return contractors.filter(organization_id=conversation.organization_id, whatsapp=conversation.phone).first()


def _words(messages: list[Message]) -> str:
    return "\n".join(m.body for m in messages if m.body)


def contractor_turn(
    *, conversation: Conversation, messages: list[Message], message_ids: list[int], started: float
) -> Turn | None:
    """The Turn of a contractor's messages, or None when the number is not a
    contractor's (the tenant's turn goes on)."""
    contractor = contractor_of(conversation)
    if contractor is None:
        return None
    snapshot = Snapshot(identity=conversation.identity_status, gathering=conversation.gathering_state)
    answer = buttons.answer_read(conversation=conversation, messages=messages, snapshot=snapshot)
    entry: dict[str, object] = {"model": STRUCTURED_MODEL, "name": "contractor_message"}
    outcome = "contractor_answer"
    try:
        if answer is not None and answer.settled is not None:
            entry |= {"name": answer.settled.name, "via": "typed" if answer.typed else "button"}
            entry |= {"payload": answer.payload, "result": answer.settled.apply()}
        elif (times := slots_typed(conversation=conversation, text=_words(messages))) is not None:
            entry |= {"name": "slots_typed", "result": times}
        else:
            message_pass_on(contractor, _words(messages))
            outbound_text_queue(
                conversation=conversation,
                body=f"Thanks, I've passed your message on to {conversation.organization.name}.",
                purpose="dispatch",
            )
            entry["result"] = "passed on to the landlord"
            outcome = "contractor_message"
    except DispatchError as error:  # changed since it was offered: the offer lapsed, the issue closed, ...
        result, body = f"refused: {error}", f"That can't be done now: {error}."
        if (answer is None or answer.settled is None) and (words := _words(messages)):
            # Their own words, not a tap: whatever they were about, a person reads them.
            message_pass_on(contractor, words)
            result += "; passed on to the landlord"
            body += f" I've passed your message on to {conversation.organization.name}."
        entry["result"] = result
        outbound_text_queue(conversation=conversation, body=body, purpose="dispatch")
    decision = Decision()
    decision.trace.append(entry)
    return turn_record(conversation, message_ids, outcome=outcome, started=started, decision=decision)
