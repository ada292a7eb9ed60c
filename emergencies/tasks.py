"""Celery adapters for emergencies: take ids, call one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from config.tasks import EMERGENCY_NOTIFY_EMAIL, EMERGENCY_SCREEN, EMERGENCY_SWEEP, EMERGENCY_VALIDATE
from emergencies.alerts import emergency_notify_email
from emergencies.screening import message_screen
from emergencies.sweeper import emergency_sweep
from emergencies.validation import emergency_validate, emergency_validation_failed
from llm.types import LLMMisconfigured, LLMUnavailable


@shared_task(name=EMERGENCY_SCREEN, acks_late=True)
def screen_message(message_id: int) -> None:
    message_screen(message_id=message_id, stage="worker")


@shared_task(name=EMERGENCY_VALIDATE, acks_late=True, bind=True)
def validate_emergency(self, alert_id: int) -> None:
    try:
        emergency_validate(alert_id=alert_id)
    except LLMMisconfigured as exc:  # retrying cannot fix a bad key or request: fail safe at once
        emergency_validation_failed(alert_id=alert_id, reason=str(exc))
    except LLMUnavailable as exc:
        if self.request.retries >= settings.EMERGENCY_VALIDATION_MAX_RETRIES:
            emergency_validation_failed(alert_id=alert_id, reason=str(exc))
            return
        backoff = settings.EMERGENCY_VALIDATION_RETRY_BACKOFF_SECONDS * 2**self.request.retries
        raise self.retry(exc=exc, countdown=backoff, max_retries=settings.EMERGENCY_VALIDATION_MAX_RETRIES) from exc


@shared_task(name=EMERGENCY_NOTIFY_EMAIL, acks_late=True)
def notify_emergency_email(alert_id: int) -> None:
    emergency_notify_email(alert_id=alert_id)


@shared_task(name=EMERGENCY_SWEEP, acks_late=True)
def sweep_emergencies() -> dict[str, int]:
    return emergency_sweep()
