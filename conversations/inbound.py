"""Recording an inbound WhatsApp message exactly once.

``message_record_inbound`` runs inside the webhook request and must be fast:
one short transaction that upserts the conversation and inserts the message
under its UNIQUE Twilio SID with ``INSERT ... ON CONFLICT DO NOTHING``, so a
repeated delivery (even several at the same moment) stores one row and queues
one processing task. Nothing slow happens here: media are downloaded and the
model is called by Celery tasks queued after commit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction

from conversations.models import Conversation, Media, Message
from conversations.signals import inbound_stored
from conversations.tasks_queue import queue_task
from conversations.twilio_client import media_host_allowed, phone_mask
from properties.models import Organization, WhatsAppNumber

logger = logging.getLogger(__name__)

WHATSAPP_PREFIX = "whatsapp:"


@dataclass
class InboundResult:
    message: Message | None
    created: bool
    # Text for the immediate TwiML reply (the emergency safety message).
    replies: list[str] = field(default_factory=list)


def payload_clean(params: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Strip NUL bytes (PostgreSQL text cannot hold them) and say so."""
    flags = []
    cleaned = {}
    for key, value in params.items():
        if "\x00" in key or "\x00" in value:
            flags.append("nul_bytes")
        cleaned[key.replace("\x00", "")] = value.replace("\x00", "")
    return cleaned, sorted(set(flags))


def number_strip(value: str) -> str:
    return value[len(WHATSAPP_PREFIX) :] if value.startswith(WHATSAPP_PREFIX) else value


def organization_for_inbound(*, messaging_service_sid: str, to: str) -> Organization | None:
    """By Messaging Service first, then by the number the tenant wrote to."""
    if messaging_service_sid:
        organization = Organization.objects.filter(messaging_service_sid=messaging_service_sid).first()
        if organization:
            return organization
    number = WhatsAppNumber.objects.select_related("organization").filter(number=number_strip(to)).first()
    return number.organization if number else None


def message_record_inbound(*, params: dict[str, str]) -> InboundResult:
    """Store one webhook delivery. Returns the message (None only when it was
    a repeat), whether it was new, and any immediate reply text."""
    params, flags = payload_clean(params)
    sid = params.get("MessageSid") or params.get("SmsMessageSid") or ""
    sender = params.get("From", "")
    if not sid or not sender:
        flags.append("malformed")
    body = params.get("Body", "")
    if len(body) > settings.INBOUND_MAX_BODY_CHARS:
        body = body[: settings.INBOUND_MAX_BODY_CHARS]
        flags.append("body_truncated")  # the full text stays in raw_payload
    organization = organization_for_inbound(
        messaging_service_sid=params.get("MessagingServiceSid", ""), to=params.get("To", "")
    )
    if organization is None:
        flags.append("unrouted")
        logger.warning("inbound %s to %s matches no organization; stored as unrouted", sid, params.get("To"))

    with transaction.atomic():
        conversation = None
        if organization is not None and "malformed" not in flags:
            conversation, _ = Conversation.objects.get_or_create(
                organization=organization, phone=number_strip(sender), defaults={"whatsapp_id": sender}
            )
            conversation.organization = organization  # already loaded: spares the receivers a query
        message = Message(
            organization=organization,
            conversation=conversation,
            direction=Message.Direction.INBOUND,
            author=Message.Author.TENANT,
            body=body,
            provider_sid=sid or None,
            from_address=sender,
            to_address=params.get("To", ""),
            status=Message.Status.RECEIVED,
            flags=flags,
            raw_payload=params,
        )
        if not _insert_once(message):
            logger.info("repeated delivery of %s ignored", sid)
            return InboundResult(message=None, created=False)
        media = _media_record(message, params)
        if conversation is not None:
            Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=message.created_at)
            transaction.on_commit(lambda: queue_task("inbound.process", [message.pk]))
        for item in media:
            if item.download_state == Media.DownloadState.PENDING:
                transaction.on_commit(lambda pk=item.pk: queue_task("media.download", [pk]))

    logger.info(
        "inbound %s from %s stored (org %s, %d media, flags %s)",
        sid,
        phone_mask(sender),
        organization.slug if organization else "-",
        len(media),
        flags,
    )
    replies = []
    if conversation is not None:
        # After commit: a failing receiver can never lose the stored message.
        for receiver, reply in inbound_stored.send_robust(sender=Message, message=message):
            if isinstance(reply, Exception):
                logger.error("inbound_stored receiver %s failed: %r", receiver, reply, exc_info=reply)
            elif reply:
                replies.append(str(reply))
    return InboundResult(message=message, created=True, replies=replies)


def _insert_once(message: Message) -> bool:
    """INSERT ... ON CONFLICT (provider_sid) DO NOTHING RETURNING id; sets the
    primary key and returns True when this call stored the row."""
    fields = [f for f in Message._meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(message, add=True), connection) for f in fields]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    # Table and column names come from the model; every value is bound.
    sql = f"INSERT INTO {Message._meta.db_table} ({columns}) VALUES ({placeholders}) ON CONFLICT (provider_sid) DO NOTHING RETURNING id"  # noqa: S608, E501
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        row = cursor.fetchone()
    if row is None:
        return False
    message.pk = row[0]
    message._state.adding = False
    return True


def _media_record(message: Message, params: dict[str, str]) -> list[Media]:
    try:
        count = int(params.get("NumMedia") or 0)
    except ValueError:
        count = 0
    media = []
    for index in range(min(count, 10)):
        url = params.get(f"MediaUrl{index}", "")
        if not url:
            continue
        allowed = media_host_allowed(url)
        media.append(
            Media(
                message=message,
                index=index,
                provider_url=url[:500],
                content_type=params.get(f"MediaContentType{index}", "")[:100],
                download_state=Media.DownloadState.PENDING if allowed else Media.DownloadState.REJECTED,
                error="" if allowed else "media URL is not on an allowed Twilio host",
            )
        )
    return Media.objects.bulk_create(media)
