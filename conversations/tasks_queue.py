"""Queue a Celery task by name without importing the module that defines it.

If Redis is down the caller carries on: what was stored in PostgreSQL stays
there, and the sweeper queues it once Redis answers again."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


def queue_task(name: str, args: list[Any], *, countdown: float | None = None) -> bool:
    from config.celery import app

    try:
        app.send_task(name, args=args, countdown=countdown)  # queue from task_routes
    except Exception as exc:  # broker unreachable: the sweeper re-queues from the database
        logger.warning("could not queue %s%s (%s); the sweeper will retry", name, args, exc)
        return False
    return True
