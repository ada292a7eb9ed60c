"""The webhook-time path: runs inside the request for every new inbound
message, needs only PostgreSQL and local processes (the keyword rules and the
classifier, ``emergencies.detector``), and returns the safety text for the TwiML."""

from __future__ import annotations

import logging

from emergencies.alerts import emergency_alert_raise, emergency_recently_alerted, safety_message_for
from emergencies.detector import emergency_detect
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
    detection = emergency_detect(
        message.body,
        organization_id=organization.pk,
        country=organization.country,
        sensitivity=organization.emergency_sensitivity,
        language=conversation.language,
    )
    if detection.vetoed:
        logger.info(
            "built-in rule hit on message %s stood down by the classifier (%.2f)",
            message.pk,
            detection.score.emergency if detection.score else 0.0,
        )
    if not detection:
        return None
    category, language = detection.category, detection.language
    assert category is not None and language is not None  # an emergency always names both
    reply = safety_message_for(organization=organization, category=category, language=language)
    if not emergency_recently_alerted(conversation=conversation, category=category):
        emergency_alert_raise(
            conversation=conversation,
            message=message,
            category=category,
            matched_rules=[hit.as_dict() for hit in detection.hits],
            source=detection.source,
            safety_reply=reply,
            score=detection.score.emergency if detection.score else None,
            model_version=detection.model_version,
        )
    return reply
