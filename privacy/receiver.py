"""The WhatsApp door to a data request: a receiver of
``conversations.signals.inbound_stored`` (connected in ``PrivacyConfig.ready``).

When a tenant's message asks for their data (``privacy.detector``), it records
a pending ``DataRequest`` for the landlord to approve. It sends nothing and
returns nothing for the TwiML: the turn engine answers the tenant as it would
any message, and the export leaves only when a landlord approves it. A
repeated delivery of the same message records nothing more (the request is
UNIQUE per message). Regular expressions and one insert: fast enough for the
webhook request."""

from __future__ import annotations

import logging

from conversations.models import Message
from privacy.detector import data_request_detect
from privacy.services import data_request_record_whatsapp

logger = logging.getLogger(__name__)


def on_inbound_stored(sender, *, message, repeat: bool = False, **kwargs) -> None:
    if repeat or message.organization_id is None or message.conversation_id is None:
        return None
    if message.direction != "inbound" or not data_request_detect(message.body or ""):
        return None
    request = data_request_record_whatsapp(message=message)
    if request is not None:
        logger.info("data request %s recorded from message %s", request.pk, message.pk)
    return None


def on_data_request_asked(sender, *, conversation, kind: str, **kwargs) -> None:
    """The model's door (the ``data_request`` tool): it reads the whole
    conversation in any language, so it catches what the detector's phrases
    miss. Recorded against the tenant's latest message."""
    message = (
        Message.objects.filter(conversation=conversation, direction=Message.Direction.INBOUND).order_by("-id").first()
    )
    if message is None:
        return
    request = data_request_record_whatsapp(message=message, kind=kind)
    if request is not None:
        logger.info("data request %s (%s) recorded by the model from message %s", request.pk, kind, message.pk)
