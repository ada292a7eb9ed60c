"""The turn engine: one model turn for a conversation's new messages.

    read (short transaction) -> call the model (no lock held) -> re-lock,
    check nothing moved -> apply the tool, queue the reply, write the Turn
    trace and mark the messages processed (one transaction)

The model acts only through tools; ``gating`` decides what is allowed in the
current ``identity_status`` and ``gathering_state``.

Some messages are answered before, or instead of, the model
(``_structured``; docs/whatsapp-pins-buttons.md): a tapped button or a
numbered reply that answers our latest question is applied as the tool call
it stands for (``buttons``), a location pin from a number with no tenancy
proposes the nearest home, a sticker or reaction alone needs no reply, and a
message we cannot read (a contact card, an unsupported type) gets a short
answer saying what we can read. A call that is not
allowed is answered with an ``is_error`` tool result and the model gets at
most ``TURN_MAX_RETRIES`` more tries; then, as when Claude is unavailable, the
tenant gets a safe fallback reply and the conversation is escalated.
"""

from __future__ import annotations

import logging
import time
from typing import Any, cast

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import ForeignKey
from django.utils import timezone

from conversations import message_kinds
from conversations.models import Conversation, GatheringState, IdentityStatus, Message
from conversations.number_change import messages_hand_on
from conversations.outbound import Choice, outbound_choice_queue, outbound_sent_together, outbound_text_queue
from emergencies.models import EmergencyAlert
from llm.types import ToolCall
from orchestration import buttons, contractor_turns, repair_answers, services
from orchestration.context import (
    TurnContext,
    gathering_is_stale,
    turn_context_confirmed,
    turn_context_load,
    turn_messages_load,
)
from orchestration.decide import decide
from orchestration.emergency_reports import (
    emergency_end_if_over,
    emergency_filed,
    emergency_report_note,
    emergency_report_open,
)
from orchestration.gating import identity_after
from orchestration.handlers import tool_apply
from orchestration.models import Turn
from orchestration.replies import DEFAULT_LANGUAGE, reply_greeted, reply_text
from orchestration.trace import STRUCTURED_MODEL, Decision, turn_record
from properties.address_match import building_label
from properties.models import Property

logger = logging.getLogger(__name__)

STALE_NOTE = (
    "The tenant's previous report was left unfinished for more than {hours} hours and has been closed. "
    "Tell the tenant so in your reply, in their language, and ask them to describe the problem again if it is "
    "still there. Their identity and property are unchanged."
)


BETWEEN_REPORTS = (GatheringState.IDLE, GatheringState.ISSUE_CREATED)


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
    with transaction.atomic(), outbound_sent_together():
        conversation = _lock(conversation_id)
        if _any_processed(message_ids):
            return None
        if conversation.retired_at is not None:  # the number stopped being its tenant's just now
            _hand_on(conversation, message_ids)
            return None
        # Read once, with their media and the history before them: for the answers
        # settled before the model, then for the model's context.
        messages = turn_messages_load(conversation, message_ids)
        inbound = [m for m in messages[0] if m.direction == Message.Direction.INBOUND]
        # A contractor's messages go to dispatch, never to the tenant's assistant.
        if contractor := contractor_turns.contractor_turn(
            conversation=conversation, messages=inbound, message_ids=message_ids, started=started
        ):
            return contractor
        # The repair loop's own questions are answered with the model on or off, taken over or not.
        latest = buttons.LatestQuestion(conversation)
        settled = repair_answers.answer_settle(
            conversation=conversation,
            messages=inbound,
            message_ids=message_ids,
            started=started,
            decision=decision,
            latest=latest,
        )
        if isinstance(settled, Turn):
            return settled
        emergency_end_if_over(conversation)  # an emergency long over must not make this turn's report one
        follow_up = repair_answers.follow_up_note(conversation=conversation, messages=inbound)
        at_start = (conversation.identity_status, conversation.gathering_state)
        homes = None  # the tenant's current homes, where read here
        if conversation.identity_status == IdentityStatus.UNIDENTIFIED:  # also a tenant whose tenancy began since
            services.conversation_identify_by_phone(conversation=conversation)
        elif conversation.gathering_state in BETWEEN_REPORTS and not emergency_filed(conversation):
            homes = services.conversation_home_recheck(conversation=conversation)  # a tenant who moved since
        # Once the property is known, the emergency's issue: with the model on or off, paused or not.
        emergency_report_open(conversation=conversation)
        if conversation.bot_paused:
            return turn_record(
                conversation, message_ids, outcome="paused", started=started, decision=decision, before=at_start
            )
        if not llm_enabled(conversation):
            return _flag_off(conversation, message_ids, started=started, decision=decision)
        notes = [note for note in (follow_up, settled.note if settled else "") if note]
        if gathering_is_stale(conversation):
            since = min((m.created_at for m in messages[0]), default=timezone.now())  # this turn's first message
            services.gathering_restart(conversation=conversation, since=since)
            notes.append(STALE_NOTE.format(hours=settings.GATHERING_STALE_HOURS))
        if emergency_note := emergency_report_note(conversation):
            notes.append(emergency_note)
        context = turn_context_load(
            conversation=conversation, message_ids=message_ids, messages=messages, tenant_properties=homes
        )
        services.conversation_language_note(conversation=conversation, text=context.latest_text)
        context.notes = notes
        context.identity_at_start, context.gathering_at_start = at_start
        if settled:  # an answer settled above is not read again; a question it asked is the latest now
            answered, latest = frozenset(settled.message_ids), buttons.LatestQuestion(conversation)
        else:
            answered = frozenset()
        early = _structured(conversation, context, decision, message_ids, started, latest, answered)
        if isinstance(early, Turn):
            return early  # answered without the model (a pin, a sticker, a message we cannot read)

    model_context = context
    if decision.first is not None:  # a tapped "yes": confirmed, then the model goes on with the report
        code = decision.first.input["property_code"]
        model_context = turn_context_confirmed(context, property_code=code)
    if decision.call is None:
        decide(model_context, decision)

    try:
        with transaction.atomic(), outbound_sent_together():
            conversation = _relock(conversation_id, context.conversation)
            if _any_processed(message_ids):
                logger.info("turn for conversation %s discarded: messages handled by another worker", conversation_id)
                return None
            if conversation.retired_at is not None:  # during the model call: its answer is not theirs to get
                _hand_on(conversation, message_ids)
                return None
            if conversation.bot_paused:
                return turn_record(conversation, message_ids, outcome="paused", started=started, decision=decision)
            # An alert raised meanwhile moves it too: the answer was chosen without the emergency.
            if (conversation.identity_status, conversation.gathering_state, bool(conversation.emergency_category)) != (
                context.snapshot.identity,
                context.snapshot.gathering,
                context.snapshot.emergency,
            ):
                raise StateMoved
            return _apply(conversation, context, decision, message_ids, started)
    except StateMoved:
        logger.info("conversation %s changed during the model call; the turn will run again", conversation_id)
        return None


# --- answered before the model ----------------------------------------------------------------

SILENT_KINDS = frozenset({message_kinds.STICKER, message_kinds.REACTION})
UNREADABLE_KINDS = frozenset({message_kinds.CONTACTS, message_kinds.UNSUPPORTED})
# A pin proposes a home where find_property may: a number with no tenancy, not yet confirmed.
PIN_IDENTITIES = (IdentityStatus.UNIDENTIFIED, IdentityStatus.IDENTIFIED)
CHOICE_NOTE = (
    "After your reply the tenant is sent a question listing their homes ({codes}) to tap or answer with a "
    "number: do not list the homes yourself."
)


def _structured(
    conversation: Conversation,
    context: TurnContext,
    decision: Decision,
    message_ids: list[int],
    started: float,
    latest: buttons.LatestQuestion,
    answered: frozenset[int],
) -> Turn | None:
    """Inside the turn's first transaction: what the turn's messages settle
    without the model. Returns the Turn when the turn ends here; else may
    leave a structured call in ``decision`` (``call``: applied without the
    model; ``first``: a confirmation the model goes on from) or notes for
    the model in ``context``. ``answered``: messages settled already
    (``repair_answers``), left out here."""
    new = [m for m in context.new_messages if m.direction == Message.Direction.INBOUND and m.pk not in answered]
    answer = buttons.answer_read(conversation=conversation, messages=new, snapshot=context.snapshot, latest=latest)
    if answer is not None and answer.structured is not None:
        via = "typed" if answer.typed else "button"
        call = ToolCall(
            id=f"{via}-{answer.message.pk}", name=answer.structured.tool, input=answer.structured.tool_input
        )
        decision.trace.append(
            {"name": call.name, "input": call.input, "model": STRUCTURED_MODEL, "via": via, "payload": answer.payload}
        )
        if answer.structured.model_continues:
            decision.first, decision.first_index = call, len(decision.trace) - 1
        else:
            decision.call, decision.call_index = call, len(decision.trace) - 1
        return None
    if answer is not None:
        if not answer.refused:  # settled at the turn's start, then changed underneath
            answer.refused = "it was answered already"
        context.notes.append(buttons.refused_note(answer))
        return None
    pins = [m for m in new if m.kind == message_kinds.LOCATION and m.latitude is not None]
    if pins and not context.snapshot.property_codes and conversation.identity_status in PIN_IDENTITIES:
        return _pin_apply(conversation, context, decision, pins[-1], message_ids, started)
    if pins and _own_home_pinned(conversation, context, decision, pins[-1]):
        before = (context.identity_at_start, context.gathering_at_start)
        return turn_record(
            conversation, message_ids, outcome="location_pin", started=started, decision=decision, before=before
        )
    kinds = {m.kind for m in new}
    if new and kinds <= SILENT_KINDS:
        if _first_contact(conversation):
            reply = _product_reply(conversation, "sticker_first")
            outbound_text_queue(conversation=conversation, body=reply, purpose="reply")
            return turn_record(conversation, message_ids, outcome="sticker_greeted", started=started)
        return turn_record(conversation, message_ids, outcome="no_reply", started=started)
    if new and kinds <= UNREADABLE_KINDS | SILENT_KINDS and not context.latest_text:
        reply = _product_reply(conversation, "unsupported_kind")
        outbound_text_queue(conversation=conversation, body=reply, purpose="reply")
        return turn_record(conversation, message_ids, outcome="unsupported_kind", started=started)
    if _choice_due(conversation, context):
        context.notes.append(CHOICE_NOTE.format(codes=", ".join(context.snapshot.property_codes)))
    return None


def _own_home_pinned(conversation: Conversation, context: TurnContext, decision: Decision, pin: Message) -> bool:
    """A tenant with several homes who has not said which shares a pin near
    one of them: that home is asked about with Yes / No (never confirmed by
    the pin). False, and the model answers, when none of theirs is near."""
    codes = context.snapshot.property_codes
    if conversation.identity_status != IdentityStatus.IDENTIFIED or len(codes) < 2:
        return False
    assert pin.latitude is not None and pin.longitude is not None
    match = services.conversation_property_propose_near(
        conversation=conversation, latitude=float(pin.latitude), longitude=float(pin.longitude), codes=codes
    )
    if match.property is None:
        return False
    _candidate_question(conversation, match.property, lead="location_candidate")
    pin_input = {"latitude": str(pin.latitude), "longitude": str(pin.longitude), "label": pin.location_name}
    result = f"candidate {match.property.code} among the tenant's homes ({match.metres:.0f} m from the pin)"
    decision.trace.append(
        {
            "name": "find_property",
            "input": pin_input,
            "model": STRUCTURED_MODEL,
            "via": "location pin",
            "result": result,
        }
    )
    return True


def _first_contact(conversation: Conversation) -> bool:
    """Nothing has been said to this number yet."""
    return not Message.objects.filter(conversation=conversation, direction=Message.Direction.OUTBOUND).exists()


def _product_reply(conversation: Conversation, key: str, **values: str) -> str:
    """A text the product writes itself, in the tenant's language; the first
    one a number gets opens with their WhatsApp first name ("Hi Ana!"), which
    is only ever a greeting, never proof of who they are."""
    if _first_contact(conversation):
        return reply_greeted(key, language=conversation.language, profile_name=conversation.profile_name, **values)
    return reply_text(key, language=conversation.language, **values)


def _pin_apply(
    conversation: Conversation,
    context: TurnContext,
    decision: Decision,
    pin: Message,
    message_ids: list[int],
    started: float,
) -> Turn:
    """A location pin from a number with no tenancy: the nearest home becomes
    the candidate, asked about with Yes / No, as ``find_property`` does for
    an address; the same identity moves (``find_property`` match / no_match)."""
    assert pin.latitude is not None and pin.longitude is not None
    before = (context.identity_at_start, context.gathering_at_start)
    match = services.conversation_property_propose_near(
        conversation=conversation, latitude=float(pin.latitude), longitude=float(pin.longitude)
    )
    outcome = "match" if match.property is not None else "no_match"
    conversation.identity_status = identity_after("find_property", outcome, conversation.identity_status)
    conversation.save(update_fields=["identity_status", "updated_at"])
    if match.property is not None:
        result = f"candidate {match.property.code} ({match.metres:.0f} m from the pin)"
        _candidate_question(conversation, match.property, lead="location_candidate")
    elif match.ambiguous:
        codes = ", ".join(p.code for p in match.candidates)
        result = f"several properties at the pin ({codes}): asked which"
        key = "property_which_flat" if match.same_building else "property_which"
        building = building_label(match.candidates[0].address)
        body = _product_reply(conversation, key, building=building)
        outbound_text_queue(conversation=conversation, body=body, purpose="reply")
    else:
        result = f"no property within {settings.LOCATION_MATCH_MAX_METRES} m"
        body = _product_reply(conversation, "location_not_found")
        outbound_text_queue(conversation=conversation, body=body, purpose="reply")
    pin_input = {"latitude": str(pin.latitude), "longitude": str(pin.longitude), "label": pin.location_name}
    decision.trace.append(
        {
            "name": "find_property",
            "input": pin_input,
            "model": STRUCTURED_MODEL,
            "via": "location pin",
            "result": result,
        }
    )
    return turn_record(
        conversation, message_ids, outcome="location_pin", started=started, decision=decision, before=before
    )


def _candidate_question(conversation: Conversation, prop: Property, *, lead: str) -> Message:
    """ "Is your home 12 Elm Road?" with Yes / No: a quick-reply template
    (WHATSAPP_TEMPLATES ``property_confirm``: {{1}} the address, {{2}} the
    property code) or, without one, numbered text."""
    language = conversation.language
    text = _product_reply(conversation, lead, address=prop.address, postcode=prop.postcode)
    body = f"{text}\n{reply_text('choice_yes_no', language=language)}"
    return outbound_choice_queue(
        conversation=conversation,
        body=body,
        choices=[
            Choice(
                buttons.payload_make(buttons.CONFIRM_PROPERTY, "yes", prop.code),
                reply_text("button_yes", language=language),
            ),
            Choice(
                buttons.payload_make(buttons.CONFIRM_PROPERTY, "no", prop.code),
                reply_text("button_no", language=language),
            ),
        ],
        purpose="property_confirm",
        content_variables={"1": f"{prop.address}, {prop.postcode}".strip(", "), "2": prop.code},
        language=language or DEFAULT_LANGUAGE,  # the texts are English when the language is not known
    )


def _choice_due(conversation: Conversation, context: TurnContext) -> bool:
    """A number with several homes that has not said which one: after the
    model's reply, ask with choices, unless that question is already waiting."""
    if conversation.identity_status != IdentityStatus.IDENTIFIED or len(context.snapshot.property_codes) < 2:
        return False
    if conversation.candidate_property_id is not None:
        return False
    latest = buttons.question_latest(conversation)
    if latest is None or (latest.raw_payload or {}).get("purpose") not in PROPERTY_CHOICE_PURPOSES:
        return True
    said_since = Message.objects.filter(
        conversation=conversation, direction=Message.Direction.OUTBOUND, id__gt=latest.pk
    ).count()
    return said_since > 1  # asked, then more was said: ask again


PROPERTY_CHOICE_PURPOSES = ("property_choice", "property_choice_list")


def _property_choice_question(conversation: Conversation, homes: list[Property]) -> Message:
    """Which of the tenant's homes: for two, a quick-reply template
    (``property_choice``: {{1}} and {{2}} the addresses, {{3}} and {{4}} their
    codes); for more, or without a template, numbered text."""
    language = conversation.language
    options = "\n".join(f"{n}. {home.address}" for n, home in enumerate(homes, start=1))
    variables = {str(n): home.address for n, home in enumerate(homes, start=1)}
    variables.update({str(len(homes) + n): home.code for n, home in enumerate(homes, start=1)})
    return outbound_choice_queue(
        conversation=conversation,
        body=reply_text("property_choice", language=language, options=options),
        choices=[
            Choice(buttons.payload_make(buttons.CHOOSE_PROPERTY, "pick", home.code), str(n))
            for n, home in enumerate(homes, start=1)
        ],
        purpose="property_choice" if len(homes) == 2 else "property_choice_list",
        content_variables=variables,
        language=language or DEFAULT_LANGUAGE,  # the texts are English when the language is not known
    )


RELATED = ("organization", "tenant", "property", "candidate_property")


def _lock(conversation_id: int) -> Conversation:
    """The conversation locked, with its related rows and whether the number
    is a contractor's (``contractor_pk``), in one query."""
    conversation = (
        Conversation.objects.select_for_update(of=("self",))
        .select_related(*RELATED)
        .annotate(contractor_pk=contractor_turns.contractor_pk())
        .get(pk=conversation_id)
    )
    # A locking query that waited for another turn re-reads the locked row but
    # not the rows it joined: one the row no longer points at is read on use.
    for field in _related_fields():
        related = field.get_cached_value(conversation, default=None)
        if getattr(conversation, field.attname) != (related.pk if related is not None else None):
            field.delete_cached_value(conversation)
    return conversation


def _relock(conversation_id: int, earlier: Conversation) -> Conversation:
    """The conversation locked again after the model call, in one query: the
    row itself, fresh, without joins; the related rows read at the start of
    the turn are kept where the row still points at them (else read on use)."""
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    for field in _related_fields():
        related = field.get_cached_value(earlier, default=None)
        if related is not None and getattr(conversation, field.attname) == related.pk:
            field.set_cached_value(conversation, related)
    return conversation


def _related_fields() -> list[ForeignKey[Any, Any]]:
    return [cast("ForeignKey[Any, Any]", Conversation._meta.get_field(name)) for name in RELATED]


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
    if (
        decision.call.name == "find_property"
        and conversation.candidate_property is not None
        and not lead
        and applied.issue is None
    ):
        # The candidate is asked about with Yes / No buttons (or numbered text).
        _candidate_question(conversation, conversation.candidate_property, lead="property_confirm_question")
    else:
        reply = f"{lead}\n{applied.reply}" if lead else applied.reply
        outbound_text_queue(conversation=conversation, body=reply, author=Message.Author.ASSISTANT, purpose="reply")
    if _choice_due(conversation, context):
        homes = [p for p in context.tenant_properties if p.code in context.snapshot.property_codes]
        _property_choice_question(conversation, homes)
    return turn_record(conversation, message_ids, outcome="tool", started=started, decision=decision, before=before)


def _fail_safe(conversation_id: int, message_ids: list[int], decision: Decision, started: float) -> Turn | None:
    """After an unexpected error: the fallback, in a fresh transaction (whatever
    the failed one wrote was rolled back)."""
    with transaction.atomic(), outbound_sent_together():
        conversation = _lock(conversation_id)
        if _any_processed(message_ids):
            return None
        if conversation.retired_at is not None:
            _hand_on(conversation, message_ids)
            return None
        if conversation.bot_paused:
            return turn_record(conversation, message_ids, outcome="paused", started=started, decision=decision)
        return _fallback(conversation, message_ids, decision, started)


def _hand_on(conversation: Conversation, message_ids: list[int]) -> None:
    """The conversation was retired (its number stopped being its tenant's)
    after these messages came in: they and an alert they raised go to the
    number's live conversation, where a turn answers them as whoever has the
    number now (``conversations.number_change``)."""
    live = messages_hand_on(conversation=conversation, message_ids=message_ids)
    moved = EmergencyAlert.objects.filter(conversation=conversation, message_id__in=message_ids)
    if latest := moved.order_by("-created_at").first():
        moved.update(conversation=live)
        Conversation.objects.filter(pk=live.pk).update(
            emergency_category=latest.category, emergency_alerted_at=latest.created_at
        )


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


def _flag_off(conversation: Conversation, message_ids: list[int], *, started: float, decision: Decision) -> Turn:
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
            body=_product_reply(conversation, "assistant_off", organization=conversation.organization.name),
            author=Message.Author.ASSISTANT,
            purpose="reply",
        )
    return turn_record(conversation, message_ids, outcome="flag_off", started=started, decision=decision)
