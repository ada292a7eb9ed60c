"""The model's second opinion on a keyword alert: a forced tool call with
reasoning before the verdict. A dismissal stands the alert down (and the
landlord is told); no verdict leaves it an emergency."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.outbound import outbound_text_queue
from emergencies.alerts import alert_dismissed
from emergencies.models import EMERGENCY_CATEGORIES, EmergencyAlert
from llm.client import llm_complete

logger = logging.getLogger(__name__)

VERDICT_TOOL = {
    "name": "emergency_verdict",
    "description": "Decide whether the tenant is describing a real, current emergency in their home.",
    "input_schema": {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "description": "Think it through first, in one or two sentences."},
            "is_emergency": {"type": "boolean"},
            "category": {"type": "string", "enum": EMERGENCY_CATEGORIES},
            "urgency_if_not": {
                "type": "string",
                "enum": ["urgent", "routine"],
                "description": "When it is not an emergency: how soon the repair it describes needs doing "
                "(urgent: within a day or two; routine: when convenient, or no repair at all).",
            },
            "tenant_explanation": {
                "type": "string",
                "description": "When it is not an emergency: one short, kind sentence to the tenant, in the "
                "language they wrote in, saying why it is not being treated as one.",
            },
        },
        "required": ["reasoning", "is_emergency", "category"],
        "additionalProperties": False,
    },
}
SYSTEM = (
    "You check emergency alerts raised by keyword rules or a classifier for a letting agency. "
    "A message is a real emergency when it describes a present danger in the tenant's home "
    "(gas smell, fire or smoke, carbon monoxide alarm, flooding, sparking electrics, no heat with "
    "a vulnerable person, a home that cannot be secured, sewage, structural collapse). Past events, "
    "news, tests, jokes, hypotheticals and words used in another sense (a gasket, a fired-up boiler, "
    "'I don't smoke') are not. When unsure, it is an emergency."
)


def emergency_validate(*, alert_id: int) -> EmergencyAlert:
    """Ask the model. Raises LLMError on failure (the task retries)."""
    alert = EmergencyAlert.objects.select_related("message", "conversation", "organization").get(pk=alert_id)
    if alert.status != EmergencyAlert.Status.PENDING:
        return alert
    recent = alert.conversation.messages.filter(direction="inbound").order_by("-created_at")[:5]
    transcript = "\n".join(f"- {m.body}" for m in reversed(recent))
    response = llm_complete(
        model=settings.LLM_MODEL_SMALL,
        system=SYSTEM,
        messages=[
            {
                "role": "user",
                "content": f"Alert category from {alert.get_source_display().lower()}: {alert.category}\n"
                f"Message that triggered it: {alert.message.body if alert.message else ''}\n"
                f"Tenant's recent messages:\n{transcript}",
            }
        ],
        tools=[VERDICT_TOOL],
        tool_choice={"type": "tool", "name": "emergency_verdict"},
    )
    verdict = response.tool_calls[0].input if response.tool_calls else {}
    if not isinstance(verdict.get("is_emergency"), bool):
        return emergency_validation_failed(alert_id=alert.pk, reason="the model gave no usable verdict")
    status = EmergencyAlert.Status.CONFIRMED if verdict["is_emergency"] else EmergencyAlert.Status.DISMISSED
    reasoning = str(verdict.get("reasoning", ""))[:2000]
    # Only the first verdict counts (the sweeper may have queued a second check).
    decided = EmergencyAlert.objects.filter(pk=alert.pk, status=EmergencyAlert.Status.PENDING).update(
        status=status, validation_reasoning=reasoning, validated_at=timezone.now()
    )
    alert.refresh_from_db()
    if decided and status == EmergencyAlert.Status.DISMISSED:
        urgency = verdict.get("urgency_if_not")
        emergency_stand_down(
            alert=alert,
            tenant_reason=str(verdict.get("tenant_explanation") or "")[:500],
            urgency=urgency if urgency in ("urgent", "routine") else "urgent",
        )
    return alert


def emergency_validation_failed(*, alert_id: int, reason: str) -> EmergencyAlert:
    """No verdict: fail safe, the alert stays an emergency."""
    EmergencyAlert.objects.filter(pk=alert_id, status=EmergencyAlert.Status.PENDING).update(
        status=EmergencyAlert.Status.VALIDATION_FAILED,
        validation_reasoning=f"No verdict ({reason}); treated as an emergency.",
        validated_at=timezone.now(),
    )
    logger.error("emergency alert %s could not be validated: %s", alert_id, reason)
    return EmergencyAlert.objects.get(pk=alert_id)


def emergency_stand_down(*, alert: EmergencyAlert, tenant_reason: str = "", urgency: str = "urgent") -> None:
    """A dismissed alert: the conversation goes back to normal unless another
    alert on it is still live (then it keeps that one's category), and the
    landlord hears "false alarm" the way they heard the alert (WhatsApp to the
    emergency contact, email). ``alert_dismissed`` lets the turn engine turn
    the report back into a normal one (its issue, the tenant's notice); what
    its receivers return is added to the landlord's notice. ``urgency`` is
    what the report warrants without the emergency (when no verdict said,
    urgent: the cautious side)."""
    organization = alert.organization
    since = timezone.now() - timedelta(hours=settings.GATHERING_STALE_HOURS)
    with transaction.atomic():
        conversation = Conversation.objects.select_for_update().get(pk=alert.conversation_id)
        if conversation.emergency_category:
            still_live = (
                conversation.emergency_alerts.exclude(pk=alert.pk)
                .exclude(status=EmergencyAlert.Status.DISMISSED)
                .filter(created_at__gte=since)
                .order_by("-created_at")
                .first()
            )
            conversation.emergency_category = still_live.category if still_live else ""
            conversation.save(update_fields=["emergency_category", "updated_at"])
        answers = alert_dismissed.send(sender=EmergencyAlert, alert=alert, tenant_reason=tenant_reason, urgency=urgency)
        text = "\n".join([_stood_down_text(alert), *(str(line) for _, line in answers if line)])
        if organization.emergency_contact_phone:
            outbound_text_queue(
                organization=organization,
                to=organization.emergency_contact_phone,
                body=text,
                author=Message.Author.SYSTEM,
                purpose="emergency_alert",
            )
    to = organization.emergency_contact_email or organization.notification_email
    if to:
        send_mail(
            f"Stood down: {alert.get_category_display()} alert at {alert.conversation.phone}",
            text,
            settings.DEFAULT_FROM_EMAIL,
            [to],
        )
    logger.info("emergency alert %s dismissed by the model check", alert.pk)


def _stood_down_text(alert: EmergencyAlert) -> str:
    return (
        f"False alarm: the {alert.get_category_display().lower()} alert for {alert.conversation.phone} was stood "
        f"down by the assistant's check. Reason: {alert.validation_reasoning or 'none given'}"
    )
