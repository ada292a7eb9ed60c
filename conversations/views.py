"""Twilio's webhooks: thin edges that check the signature, call one service
and answer in milliseconds."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from xml.sax.saxutils import escape

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from conversations.delivery import message_status_update
from conversations.inbound import SID_MAX_CHARS, message_record_inbound, payload_clean
from conversations.outbound import text_split
from conversations.twilio_client import twilio_signature_valid

logger = logging.getLogger(__name__)


def _signed(request: HttpRequest) -> bool:
    if not settings.TWILIO_VALIDATE_SIGNATURE:
        return True
    return twilio_signature_valid(
        path=request.get_full_path(),
        params=request.POST,  # every value of a repeated key, as the validator expects
        signature=request.headers.get("X-Twilio-Signature", ""),
    )


def _body_utf8(request: HttpRequest) -> bool:
    """Django decodes a form body that is not UTF-8 as Latin-1; we keep the
    text but flag it. (A multipart body is streamed, not kept: not checked.)"""
    if request.content_type != "application/x-www-form-urlencoded":
        return True
    try:
        request.body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def database_down_is_503(view: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    """With PostgreSQL unreachable nothing can be stored: answer 503 with
    Retry-After, which Twilio retries with the same MessageSid (stored once
    when the database is back), instead of a 500."""

    @wraps(view)
    def guarded(request: HttpRequest) -> HttpResponse:
        try:
            return view(request)
        except (OperationalError, InterfaceError) as exc:
            logger.error("%s: database unavailable, answering 503 for Twilio to retry (%s)", request.path, exc)
            response = HttpResponse("database unavailable, retry", status=503, content_type="text/plain")
            response["Retry-After"] = str(settings.WEBHOOK_RETRY_AFTER_SECONDS)
            return response

    return guarded


def twiml(replies: list[str]) -> HttpResponse:
    """Each reply as one or more ``<Message>``: Twilio refuses a body over 1 600 characters."""
    messages = "".join(f"<Message>{escape(part)}</Message>" for text in replies for part in text_split(text))
    body = f'<?xml version="1.0" encoding="UTF-8"?><Response>{messages}</Response>'
    return HttpResponse(body, content_type="text/xml")


@csrf_exempt
@require_POST
@database_down_is_503
def twilio_whatsapp_webhook(request: HttpRequest) -> HttpResponse:
    if not _signed(request):
        logger.warning("rejected a WhatsApp webhook with a missing or wrong signature")
        return HttpResponseForbidden("invalid Twilio signature")
    result = message_record_inbound(params=dict(request.POST.lists()), undecodable=not _body_utf8(request))
    if result.message is not None and "malformed" in result.message.flags:
        problems = ", ".join(flag for flag in result.message.flags if flag != "malformed")
        return HttpResponse(
            "Malformed payload: a MessageSid and a WhatsApp From (whatsapp:+number) are required"
            + (f" ({problems})" if problems else "")
            + "; the payload was stored",
            status=400,
            content_type="text/plain",
        )
    return twiml(result.replies)


@csrf_exempt
@require_POST
@database_down_is_503
def twilio_status_callback(request: HttpRequest) -> HttpResponse:
    if not _signed(request):
        logger.warning("rejected a status callback with a missing or wrong signature")
        return HttpResponseForbidden("invalid Twilio signature")
    # The inbound webhook's cleaning: NUL bytes (PostgreSQL text cannot hold
    # them) removed, the last value of a repeated key.
    fields, _, flags = payload_clean(dict(request.POST.lists()))
    sid = fields.get("MessageSid", "")
    status = fields.get("MessageStatus", "")
    if not sid or not status:
        return HttpResponse("MessageSid and MessageStatus are required", status=400, content_type="text/plain")
    if len(sid) > SID_MAX_CHARS:
        logger.warning("refused a status callback whose MessageSid has %d characters", len(sid))
        return HttpResponse(
            f"MessageSid is longer than {SID_MAX_CHARS} characters: no message has it",
            status=400,
            content_type="text/plain",
        )
    if flags:
        logger.warning("status callback for %s cleaned: %s", sid, flags)
    mid = request.GET.get("mid", "")
    message_status_update(
        message_id=int(mid) if mid.isascii() and mid.isdigit() and len(mid) < 19 else None,
        provider_sid=sid,
        status=status,
        error_code=fields.get("ErrorCode", ""),
        error_message=fields.get("ErrorMessage", ""),
    )
    return HttpResponse(status=204)
