"""Recording an inbound WhatsApp message exactly once.

``message_record_inbound`` runs inside the webhook request and must be fast:
one short transaction that upserts the conversation and inserts the message
under its UNIQUE Twilio SID with ``INSERT ... ON CONFLICT DO NOTHING``, so a
repeated delivery (even several at the same moment) stores one row and queues
one processing task. Nothing slow happens here: media are downloaded and the
model is called by Celery tasks queued after commit.

A tenant's STOP or START is applied here, in the same transaction
(``opt_out``): such a message is stored processed, never queued for a turn,
and its confirmation is queued once (a repeated delivery is not stored again).
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache, partial
from typing import Any, cast

from django.conf import settings
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import Field
from django.db.models.signals import post_save
from django.utils import timezone

from config.expiring import Expiring
from config.tasks import INBOUND_PROCESS, MEDIA_DOWNLOAD
from conversations import opt_out
from conversations.message_kinds import REACTION, TEXT, message_parts
from conversations.models import Conversation, Media, Message
from conversations.outbound import outbound_text_queue
from conversations.signals import inbound_stored
from conversations.sweeper import queue_leased
from conversations.twilio_client import media_host_allowed, phone_mask
from properties.models import Organization, Tenant, WhatsAppNumber

logger = logging.getLogger(__name__)

WHATSAPP_PREFIX = "whatsapp:"
# The columns these land in (Message.provider_sid/from_address/to_address, Conversation.phone).
SID_MAX_CHARS = 64
FROM_MAX_CHARS = 64
TO_MAX_CHARS = 64
PHONE_MAX_CHARS = 32
# Twilio sends at most ten media per message.
MAX_MEDIA = 10
# ASCII digits only: ``\d`` would also read other scripts' digits as an index.
MEDIA_KEY = re.compile(r"MediaUrl([0-9]{1,3})")


@dataclass
class InboundResult:
    message: Message | None
    created: bool
    # Text for the immediate TwiML reply (the emergency safety message).
    replies: list[str] = field(default_factory=list)


def payload_clean(params: Mapping[str, str | list[str]]) -> tuple[dict[str, str], dict[str, Any], list[str]]:
    """Strip NUL bytes (PostgreSQL text cannot hold them) and say so. Returns
    the fields (the last value of a repeated key, as Django's ``get`` gives),
    the raw payload to keep (every value of a repeated key), and flags."""
    flags = []
    fields: dict[str, str] = {}
    raw: dict[str, Any] = {}
    for key, value in params.items():
        values = value if isinstance(value, list) else [value]
        if any("\x00" in item for item in [key, *values]):
            flags.append("nul_bytes")
        if any("\ufffd" in item for item in [key, *values]):
            flags.append("undecodable_text")  # bytes that were not UTF-8, replaced when the form was decoded
        key = key.replace("\x00", "")
        values = [item.replace("\x00", "") for item in values]
        if key in raw:
            # Two posted keys that are one once cleaned ("Body" and "Body\0"):
            # keep every value, the later key's last value answers ``get``.
            flags.append("key_collision")
            earlier = raw[key] if isinstance(raw[key], list) else [raw[key]]
            values = [*earlier, *values]
        if len(values) > 1:
            flags.append("repeated_keys")
        fields[key] = values[-1] if values else ""
        raw[key] = values if len(values) > 1 else fields[key]
    return fields, raw, sorted(set(flags))


def sender_problem(sender: str) -> str | None:
    """Why ``From`` cannot start a conversation, or None. A WhatsApp sender
    is ``whatsapp:+<number>``; anything else (an SMS number, another channel,
    a value too long for its column) is stored, flagged and not processed."""
    if not sender.startswith(WHATSAPP_PREFIX):
        return "from_not_whatsapp"
    if not number_strip(sender) or len(sender) > FROM_MAX_CHARS or len(number_strip(sender)) > PHONE_MAX_CHARS:
        return "from_invalid"
    return None


def number_strip(value: str) -> str:
    return value[len(WHATSAPP_PREFIX) :] if value.startswith(WHATSAPP_PREFIX) else value


# Which organization a Messaging Service or number belongs to, per process
# (PROCESS_CACHE_SECONDS; forgotten at once when this process edits one).
routes: Expiring[Organization] = Expiring()


def organization_for_inbound(*, messaging_service_sid: str, to: str) -> Organization | None:
    """By Messaging Service first, then by the number the tenant wrote to.
    Each call gets its own copy: the caller may set attributes on it."""
    organization = None
    if messaging_service_sid:
        organization = routes.get(
            ("service", messaging_service_sid),
            lambda: Organization.objects.filter(messaging_service_sid=messaging_service_sid).first(),
        )
    if organization is None:
        number = number_strip(to)
        organization = routes.get(("number", number), lambda: _organization_of_number(number))
    return copy.copy(organization)


def _organization_of_number(number: str) -> Organization | None:
    found = WhatsAppNumber.objects.select_related("organization").filter(number=number).first()
    return found.organization if found else None


def message_record_inbound(*, params: Mapping[str, str | list[str]], undecodable: bool = False) -> InboundResult:
    """Store one webhook delivery. Returns the message (for a repeated
    delivery, the one stored first), whether this call stored it, and any
    immediate reply text.

    Nothing is lost to bad input: a payload we cannot process (no SID, no
    sender, a sender that is not a WhatsApp number, values too long for their
    columns) is stored flagged ``malformed`` with the whole raw payload.
    ``undecodable`` says the request body itself was not UTF-8."""
    params, raw, flags = payload_clean(params)
    if undecodable:
        flags.append("undecodable_text")
    sid = params.get("MessageSid") or params.get("SmsMessageSid") or ""
    if params.get("SmsMessageSid") and params.get("MessageSid") and params["SmsMessageSid"] != params["MessageSid"]:
        flags.append("sid_conflict")  # MessageSid wins; both stay in raw_payload
    sender = params.get("From", "")
    to = params.get("To", "")
    if not sid or not sender:
        flags.append("malformed")
    elif problem := sender_problem(sender):
        flags += [problem, "malformed"]
    if len(sid) > SID_MAX_CHARS:
        flags += ["sid_too_long", "malformed"]
    if len(to) > TO_MAX_CHARS:
        flags.append("to_too_long")
    body = params.get("Body", "")
    if len(body) > settings.INBOUND_MAX_BODY_CHARS:
        body = body[: settings.INBOUND_MAX_BODY_CHARS]
        flags.append("body_truncated")  # the full text stays in raw_payload
    organization = organization_for_inbound(
        messaging_service_sid=params.get("MessagingServiceSid", ""), to=to[:TO_MAX_CHARS]
    )
    if organization is None:
        flags.append("unrouted")
        logger.warning("inbound %s to %s matches no organization; stored as unrouted", sid[:SID_MAX_CHARS], to[:40])
    media_urls, media_flags = media_urls_present(params)
    parts = message_parts(params)
    flags = list(dict.fromkeys(flags + media_flags + list(parts.flags)))
    profile = {"profile_name": params.get("ProfileName", "")[:200], "wa_id": params.get("WaId", "")[:32]}

    received_at = timezone.now()
    with transaction.atomic():
        conversation: Conversation | None = None
        profile_changed: dict[str, str] = {}
        if organization is not None and "malformed" not in flags:
            conversation, profile_changed = _conversation_upsert(organization, sender, profile, received_at)
        keyword = opt_out.keyword_read(body) if parts.kind == TEXT and conversation is not None else None
        consumed = conversation is not None and opt_out.keyword_consumes(keyword=keyword, conversation=conversation)
        message = Message(
            organization=organization,
            conversation=conversation,
            direction=Message.Direction.INBOUND,
            author=Message.Author.TENANT,
            body=body,
            kind=parts.kind,
            latitude=parts.latitude,
            longitude=parts.longitude,
            location_name=parts.location_name,
            button_payload=parts.button_payload,
            button_text=parts.button_text,
            # Cut to the column: a repeat of the same over-long SID still finds this row.
            provider_sid=sid[:SID_MAX_CHARS] or None,
            from_address=sender[:FROM_MAX_CHARS],
            to_address=to[:TO_MAX_CHARS],
            status=Message.Status.PROCESSED if consumed else Message.Status.RECEIVED,
            processed_at=received_at if consumed else None,  # STOP / START: no turn
            flags=flags,
            raw_payload=raw,
            # Processing is queued on commit: the sweeper's lease starts now.
            queued_at=received_at if conversation is not None and not consumed else None,
        )
        stored = _insert_once(message, at=received_at)
        if not stored:  # a repeated delivery changes nothing: not the conversation's last inbound time either
            transaction.set_rollback(True)
        else:
            media = _media_record(message, media_urls, params)
            if conversation is not None:
                if profile_changed and conversation.tenant_id is not None:
                    _tenant_profile_update(conversation.tenant_id, profile_changed)
                if consumed:
                    _opt_out_apply(conversation, message, keyword)
                else:
                    if conversation.opted_out_at is not None and message.kind != REACTION:
                        opt_out.conversation_opt_in(conversation=conversation)  # they wrote again: messages back on
                    transaction.on_commit(lambda: queue_leased(INBOUND_PROCESS, [message.pk], Message, [message.pk]))
            for item in media:
                if item.download_state == Media.DownloadState.PENDING:
                    transaction.on_commit(partial(queue_leased, MEDIA_DOWNLOAD, [item.pk], Media, [item.pk]))
    if not stored:
        logger.info("repeated delivery of %s", sid[:SID_MAX_CHARS])
        return _repeat(provider_sid=message.provider_sid)

    logger.info(
        "inbound %s from %s stored (org %s, %d media, flags %s)",
        sid[:SID_MAX_CHARS],
        phone_mask(sender[:FROM_MAX_CHARS]),
        organization.slug if organization else "-",
        len(media),
        flags,
    )
    return InboundResult(message=message, created=True, replies=_immediate_replies(message, repeat=False))


def _conversation_upsert(
    organization: Organization, sender: str, profile: dict[str, str], at: datetime
) -> tuple[Conversation, dict[str, str]]:
    """The sender's conversation, created if new, with its last inbound time
    and the sender's WhatsApp profile (a value that is sent and differs)
    written: one ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``, where
    ``get_or_create`` and an update took two or three statements. Returns
    the row and the profile values that changed."""
    draft = Conversation(
        organization=organization, phone=number_strip(sender), whatsapp_id=sender, last_inbound_at=at, **profile
    )
    fields, sql = _conversation_upsert_sql(tuple(profile))
    values = [f.get_db_prep_save(f.pre_save(draft, add=True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [organization.pk, draft.phone, *values])
        row = cursor.fetchone()
    names = ["id", *(f.attname for f in fields)]
    conversation = Conversation.from_db(connection.alias, names, row[: len(names)])
    conversation.organization = organization  # already loaded: spares the receivers a query
    if row[len(names)]:  # created: what get_or_create's save() told its receivers (the audit log's entry)
        post_save.send(
            sender=Conversation,
            instance=conversation,
            created=True,
            update_fields=None,
            raw=False,
            using=connection.alias,
        )
    before = dict(zip(profile, row[len(names) + 1 :], strict=True))
    changed = {k: v for k, v in profile.items() if v and before[k] is not None and before[k] != v}
    return conversation, changed


@cache
def _conversation_upsert_sql(profile_keys: tuple[str, ...]) -> tuple[list[Field[Any, Any]], str]:
    """The upsert's columns and statement, built once per process (they depend
    only on the model and on which profile values are sent)."""
    fields = [f for f in Conversation._meta.concrete_fields if not f.primary_key]
    q = connection.ops.quote_name
    table = q(Conversation._meta.db_table)
    columns = ", ".join(q(cast(str, f.column)) for f in fields)  # concrete: a column each
    # A profile value that was sent replaces the stored one; the stored ones come back too (``earlier``).
    profile_set = ", ".join(f"{q(k)} = COALESCE(NULLIF(EXCLUDED.{q(k)}, ''), {table}.{q(k)})" for k in profile_keys)
    profile_before = ", ".join(f"(SELECT {q(k)} FROM earlier)" for k in profile_keys)  # noqa: S608
    # Table and column names come from the model; every value is bound.
    sql = (
        f"WITH earlier AS (SELECT {', '.join(q(k) for k in profile_keys)} FROM {table} "  # noqa: S608
        "WHERE organization_id = %s AND phone = %s AND retired_at IS NULL) "
        f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))}) "
        # The number's live conversation (the partial unique index): a retired one keeps its history apart.
        "ON CONFLICT (organization_id, phone) WHERE retired_at IS NULL DO UPDATE SET "
        f"last_inbound_at = GREATEST({table}.last_inbound_at, EXCLUDED.last_inbound_at), "
        # xmax = 0: this statement inserted the row (a conflict updated it).
        f"{profile_set} RETURNING id, {columns}, (xmax = 0), {profile_before}"
    )
    return fields, sql


def _tenant_profile_update(tenant_id: int, changed: dict[str, str]) -> None:
    """The sender's new WhatsApp profile on the tenant too, once we know who they are."""
    names = {"profile_name": "whatsapp_profile_name", "wa_id": "wa_id"}
    Tenant.objects.filter(pk=tenant_id).update(**{names[k]: v for k, v in changed.items()})


def _opt_out_apply(conversation: Conversation, message: Message, keyword: opt_out.Keyword | None) -> None:
    """STOP (or START while opted out): change the state and queue the one
    confirmation; a STOP while already opted out changes and sends nothing."""
    assert keyword is not None
    if keyword.kind == opt_out.OPT_OUT:
        changed = opt_out.conversation_opt_out(conversation=conversation, at=message.created_at)
        purpose = opt_out.OPT_OUT_CONFIRM_PURPOSE
    else:
        changed = opt_out.conversation_opt_in(conversation=conversation)
        purpose = opt_out.OPT_IN_CONFIRM_PURPOSE
    logger.info("conversation %s: %s (%s)", conversation.pk, keyword.kind, "changed" if changed else "no change")
    if changed:
        text = opt_out.confirmation_text(keyword=keyword, conversation=conversation)
        outbound_text_queue(conversation=conversation, body=text, author=Message.Author.SYSTEM, purpose=purpose)


def _repeat(*, provider_sid: str | None) -> InboundResult:
    """Twilio delivers again when it did not get our answer: give the same
    immediate reply (the safety message) again. Receivers are told it is a
    repeat; the emergency receiver does not record a second alert."""
    message = Message.objects.filter(provider_sid=provider_sid).first() if provider_sid else None
    replies = _immediate_replies(message, repeat=True) if message is not None else []
    return InboundResult(message=message, created=False, replies=replies)


def _immediate_replies(message: Message, *, repeat: bool) -> list[str]:
    """Ask the ``inbound_stored`` receivers for TwiML text. Runs after commit:
    a failing receiver can never lose the stored message."""
    replies: list[str] = []
    if message.conversation_id is None:
        return replies
    for receiver, reply in inbound_stored.send_robust(sender=Message, message=message, repeat=repeat):
        if isinstance(reply, Exception):
            logger.error("inbound_stored receiver %s failed: %r", receiver, reply, exc_info=reply)
        elif reply:
            replies.append(str(reply))
    return replies


def media_urls_present(params: Mapping[str, str]) -> tuple[list[tuple[int, str]], list[str]]:
    """(index, url) for every ``MediaUrlN`` actually posted, in order, whatever
    ``NumMedia`` says; flags when the two disagree or there are too many.

    Keys that name one index twice (``MediaUrl0`` and ``MediaUrl00``) keep
    one URL for that index, the canonical spelling first, and are flagged
    ``duplicate_media_index``: the other URLs stay in raw_payload."""
    by_index: dict[int, tuple[bool, str]] = {}
    flags = []
    for key, url in params.items():
        if not (match := MEDIA_KEY.fullmatch(key)) or not url:
            continue
        index = int(match.group(1))
        canonical = match.group(1) == str(index)
        if index in by_index:
            flags.append("duplicate_media_index")
            if by_index[index][0] or not canonical:
                continue
        by_index[index] = (canonical, url)
    found = sorted((index, url) for index, (_, url) in by_index.items())
    declared = params.get("NumMedia", "")
    if declared.strip() != str(len(found)) and not (declared == "" and not found):
        flags.append("num_media_mismatch")
    if len(found) > MAX_MEDIA:
        flags.append("media_ignored")  # beyond Twilio's ten; the URLs stay in raw_payload
    return found[:MAX_MEDIA], list(dict.fromkeys(flags))


def _insert_once(message: Message, *, at: datetime) -> bool:
    """INSERT ... ON CONFLICT (provider_sid) DO NOTHING RETURNING id; sets the
    primary key and returns True when this call stored the row. ``at`` is
    the time of receipt, also the conversation's ``last_inbound_at``."""
    fields, sql = _message_insert_sql()
    values = [f.get_db_prep_save(f.pre_save(message, add=True), connection) for f in fields]
    message.created_at = at  # auto_now_add set it a moment later
    values[fields.index(Message._meta.get_field("created_at"))] = at
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        row = cursor.fetchone()
    if row is None:
        return False
    message.pk = row[0]
    message._state.adding = False
    return True


@cache
def _message_insert_sql() -> tuple[list[Field[Any, Any]], str]:
    """The insert's columns and statement, built once per process."""
    fields = [f for f in Message._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(connection.ops.quote_name(cast(str, f.column)) for f in fields)  # concrete: a column each
    placeholders = ", ".join(["%s"] * len(fields))
    # Table and column names come from the model; every value is bound.
    sql = f"INSERT INTO {Message._meta.db_table} ({columns}) VALUES ({placeholders}) ON CONFLICT (provider_sid) DO NOTHING RETURNING id"  # noqa: S608, E501
    return fields, sql


def _media_record(message: Message, urls: list[tuple[int, str]], params: Mapping[str, str]) -> list[Media]:
    if not urls:
        return []
    media = []
    for index, url in urls:
        # Nobody looks at the photos of an unrouted or malformed message: never fetch them.
        if message.conversation_id is None:
            allowed, error = False, "the message is unrouted or malformed: its media are not downloaded"
        else:
            allowed = media_host_allowed(url)
            error = "" if allowed else "media URL is not on an allowed Twilio host"
        media.append(
            Media(
                message=message,
                index=index,
                provider_url=url[:500],
                content_type=params.get(f"MediaContentType{index}", "")[:100],
                queued_at=timezone.now() if allowed else None,  # its download is queued on commit
                download_state=Media.DownloadState.PENDING if allowed else Media.DownloadState.REJECTED,
                error=error,
            )
        )
    try:
        with transaction.atomic():  # a savepoint: a media row we cannot store never loses the message
            return Media.objects.bulk_create(media)
    except (IntegrityError, DataError):
        logger.exception("media of inbound %s could not be recorded; the message is kept, flagged", message.pk)
        message.flags = [*message.flags, "media_unrecorded"]  # the URLs stay in raw_payload
        Message.objects.filter(pk=message.pk).update(flags=message.flags)
        return []
