"""The model's second opinion on a keyword alert: a forced tool call with
reasoning before the verdict. A dismissal stands the alert down (and the
landlord is told); no verdict leaves it an emergency."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from orchestration.llm import llm_complete
from orchestration.models import EMERGENCY_CATEGORIES, EmergencyAlert

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
        },
        "required": ["reasoning", "is_emergency", "category"],
        "additionalProperties": False,
    },
}
SYSTEM = (
    "You check emergency alerts raised by keyword rules for a letting agency. A message is a real emergency "
    "when it describes a present danger in the tenant's home (gas smell, fire or smoke, carbon monoxide alarm, "
    "flooding, sparking electrics, no heat with a vulnerable person, a home that cannot be secured, sewage, "
    "structural collapse). Past events, news, tests, jokes, hypotheticals and words used in another sense "
    "(a gasket, a fired-up boiler, 'I don't smoke') are not. When unsure, it is an emergency."
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
                "content": f"Alert category from keywords: {alert.category}\n"
                f"Message that triggered it: {alert.message.body if alert.message else ''}\n"
                f"Tenant's recent messages:\n{transcript}",
            }
        ],
        tools=[VERDICT_TOOL],
        tool_choice={"type": "tool", "name": "emergency_verdict"},
    )
    verdict = response.tool_calls[0].input if response.tool_calls else {}
    if "is_emergency" not in verdict:
        return emergency_validation_failed(alert_id=alert.pk, reason="the model gave no verdict")
    alert.status = EmergencyAlert.Status.CONFIRMED if verdict["is_emergency"] else EmergencyAlert.Status.DISMISSED
    alert.validation_reasoning = str(verdict.get("reasoning", ""))[:2000]
    alert.validated_at = timezone.now()
    alert.save(update_fields=["status", "validation_reasoning", "validated_at"])
    if alert.status == EmergencyAlert.Status.DISMISSED:
        _tell_landlord_stood_down(alert)
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


def _tell_landlord_stood_down(alert: EmergencyAlert) -> None:
    to = alert.organization.emergency_contact_email or alert.organization.notification_email
    if to:
        send_mail(
            f"Stood down: {alert.get_category_display()} alert at {alert.conversation.phone}",
            f"The assistant judged this a false alarm: {alert.validation_reasoning}",
            settings.DEFAULT_FROM_EMAIL,
            [to],
        )
