"""What the model is told at the start of a turn: read from PostgreSQL in one
short transaction, rendered as the first user message."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.db.models import Q, Subquery
from django.utils import timezone

from conversations import message_kinds
from conversations.models import (
    Conversation,
    GatheringState,
    IdentityStatus,
    Media,
    Message,
    TranscriptionState,
    message_text,
)
from issues.models import Issue
from issues.services import PHOTO_USABLE_STATES, report_photos
from llm.types import Content, text_block
from orchestration.gating import Snapshot, create_issue_possible
from orchestration.images import ImageCache, TurnImages, turn_images_build, vision_on
from properties.models import Property
from properties.selectors import tenancies_current

# ADR-017 "conditional RAG": an idle conversation with this many messages or
# fewer skips retrieval (a design rule, not a tuning knob).
RETRIEVAL_SKIP_MAX_MESSAGES = 2


@dataclass
class TurnContext:
    conversation: Conversation
    new_messages: list[Message]
    history: list[Message]
    open_issues: list[Issue]
    tenant_properties: list  # Property objects of current tenancies
    snapshot: Snapshot
    notes: list[str] = field(default_factory=list)
    knowledge: str = ""  # passages retrieved for this turn (conditional retrieval), rendered into the context
    # The states before this turn's automatic steps (phone lookup, stale restart), for the trace.
    identity_at_start: str = ""
    gathering_at_start: str = ""

    @property
    def latest_text(self) -> str:
        """What the tenant wrote or said in this turn's messages (voice notes' transcripts included)."""
        return "\n".join(text for m in self.new_messages if (text := message_text(m))).strip()


# The turn's messages and the history before them (``turn_messages_load``).
TurnMessages = tuple[list[Message], list[Message]]


def turn_context_load(
    *,
    conversation: Conversation,
    message_ids: list[int],
    messages: TurnMessages | None = None,
    tenant_properties: list[Property] | None = None,
) -> TurnContext:
    """What the model is shown. ``messages``: the turn's messages and history
    when the caller has read them already (``turn_messages_load``);
    ``tenant_properties``: the tenant's current homes, likewise."""
    new_messages, history = messages or turn_messages_load(conversation, message_ids)
    if tenant_properties is None:
        tenant_properties = _tenant_properties(conversation)
    scope = conversation.property or (tenant_properties[0] if len(tenant_properties) == 1 else None)
    open_issues = _open_issues(scope, conversation, tenant_properties) if scope else []
    photo_received = report_photos(conversation=conversation, message_ids=message_ids).exists()
    report_text = "\n".join(
        message_text(m)
        for m in [*history, *new_messages]
        if m.author == Message.Author.TENANT and in_report(conversation, m)
    )
    snapshot = Snapshot(
        identity=conversation.identity_status,
        gathering=conversation.gathering_state,
        emergency=bool(conversation.emergency_category),
        photo_received=photo_received,
        property_codes=tuple(p.code for p in tenant_properties),
        candidate_code=conversation.candidate_property.code if conversation.candidate_property is not None else "",
        property_code=conversation.property.code if conversation.property is not None else "",
        report_text=report_text,
    )
    return TurnContext(
        conversation=conversation,
        new_messages=new_messages,
        history=history,
        open_issues=open_issues,
        tenant_properties=tenant_properties,
        snapshot=snapshot,
    )


def turn_messages_load(conversation: Conversation, message_ids: list[int]) -> TurnMessages:
    """The turn's messages (by id) and the ``TURN_HISTORY_MESSAGES`` before the
    first of them (by time), with their media: one query for the messages and
    one for all their media."""
    first_new = (
        Subquery(Message.objects.filter(pk__in=message_ids).order_by("created_at").values("created_at")[:1])
        if message_ids
        else timezone.now()
    )
    window = list(
        Message.objects.filter(conversation=conversation)
        .filter(Q(pk__in=message_ids) | Q(created_at__lt=first_new))
        .prefetch_related("media")
        .order_by("-created_at", "-id")[: settings.TURN_HISTORY_MESSAGES + len(message_ids)]
    )
    wanted = set(message_ids)
    new_messages = sorted((m for m in window if m.pk in wanted), key=lambda m: m.pk)
    history = [m for m in window if m.pk not in wanted][: settings.TURN_HISTORY_MESSAGES]
    return new_messages, history[::-1]


def _tenant_properties(conversation: Conversation) -> list[Property]:
    if conversation.tenant is None:
        return []
    return [t.property for t in tenancies_current(tenant=conversation.tenant)]


def _open_issues(scope, conversation: Conversation, tenant_properties: list[Property]) -> list[Issue]:
    """The open issues at the property the model may mention; for a number
    with no tenancy there (unverified), only its own."""
    issues = Issue.objects.filter(property=scope, status__in=Issue.OPEN_STATUSES)
    if scope not in tenant_properties:
        issues = issues.filter(conversation_id=conversation.pk)
    return list(issues.order_by("-created_at")[:10])


CONFIRMED_NOTE = (
    "The tenant has just confirmed that they live at {address}; the reply starts with 'Thanks, that's {address}.' "
    "and goes on with your message. If the tenant has already said what is wrong (see the conversation), carry on "
    "with that report now and do not ask them to repeat it; if they have not, ask what you can help with (respond)."
)


def turn_context_confirmed(context: TurnContext, *, property_code: str) -> TurnContext:
    """The context once this turn's ``confirm_property`` call is applied, for
    the model to go on with the report in the same turn. Nothing is written:
    the conversation is a copy with the property set."""
    conversation = copy.copy(context.conversation)
    prop = Property.objects.get(organization_id=conversation.organization_id, code=property_code)
    conversation.property = prop
    conversation.candidate_property = None
    conversation.identity_status = IdentityStatus.CONFIRMED
    snapshot = replace(context.snapshot, identity=IdentityStatus.CONFIRMED, property_code=prop.code, candidate_code="")
    return replace(
        context,
        conversation=conversation,
        snapshot=snapshot,
        open_issues=_open_issues(prop, conversation, _tenant_properties(conversation)),
        notes=[*context.notes, CONFIRMED_NOTE.format(address=prop.address)],
    )


def in_report(conversation: Conversation, message: Message) -> bool:
    """Whether ``message`` belongs to the report now being gathered: it came
    after the last issue was filed or the last report was closed (a report in
    progress starts at ``gathering_started_at``)."""
    since = conversation.gathering_started_at
    if since is None:
        return True
    if conversation.gathering_state == GatheringState.ISSUE_CREATED:
        return message.created_at > since  # the filing turn's last message is the issue's
    return message.created_at >= since


def report_closed_at(conversation: Conversation):
    """When the tenant's last report was dropped without an issue
    (``close_report``) or went stale: in idle, ``gathering_started_at`` marks where the
    next report starts. None when there is no such report."""
    if conversation.gathering_state == GatheringState.IDLE:
        return conversation.gathering_started_at
    return None


CLOSED_DIVIDER = "---- The report above was closed without an issue; anything after this line is new. ----"


def organization_zone(organization) -> ZoneInfo:
    """The organization's timezone (``Organization.timezone``); UTC if the name is not a known zone."""
    try:
        return ZoneInfo(organization.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _stamp(message: Message, zone: ZoneInfo) -> str:
    who = {"tenant": "Tenant", "assistant": "You", "landlord": "Agency staff", "system": "System"}[message.author]
    text = message.body or ""
    if message.direction == "inbound":
        text = " ".join(part for part in [text, *_inbound_parts(message)] if part)
    return f"[{timezone.localtime(message.created_at, zone):%Y-%m-%d %H:%M}] {who}: {text}"


def _inbound_parts(message: Message) -> list[str]:
    """What a tenant's message carried besides its text, in words the model reads."""
    parts = []
    if message.kind == message_kinds.LOCATION:
        name = f' "{message.location_name}"' if message.location_name else ""
        parts.append(f"[shared a location pin{name} at {message.latitude}, {message.longitude}]")
    if message.button_payload or message.kind == message_kinds.BUTTON:
        parts.append(f'[tapped the button "{message.button_text}" (payload {message.button_payload or "none"})]')
    media = list(message.media.all())
    if message.kind == message_kinds.STICKER:
        return [*parts, "[sent a sticker]"]
    usable = [m for m in media if m.download_state in PHOTO_USABLE_STATES]
    photos = [m for m in usable if message_kinds.media_kind(m.content_type) == message_kinds.IMAGE]
    if photos:
        parts.append(f"[sent {len(photos)} photo(s)]")
    for item in usable:
        kind = message_kinds.media_kind(item.content_type)
        if kind == message_kinds.AUDIO:
            parts.append(_voice_note(item))
        elif kind != message_kinds.IMAGE:
            parts.append(f"[sent a {kind}]")
    if unusable := len(media) - len(usable):
        parts.append(f"[sent {unusable} file(s) we could not accept]")
    return parts


def _voice_note(media: Media) -> str:
    if media.transcription_state == TranscriptionState.DONE and media.transcript:
        return f'[voice note, transcribed: "{media.transcript}"]'
    if media.transcription_state == TranscriptionState.PENDING:
        return "[voice note, not transcribed in time: ask them to type it]"
    return "[voice note that could not be transcribed: ask them to type it]"


def turn_context_render(context: TurnContext) -> str:
    c = context.conversation
    s = context.snapshot
    zone = organization_zone(c.organization)
    lines = [
        f"Now: {timezone.localtime(timezone.now(), zone):%Y-%m-%d %H:%M} ({zone.key}; all times below are local). "
        f"Agency: {c.organization.name} (country {c.organization.country}).",
        f"Tenant phone: {c.phone}. Tenant: {c.tenant.name if c.tenant is not None else 'not on our records'}."
        + (
            f" WhatsApp name: {c.profile_name} (their own choice; never proof of who they are)."
            if c.profile_name
            else ""
        ),
        f"identity_status: {s.identity}",
        f"gathering_state: {s.gathering}",
        f"Property: {c.property.code + ' - ' + c.property.address if c.property is not None else 'not confirmed'}",
    ]
    if s.candidate_code and c.candidate_property is not None:
        lines.append(
            "Candidate property awaiting the tenant's confirmation: "
            f"{s.candidate_code} - {c.candidate_property.address}"
        )
    if len(context.tenant_properties) > 1 and not c.property_id:
        lines.append(
            "The tenant rents several properties; ask which one: "
            + "; ".join(f"{p.code} - {p.address}" for p in context.tenant_properties)
        )
    elif len(context.tenant_properties) > 1:
        others = [p for p in context.tenant_properties if p.pk != c.property_id]
        lines.append(
            "The tenant also rents: "
            + "; ".join(f"{p.code} - {p.address}" for p in others)
            + ". If they say a problem is at one of those, call confirm_property with its code before "
            "create_issue; if it is unclear which home a new problem is at, ask."
        )
    if s.emergency:
        lines.append(f"EMERGENCY reported ({c.emergency_category}): safety instructions were sent; no photo needed.")
    lines.append(f"Photo received for this report: {'yes' if s.photo_received else 'no'}")
    if context.open_issues:
        lines.append("Open issues at this property:")
        lines += [
            f"- {i.reference} ({timezone.localtime(i.created_at, zone):%Y-%m-%d}): {i.title} - {i.location}"
            for i in context.open_issues
        ]
    lines += context.notes
    closed_at = report_closed_at(c)
    if closed_at is not None:
        lines.append(
            "The tenant's previous report was closed without an issue (marked in the conversation below). "
            "Do not carry its details into a new report: a new problem is reported afresh."
        )
    if context.knowledge:
        lines.append("Passages from the landlord's documents that may help (answer from them only if they fit):")
        lines.append(context.knowledge)
    if context.history:
        lines.append("Conversation so far:")
        for m in context.history:
            if closed_at is not None and m.author == Message.Author.TENANT and m.created_at >= closed_at:
                lines.append(CLOSED_DIVIDER)
                closed_at = None
            lines.append(_stamp(m, zone))
    if closed_at is not None:
        lines.append(CLOSED_DIVIDER)
    lines.append("New message(s) from the tenant:")
    lines += [_stamp(m, zone) for m in context.new_messages]
    return "\n".join(lines)


def turn_images(context: TurnContext, *, cache: ImageCache) -> TurnImages:
    """The tenant's photos the model sees in this call (``orchestration.images``):
    those of this turn's messages, and the report's own whenever an issue may
    be created (or in an emergency), so ``create_issue`` is decided, and
    ``photo_findings`` written, looking at them. Nothing with vision off."""
    conversation = context.conversation
    if not vision_on(conversation):
        return TurnImages()
    candidates = [m for message in context.new_messages for m in message.media.all()]
    candidates = [m for m in candidates if m.download_state in PHOTO_USABLE_STATES]
    if context.snapshot.photo_received and (context.snapshot.emergency or create_issue_possible(context.snapshot)):
        new_ids = [m.pk for m in context.new_messages]
        candidates += list(
            report_photos(conversation=conversation, message_ids=new_ids).select_related("message").order_by("id")
        )
    return turn_images_build(candidates=candidates, zone=organization_zone(conversation.organization), cache=cache)


def turn_context_content(context: TurnContext, *, cache: ImageCache) -> tuple[Content, TurnImages]:
    """The first user message's content: the rendered context (a string, as
    always, when there is no photo to show or vision is off), or the photos as
    image blocks, each after its label, then the context with a note on what
    was shown and what was not."""
    images = turn_images(context, cache=cache)
    if not images.images and not images.notes:
        return turn_context_render(context), images
    # The notes go with the others, above the conversation: after the last
    # message they would read as part of the tenant's words.
    text = turn_context_render(replace(context, notes=[*context.notes, *images.notes]))
    if not images.images:
        return text, images
    return [*images.blocks(), text_block(text)], images


def retrieval_wanted(context: TurnContext) -> bool:
    """The ADR's conditional retrieval: the first messages of an idle
    conversation (two messages or fewer, both directions counted) only need
    a follow-up question, so they skip the search."""
    if not context.latest_text:
        return False
    total = len(context.history) + len(context.new_messages)
    return not (context.snapshot.gathering == GatheringState.IDLE and total <= RETRIEVAL_SKIP_MAX_MESSAGES)


def gathering_is_stale(conversation: Conversation) -> bool:
    if conversation.gathering_state not in (GatheringState.GATHERING_DETAILS, GatheringState.AWAITING_PHOTO):
        return False
    last = conversation.last_turn_at or conversation.gathering_started_at
    return last is not None and timezone.now() - last > timedelta(hours=settings.GATHERING_STALE_HOURS)
