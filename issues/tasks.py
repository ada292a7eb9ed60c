from __future__ import annotations

from celery import shared_task

from config.tasks import APPOINTMENTS_CHECK, DEADLINE_CLOCKS_CHECK, DISPATCH_JOBS_EXPIRE, ISSUE_FIX_UNANSWERED_CLOSE
from issues.appointments import appointments_check
from issues.deadlines import clocks_check
from issues.dispatch import jobs_expire
from issues.fix_check import fix_unanswered_close


@shared_task(name=DEADLINE_CLOCKS_CHECK, acks_late=True)
def deadline_clocks_check_task() -> dict[str, int]:
    """Beat: warn about clocks running out and missed (each once)."""
    result = clocks_check()
    return {"warned": result.warned, "missed": result.missed}


@shared_task(name=ISSUE_FIX_UNANSWERED_CLOSE, acks_late=True)
def fix_unanswered_close_task() -> int:
    """Beat, hourly: close resolved issues the tenant never confirmed."""
    return fix_unanswered_close()


@shared_task(name=DISPATCH_JOBS_EXPIRE, acks_late=True)
def jobs_expire_task() -> int:
    """Beat, every 5 minutes: job offers nobody answered go back to the landlord."""
    return jobs_expire()


@shared_task(name=APPOINTMENTS_CHECK, acks_late=True)
def appointments_check_task() -> dict[str, int]:
    """Beat, every 5 minutes: visit reminders, "did it happen?", and times
    offered to a tenant that all passed unpicked."""
    result = appointments_check()
    return {
        "reminded": result.reminded,
        "asked": result.asked,
        "lapsed": result.lapsed,
        "unanswered": result.unanswered,
    }
