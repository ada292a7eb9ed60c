"""Raising an emergency alert and telling the landlord."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.dispatch import Signal
from django.utils import timezone

from config.tasks import EMERGENCY_NOTIFY_EMAIL, EMERGENCY_VALIDATE, queue_task
from conversations.models import Conversation, Message
from conversations.outbound import outbound_text_queue
from emergencies.models import EmergencyAlert, SafetyMessage
from properties.models import Tenant
from properties.selectors import tenancies_current

logger = logging.getLogger(__name__)

# Alerts the model checks afterwards (the turn engine's own are its decision already).
VALIDATED_SOURCES = frozenset({EmergencyAlert.Source.KEYWORD, EmergencyAlert.Source.CLASSIFIER})

# Sent inside the transaction that stands a dismissed alert down, with
# ``alert`` (its status, reasoning and conversation), ``tenant_reason`` (why,
# in the tenant's words and language, when the check gave one) and
# ``urgency`` (what the report still warrants: "urgent" or "routine").
# Receivers above this app (the turn engine keeps the report's issue) may
# return a line for the landlord's stand-down notice.
alert_dismissed = Signal()


FALLBACK_SAFETY_TEXT = (
    "This sounds like an emergency. If anyone is in danger, call the emergency services now. "
    "We have alerted your landlord."
)


def safety_message_for(*, organization, category: str, country: str | None = None, language: str = "en") -> str:
    """The safety text for the country (the organization's own unless given)
    and category, in ``language`` when there is one, else in English; the
    organization's own text before the built-in default. When the tenant gets
    the default in their language but the organization wrote its own English
    text (its on-call number, where the meter is), that text follows it.
    With no organization, the default."""
    scope = Q(organization__isnull=True)
    if organization is not None:
        scope |= Q(organization=organization)
    texts = {
        (own is not None, text_language): body
        for own, text_language, body in SafetyMessage.objects.filter(
            scope, country=country or organization.country, category=category, language__in={language, "en"}
        ).values_list("organization_id", "language", "body")
    }
    own_english = texts.get((True, "en"))
    if language != "en" and (own := texts.get((True, language))):
        return own
    if language != "en" and (default := texts.get((False, language))):
        return f"{default}\n\n{own_english}" if own_english else default
    return own_english or texts.get((False, "en")) or FALLBACK_SAFETY_TEXT


def emergency_alert_raise(
    *,
    conversation: Conversation,
    message: Message | None,
    category: str,
    matched_rules: list[dict],
    source: str,
    safety_reply: str = "",
    score: float | None = None,
    model_version: str = "",
) -> EmergencyAlert:
    """Record the alert, mark the conversation as an emergency for the turn
    engine, alert the landlord and queue the model's check, all after commit.
    A message raises one alert: a second call for it (a repeated delivery
    racing the first) returns the first alert and does nothing else."""
    try:
        return _alert_create(
            conversation=conversation,
            message=message,
            category=category,
            matched_rules=matched_rules,
            source=source,
            safety_reply=safety_reply,
            score=score,
            model_version=model_version,
        )
    except IntegrityError:
        if message is None:
            raise
        return EmergencyAlert.objects.get(message=message)


def _alert_create(
    *, conversation, message, category, matched_rules, source, safety_reply, score, model_version
) -> EmergencyAlert:
    with transaction.atomic():
        alert = EmergencyAlert.objects.create(
            organization_id=conversation.organization_id,
            conversation=conversation,
            message=message,
            source=source,
            category=category,
            matched_rules=matched_rules,
            safety_reply=safety_reply,
            score=score,
            model_version=model_version,
        )
        Conversation.objects.filter(pk=conversation.pk).update(
            emergency_category=category, emergency_alerted_at=alert.created_at
        )
        conversation.emergency_category, conversation.emergency_alerted_at = category, alert.created_at
        organization = conversation.organization
        if organization.emergency_contact_phone:
            outbound_text_queue(
                organization=organization,
                to=organization.emergency_contact_phone,
                body=_landlord_text(alert, conversation),
                author=Message.Author.SYSTEM,
                purpose="emergency_alert",
            )
        transaction.on_commit(lambda: queue_task(EMERGENCY_NOTIFY_EMAIL, [alert.pk]))
        if source in VALIDATED_SOURCES:
            transaction.on_commit(lambda: queue_task(EMERGENCY_VALIDATE, [alert.pk]))
    logger.warning("emergency alert %s (%s) raised for conversation %s", alert.pk, category, conversation.pk)
    return alert


def emergency_recently_alerted(*, conversation: Conversation, category: str = "") -> bool:
    """An alert of ``category`` (of any, when empty) in the last EMERGENCY_REALERT_MINUTES."""
    since = timezone.now() - timedelta(minutes=settings.EMERGENCY_REALERT_MINUTES)
    alerts = EmergencyAlert.objects.filter(conversation=conversation, created_at__gte=since)
    return (alerts.filter(category=category) if category else alerts).exists()


def _landlord_text(alert: EmergencyAlert, conversation: Conversation) -> str:
    where = _where(conversation)
    text = alert.message.body if alert.message else ""
    return (
        f"EMERGENCY ({alert.get_category_display()}) reported by {conversation.phone} at {where}: "
        f'"{text[:300]}". The tenant was sent safety instructions.'
    )


def _where(conversation: Conversation) -> str:
    """Where the emergency is, for the landlord. A first message is alerted
    before the turn engine has linked the tenant, so look the number up."""
    if conversation.property is not None:  # no query when property_id is None
        return conversation.property.address
    tenant = (
        conversation.tenant
        or Tenant.objects.filter(organization_id=conversation.organization_id, phone=conversation.phone).first()
    )
    homes = [tenancy.property.address for tenancy in tenancies_current(tenant=tenant)] if tenant else []
    if len(homes) == 1:
        return homes[0]
    if homes:
        return " or ".join(homes) + " (the number's current tenancies; not yet confirmed)"
    return "an address not yet known (the number matches no current tenancy)"


def emergency_notify_email(*, alert_id: int) -> None:
    """Email the organization's emergency contact (or its notification address) once."""
    alert = EmergencyAlert.objects.select_related("organization", "conversation", "message").get(pk=alert_id)
    if alert.landlord_notified_at:
        return
    organization = alert.organization
    to = organization.emergency_contact_email or organization.notification_email
    if to:
        send_mail(
            f"EMERGENCY: {alert.get_category_display()} at {alert.conversation.phone}",
            _landlord_text(alert, alert.conversation) + f"\nValidation: {alert.get_status_display()}",
            settings.DEFAULT_FROM_EMAIL,
            [to],
        )
    EmergencyAlert.objects.filter(pk=alert.pk).update(landlord_notified_at=timezone.now())
