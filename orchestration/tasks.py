"""Celery adapters for the turn engine: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from config.tasks import INBOUND_PROCESS, queue_task
from orchestration.pipeline import inbound_process


@shared_task(name=INBOUND_PROCESS, acks_late=True)
def process_inbound(message_id: int) -> None:
    wait = inbound_process(message_id=message_id)
    if wait:
        queue_task(INBOUND_PROCESS, [message_id], countdown=wait)
