from __future__ import annotations

from celery import shared_task

from config.tasks import DEADLINE_CLOCKS_CHECK
from issues.deadlines import clocks_check


@shared_task(name=DEADLINE_CLOCKS_CHECK, acks_late=True)
def deadline_clocks_check_task() -> dict[str, int]:
    """Beat: warn about clocks running out and missed (each once)."""
    result = clocks_check()
    return {"warned": result.warned, "missed": result.missed}
