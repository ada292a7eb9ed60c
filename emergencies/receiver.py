"""The webhook-time path: runs inside the request for every new inbound
message, needs only PostgreSQL, and returns the safety text for the TwiML."""

from __future__ import annotations

import logging

from emergencies.alerts import emergency_alert_raise, emergency_recently_alerted, safety_message_for
from emergencies.matching import emergency_match
from emergencies.models import EmergencyAlert

logger = logging.getLogger(__name__)


def on_inbound_stored(sender, message, repeat=False, **kwargs) -> str | None:
    conversation = message.conversation
    if conversation is None or not message.body:
        return None
    if repeat:  # the same reply as the first delivery got
        sent = EmergencyAlert.objects.filter(message=message).values_list("safety_reply", flat=True).first()
        if sent:
            return sent
    organization = conversation.organization
    match = emergency_match(message.body, organization_id=organization.pk, country=organization.country)
    if not match:
        return None
    category = match.category
    language = match.language if match.language != "en" else (conversation.language or "en")
    reply = safety_message_for(organization=organization, category=category, language=language)
    if not emergency_recently_alerted(conversation=conversation, category=category):
        emergency_alert_raise(
            conversation=conversation,
            message=message,
            category=category,
            matched_rules=[hit.as_dict() for hit in match.hits],
            source="keyword",
            safety_reply=reply,
        )
    return reply
