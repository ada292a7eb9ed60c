"""Sending stored outbound messages and tracking their delivery.

Outside WhatsApp's 24-hour customer-service window only an approved template
may go out: ``WHATSAPP_TEMPLATES`` maps a message's purpose (or ``generic``)
to a Content SID whose single variable carries the text. With no template the
message fails with that reason, recorded for the landlord to see.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import requests.exceptions
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.senders import OutgoingMessage, SendError, sender
from conversations.twilio_client import phone_mask

logger = logging.getLogger(__name__)

# Twilio reports statuses out of order; a status never moves a message back.
STATUS_RANK = {
    Message.Status.PENDING: 0,
    Message.Status.QUEUED: 1,
    Message.Status.SENDING: 2,
    Message.Status.SENT: 3,
    Message.Status.FAILED: 4,
    Message.Status.UNDELIVERED: 4,
    Message.Status.DELIVERED: 5,
    Message.Status.READ: 6,
}
TWILIO_STATUS = {"accepted": "queued", "scheduled": "queued", "receiving": "sending", "received": "delivered"}


class SendRetry(Exception):
    """Transient failure: the task should try again later."""


def session_window_open(conversation: Conversation | None, *, now=None) -> bool | None:
    """True inside the 24-hour window, False outside, None when unknown (a
    bare number such as a landlord's emergency contact)."""
    if conversation is None:
        return None
    if conversation.last_inbound_at is None:
        return False
    now = now or timezone.now()
    return now - conversation.last_inbound_at < timedelta(hours=settings.WHATSAPP_SESSION_WINDOW_HOURS)


def template_for(purpose: str) -> str:
    return settings.WHATSAPP_TEMPLATES.get(purpose) or settings.WHATSAPP_TEMPLATES.get("generic", "")


def sender_address(message: Message) -> tuple[str, str]:
    """(from number, Messaging Service SID) for an outbound message: the
    organization's Messaging Service, else the number the tenant wrote to,
    else the organization's first number, else WHATSAPP_DEFAULT_FROM."""
    organization = message.organization
    if organization and organization.messaging_service_sid:
        return "", organization.messaging_service_sid
    if message.conversation_id:
        last_to = (
            Message.objects.filter(conversation_id=message.conversation_id, direction=Message.Direction.INBOUND)
            .order_by("-created_at")
            .values_list("to_address", flat=True)
            .first()
        )
        if last_to:
            return last_to, ""
    number = organization.whatsapp_numbers.values_list("number", flat=True).first() if organization else None
    if number:
        return f"whatsapp:{number}", ""
    return settings.WHATSAPP_DEFAULT_FROM, ""


def message_send(*, message_id: int) -> Message | None:
    """Send one pending outbound message. Claims it first (pending -> sending)
    so two workers never send it twice. Raises ``SendRetry`` on a transient
    failure (the message is pending again); records a permanent one."""
    claimed = Message.objects.filter(
        pk=message_id, direction=Message.Direction.OUTBOUND, status=Message.Status.PENDING
    ).update(status=Message.Status.SENDING, send_attempts=F("send_attempts") + 1, status_updated_at=timezone.now())
    if not claimed:
        return None
    message = Message.objects.select_related("organization", "conversation").get(pk=message_id)
    purpose = (message.raw_payload or {}).get("purpose", "generic")
    from_, service_sid = sender_address(message)
    outgoing = OutgoingMessage(to=message.to_address, from_=from_, messaging_service_sid=service_sid, body=message.body)
    window = session_window_open(message.conversation)
    if window is not True:
        template = template_for(purpose)
        if template:
            outgoing.template_sid = template
            outgoing.template_variables = {"1": message.body}
        elif window is False:
            return _record_failure(
                message,
                code="window_closed",
                reason=f"outside WhatsApp's 24-hour window and no approved template for {purpose!r} "
                "(set WHATSAPP_TEMPLATES)",
            )
    try:
        receipt = sender().send(outgoing)
    except (SendError, requests.exceptions.RequestException) as exc:
        transient = getattr(exc, "transient", True)
        if transient:
            Message.objects.filter(pk=message.pk).update(
                status=Message.Status.PENDING, error_message=str(exc)[:1000], status_updated_at=timezone.now()
            )
            logger.warning(
                "sending message %s to %s failed, will retry: %s", message.pk, phone_mask(message.to_address), exc
            )
            raise SendRetry(str(exc)) from exc
        return _record_failure(message, code=getattr(exc, "code", ""), reason=str(exc))
    message.provider_sid = receipt.provider_sid
    message.from_address = from_ or service_sid
    message.template_sid = outgoing.template_sid
    message.template_variables = outgoing.template_variables or {}
    message.status = TWILIO_STATUS.get(receipt.status, receipt.status)
    if message.status not in STATUS_RANK:
        message.status = Message.Status.QUEUED
    message.sent_at = message.status_updated_at = timezone.now()
    message.error_message = ""
    message.save(
        update_fields=[
            "provider_sid",
            "from_address",
            "template_sid",
            "template_variables",
            "status",
            "sent_at",
            "status_updated_at",
            "error_message",
        ]
    )
    return message


def _record_failure(message: Message, *, code: str, reason: str) -> Message:
    message.status = Message.Status.FAILED
    message.error_code = (code or "")[:16]
    message.error_message = reason[:1000]
    message.status_updated_at = timezone.now()
    message.save(update_fields=["status", "error_code", "error_message", "status_updated_at"])
    logger.error("message %s to %s failed permanently: %s", message.pk, phone_mask(message.to_address), reason)
    return message


def message_status_update(*, provider_sid: str, status: str, error_code: str = "", error_message: str = "") -> bool:
    """Apply a Twilio status callback. Returns False when it changed nothing
    (unknown message, unknown status, or a status older than the one stored)."""
    status = TWILIO_STATUS.get(status, status)
    if status not in STATUS_RANK:
        logger.warning("ignoring unknown Twilio status %r for %s", status, provider_sid)
        return False
    lower = [s for s, rank in STATUS_RANK.items() if rank < STATUS_RANK[status]]
    updates = {"status": status, "status_updated_at": timezone.now()}
    if error_code or error_message:
        updates.update(error_code=error_code[:16], error_message=error_message[:1000])
    return bool(
        Message.objects.filter(
            provider_sid=provider_sid, direction=Message.Direction.OUTBOUND, status__in=lower
        ).update(**updates)
    )
