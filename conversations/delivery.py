"""Sending stored outbound messages and tracking their delivery.

Outside WhatsApp's 24-hour customer-service window only an approved template
may go out: ``WHATSAPP_TEMPLATES`` maps a message's purpose (or ``generic``)
to a Content SID whose single variable carries the text. With no template the
message fails with that reason, recorded for the landlord to see. When Twilio
refuses free text with 63016 (outside the window), in its answer to the send
or later in a status callback, the message goes out once more as its template;
the refused attempt stays in ``raw_payload["attempts"]``.

A question with tap-to-answer choices (``outbound.outbound_choice_queue``:
``raw_payload["choices"]`` and ``["content_variables"]``) goes out as the
Content quick-reply template configured for its purpose
(``WHATSAPP_TEMPLATES["property_confirm"]``, or ``"property_confirm.pl"``
for a Polish tenant first), with its own variables; with none configured it
goes out as its stored body, numbered text ("Reply 1 for Yes, 2 for No").
Outside the window the purpose's own template goes out if there is one (it
must then be approved by WhatsApp), else ``generic`` with the numbered text.

A message the tenant opted out of after it was queued (STOP,
``conversations.opt_out``) is not sent: it fails with ``opted_out``.

Status callbacks find the message by our own id in the callback URL, so one
that arrives before Twilio's answer to the send is not lost, and statuses
only move forward.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import requests.exceptions
from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Field, JSONField, Q, Value, When
from django.utils import timezone

from config.tasks import OUTBOUND_SEND
from conversations.models import Conversation, Message
from conversations.number_change import RETIRED_CODE, retired_refusal
from conversations.opt_out import OPTED_OUT_CODE, SAFETY_PURPOSE, opt_out_refusal
from conversations.senders import OutgoingMessage, SendError, sender
from conversations.sweeper import queue_leased
from conversations.twilio_client import phone_mask

logger = logging.getLogger(__name__)

# Twilio reports statuses out of order; a status never moves a message back.
# "sending" is our worker's claim, before Twilio has answered; "queued" is any
# word from Twilio that it holds the message (queued, accepted, sending), so a
# callback that beats a send whose answer was lost moves the claim on, and the
# sweeper never sends a message Twilio has again.
STATUS_RANK: dict[str, int] = {
    Message.Status.PENDING: 0,
    Message.Status.SENDING: 1,
    Message.Status.QUEUED: 2,
    Message.Status.SENT: 3,
    Message.Status.FAILED: 4,
    Message.Status.UNDELIVERED: 4,
    Message.Status.DELIVERED: 5,
    Message.Status.READ: 6,
}
# Twilio's "outside the allowed window" error, and our flag for a message that got it.
TWILIO_WINDOW_CLOSED_CODE = "63016"
WINDOW_CLOSED = "window_closed"
FAILED_STATUSES = {Message.Status.FAILED, Message.Status.UNDELIVERED}
# Message.provider_sid's column.
PROVIDER_SID_MAX_CHARS = 64
TWILIO_STATUS = {
    "accepted": "queued",
    "scheduled": "queued",
    "sending": "queued",
    "receiving": "queued",
    "received": "delivered",
}


class SendRetry(Exception):
    """Transient failure: the task should try again later."""


def session_window_open(conversation: Conversation | None, *, now: datetime | None = None) -> bool | None:
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


def choice_template_for(purpose: str, language: str = "") -> str:
    """The Content SID of a quick-reply template for ``purpose`` in
    ``language`` (key ``purpose.language``), else for ``purpose``; "" when
    none is configured (the question then goes out as numbered text)."""
    templates = settings.WHATSAPP_TEMPLATES
    return (language and templates.get(f"{purpose}.{language}")) or templates.get(purpose, "")


def _message_template(message: Message) -> tuple[str, dict[str, Any]]:
    """The template a message goes out as when free text may not (outside the
    window): a choice's own quick-reply template with its variables, else the
    purpose's (or ``generic``) template with the text as its one variable.
    ("", {}) when there is none."""
    payload = message.raw_payload or {}
    purpose = payload.get("purpose", "generic")
    if payload.get("choices"):
        own = choice_template_for(purpose, payload.get("language", ""))
        if own:
            return own, dict(payload.get("content_variables") or {})
        generic = settings.WHATSAPP_TEMPLATES.get("generic", "")
        return (generic, {"1": message.body}) if generic else ("", {})
    template = template_for(purpose)
    return (template, {"1": message.body}) if template else ("", {})


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
            .order_by("-id")
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
    failure (the message is pending again); records a permanent one.

    Free text that Twilio refuses with 63016 (outside the 24-hour window,
    whatever we believed about the window) is sent once more as the approved
    template for its purpose; the refused attempt is kept in
    ``raw_payload["attempts"]`` and the message is flagged."""
    claimed = Message.objects.filter(
        pk=message_id, direction=Message.Direction.OUTBOUND, status=Message.Status.PENDING
    ).update(status=Message.Status.SENDING, send_attempts=F("send_attempts") + 1, status_updated_at=timezone.now())
    if not claimed:
        return None
    message = Message.objects.select_related("organization", "conversation").get(pk=message_id)
    payload = message.raw_payload or {}
    purpose = payload.get("purpose", "generic")
    # Queued before its conversation was retired (conversations.number_change) or the tenant's STOP
    # (conversations.opt_out): not sent now.
    if refusal := retired_refusal(purpose=purpose, conversation=message.conversation):
        return _record_failure(message, code=RETIRED_CODE, reason=refusal, level=logging.INFO)
    if refusal := opt_out_refusal(
        purpose=purpose, conversation=message.conversation, organization=message.organization, to=message.to_address
    ):
        return _record_failure(message, code=OPTED_OUT_CODE, reason=refusal, level=logging.INFO)
    template, variables = _message_template(message)
    from_, service_sid = sender_address(message)
    outgoing = OutgoingMessage(
        to=message.to_address, from_=from_, messaging_service_sid=service_sid, body=message.body, message_id=message.pk
    )
    # Outside the window (or after Twilio told us so on an earlier try) only a
    # template may go out. An unknown window (a bare number such as the
    # landlord's emergency contact) tries free text and falls back on 63016.
    if session_window_open(message.conversation) is False or WINDOW_CLOSED in message.flags:
        if not template:
            return _record_failure(message, code="window_closed", reason=_no_template_reason(purpose))
        _template_use(outgoing, template, variables)
    elif payload.get("choices") and (quick_reply := choice_template_for(purpose, payload.get("language", ""))):
        # Inside the window: the quick-reply buttons (no WhatsApp approval needed in session).
        _template_use(outgoing, quick_reply, dict(payload.get("content_variables") or {}))
    try:
        receipt = sender().send(outgoing)
    except (SendError, requests.exceptions.RequestException) as exc:
        if getattr(exc, "code", "") != TWILIO_WINDOW_CLOSED_CODE or outgoing.template_sid:
            return _send_failed(message, exc)
        _attempt_record(message, kind="text", error_code=TWILIO_WINDOW_CLOSED_CODE, error=str(exc))
        if not template:
            return _record_failure(
                message, code=TWILIO_WINDOW_CLOSED_CODE, reason=f"{exc}; {_no_template_reason(purpose)}"
            )
        _template_use(outgoing, template, variables)
        Message.objects.filter(pk=message.pk).update(send_attempts=F("send_attempts") + 1)
        logger.info("message %s: Twilio answered 63016, sending template %s instead", message.pk, template)
        try:
            receipt = sender().send(outgoing)
        except (SendError, requests.exceptions.RequestException) as retry_exc:
            return _send_failed(message, retry_exc)
    status = TWILIO_STATUS.get(receipt.status, receipt.status)
    if status not in STATUS_RANK:
        status = Message.Status.QUEUED
    now = timezone.now()
    # A status callback may have arrived before Twilio answered the send (it
    # found the message by the id in its URL): only a message still in our
    # own "sending" claim takes the status from the answer.
    Message.objects.filter(pk=message.pk).update(
        provider_sid=receipt.provider_sid,
        from_address=from_ or service_sid,
        template_sid=outgoing.template_sid,
        # Not over what an erasure wrote while Twilio had it: its words are gone, so are these.
        template_variables=Case(
            When(body=message.body, then=Value(outgoing.template_variables or {}, output_field=JSONField())),
            default=F("template_variables"),
            output_field=JSONField(),
        ),
        sent_at=now,
        status=_if_still_sending("status", status),
        status_updated_at=_if_still_sending("status_updated_at", now),
        error_code=_if_still_sending("error_code", ""),
        error_message=_if_still_sending("error_message", ""),
    )
    message.refresh_from_db()
    return message


def _if_still_sending(field: str, value: object) -> Case:
    """``value`` for a message still in our "sending" claim, else what is stored."""
    output_field = Message._meta.get_field(field)
    assert isinstance(output_field, Field)  # a column of Message, not a relation
    return Case(
        When(status=Message.Status.SENDING, then=Value(value)),
        default=F(field),
        output_field=output_field,
    )


def _no_template_reason(purpose: str) -> str:
    return f"outside WhatsApp's 24-hour window and no approved template for {purpose!r} (set WHATSAPP_TEMPLATES)"


def _template_use(outgoing: OutgoingMessage, template: str, variables: dict[str, Any]) -> None:
    """Send as ``template``. WhatsApp refuses a template whose variable holds a
    line break, a tab or more than four spaces in a row: each value goes on one line."""
    outgoing.template_sid = template
    outgoing.template_variables = {key: " ".join(str(value).split()) for key, value in variables.items()}


def _attempt_record(message: Message, *, kind: str, error_code: str, error: str, provider_sid: str = "") -> None:
    """Keep a refused attempt on the message, and flag that the window is closed."""
    payload = dict(message.raw_payload or {})
    attempt = {"at": timezone.now().isoformat(), "kind": kind, "error_code": error_code, "error": error[:500]}
    if provider_sid:
        attempt["provider_sid"] = provider_sid
    payload["attempts"] = [*payload.get("attempts", []), attempt]
    message.raw_payload = payload
    if WINDOW_CLOSED not in message.flags:
        message.flags = [*message.flags, WINDOW_CLOSED]
    # Only over the message as it was read: an erasure meanwhile emptied its payload.
    Message.objects.filter(pk=message.pk, body=message.body).update(raw_payload=payload, flags=message.flags)


def _send_failed(message: Message, exc: Exception) -> Message:
    """Transient: pending again and ``SendRetry``. Permanent: recorded. Unknown
    (Twilio got the request and did not answer in time): left ``sending``. Its
    status callback, found by the id in its URL, moves it on if it went; if
    none comes, the sweeper sends it again after ``OUTBOUND_SWEEP_GRACE_SECONDS``
    (at least once), instead of a retry now that could deliver it twice. A
    safety text is retried at once all the same after its first try: a second
    copy costs less than minutes without it (not after every try: a Twilio slow
    but accepting would deliver one copy per timeout)."""
    first_safety_try = (message.raw_payload or {}).get("purpose") == SAFETY_PURPOSE and message.send_attempts <= 1
    if getattr(exc, "outcome_unknown", False) and not first_safety_try:
        Message.objects.filter(pk=message.pk, status=Message.Status.SENDING).update(
            error_message=str(exc)[:1000], status_updated_at=timezone.now()
        )
        logger.warning("sending message %s: no answer from Twilio, outcome unknown; waiting for its status", message.pk)
        return message
    if getattr(exc, "transient", True):
        # Only while still ours: an erasure may have stopped it meanwhile (failed, never to be sent).
        Message.objects.filter(pk=message.pk, status=Message.Status.SENDING).update(
            status=Message.Status.PENDING, error_message=str(exc)[:1000], status_updated_at=timezone.now()
        )
        logger.warning(
            "sending message %s to %s failed, will retry: %s", message.pk, phone_mask(message.to_address), exc
        )
        raise SendRetry(str(exc)) from exc
    return _record_failure(message, code=getattr(exc, "code", ""), reason=str(exc))


def _record_failure(message: Message, *, code: str, reason: str, level: int = logging.ERROR) -> Message:
    message.status = Message.Status.FAILED
    message.error_code = (code or "")[:16]
    message.error_message = reason[:1000]
    message.status_updated_at = timezone.now()
    message.save(update_fields=["status", "error_code", "error_message", "status_updated_at"])
    logger.log(level, "message %s to %s failed permanently: %s", message.pk, phone_mask(message.to_address), reason)
    return message


def message_status_update(
    *,
    status: str,
    provider_sid: str = "",
    message_id: int | None = None,
    error_code: str = "",
    error_message: str = "",
) -> bool:
    """Apply a Twilio status callback to the message it names: by our own id
    (the ``mid`` in the callback URL) when given, else by Twilio's SID.
    Statuses only move forward, so a late ``sent`` never overwrites
    ``delivered``. Returns False when it changed nothing (unknown message,
    unknown status, a status older than the one stored, or a callback for an
    earlier SID of a message that has since been sent again).

    Input is cleaned as the inbound webhook's is: NUL bytes removed, the
    error cut to its columns; a SID longer than the column names no message."""
    status, provider_sid, error_code, error_message = (
        text.replace("\x00", "") for text in (status, provider_sid, error_code, error_message)
    )
    if len(provider_sid) > PROVIDER_SID_MAX_CHARS:
        logger.warning("ignoring a status for a %d-character SID", len(provider_sid))
        return False
    status = TWILIO_STATUS.get(status, status)
    if status not in STATUS_RANK:
        logger.warning("ignoring unknown Twilio status %r for %s", status[:40], provider_sid or message_id)
        return False
    lower = [s for s, rank in STATUS_RANK.items() if rank < STATUS_RANK[status]]
    messages = Message.objects.filter(direction=Message.Direction.OUTBOUND, status__in=lower)
    updates: dict[str, Any] = {"status": status, "status_updated_at": timezone.now()}
    if message_id is not None:
        messages = messages.filter(pk=message_id)
        if provider_sid:
            # Before Twilio's answer to the send is saved the SID is still empty.
            messages = messages.filter(Q(provider_sid=provider_sid) | Q(provider_sid__isnull=True))
            updates["provider_sid"] = Value(provider_sid)
    elif provider_sid:
        messages = messages.filter(provider_sid=provider_sid)
    else:
        return False
    if provider_sid:
        # A late callback for an attempt we already replaced by the template.
        messages = messages.exclude(raw_payload__contains={"attempts": [{"provider_sid": provider_sid}]})
    if error_code or error_message:
        updates.update(error_code=error_code[:16], error_message=error_message[:1000])
    changed = bool(messages.update(**updates))
    if changed and error_code == TWILIO_WINDOW_CLOSED_CODE and status in FAILED_STATUSES:
        _window_closed_resend(provider_sid=provider_sid, message_id=message_id, reason=error_message)
    return changed


def _window_closed_resend(*, provider_sid: str, message_id: int | None, reason: str) -> None:
    """Twilio accepted free text and then reported 63016 (outside the 24-hour
    window): queue the message again, to go out as its approved template."""
    with transaction.atomic():
        lookup = {"pk": message_id} if message_id is not None else {"provider_sid": provider_sid}
        message = Message.objects.select_for_update().filter(**lookup).first()
        if message is None or message.template_sid:
            return  # the template itself was refused: the failure stands
        if not message.raw_payload:
            # Every message we write carries its purpose: an empty payload was
            # erased (or removed by retention) since it went, and is not sent again.
            return
        purpose = message.raw_payload.get("purpose", "generic")
        if not _message_template(message)[0]:
            message.error_message = f"{reason}; {_no_template_reason(purpose)}"[:1000]
            message.save(update_fields=["error_message"])
            return
        _attempt_record(
            message,
            kind="text",
            error_code=TWILIO_WINDOW_CLOSED_CODE,
            error=reason or "outside the 24-hour window",
            provider_sid=message.provider_sid or provider_sid,
        )
        message.status = Message.Status.PENDING
        message.provider_sid = None
        message.error_code = message.error_message = ""
        message.status_updated_at = message.queued_at = timezone.now()
        message.save(
            update_fields=[
                "raw_payload",
                "status",
                "provider_sid",
                "error_code",
                "error_message",
                "status_updated_at",
                "queued_at",
            ]
        )
        transaction.on_commit(lambda: queue_leased(OUTBOUND_SEND, [[message.pk]], Message, [message.pk]))
    logger.info("message %s: Twilio reported 63016, queued again as a template", message.pk)
