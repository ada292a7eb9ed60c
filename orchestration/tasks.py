"""Celery adapters for the turn engine: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from config.tasks import INBOUND_PROCESS
from conversations.models import Message
from conversations.sweeper import queue_leased
from orchestration.pipeline import inbound_process


@shared_task(name=INBOUND_PROCESS, acks_late=True)
def process_inbound(message_id: int) -> None:
    wait = inbound_process(message_id=message_id)
    if wait:  # with the broker down the lease goes back, so the next sweep takes it
        queue_leased(INBOUND_PROCESS, [message_id], Message, [message_id], countdown=wait)
