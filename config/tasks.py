"""The project's Celery task names and the one way to queue a task.

Every ``@shared_task`` takes its name from here, ``config/celery.py`` routes by
these names, and every caller queues through ``queue_task`` with one of them,
so nothing imports the module that defines a task just to queue it.

If Redis is down the caller carries on: what was stored in PostgreSQL stays
there, and the sweeper queues it once Redis answers again."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from celery import Celery

logger = logging.getLogger(__name__)

# Channel (conversations/tasks.py)
OUTBOUND_SEND = "outbound.send"
MEDIA_DOWNLOAD = "media.download"
MEDIA_TRANSCRIBE = "media.transcribe"
CHANNEL_SWEEP = "channel.sweep"
# Turn engine (orchestration/tasks.py)
INBOUND_PROCESS = "inbound.process"
# Emergencies (emergencies/tasks.py)
EMERGENCY_SCREEN = "emergency.screen"
EMERGENCY_VALIDATE = "emergency.validate"
EMERGENCY_NOTIFY_EMAIL = "emergency.notify_email"
EMERGENCY_SWEEP = "emergency.sweep"
# Retrieval (retrieval/tasks.py)
RETRIEVAL_EMBED_DOCUMENT = "retrieval.embed_document"
RETRIEVAL_REQUEUE_PENDING = "retrieval.requeue_pending"
RETRIEVAL_PARTIAL_INDEXES_SYNC = "retrieval.partial_indexes_sync"
# Evaluations (evals/tasks.py)
EVALS_RETRIEVAL = "evals.retrieval"
EVALS_JUDGE = "evals.judge"
# Deadlines, "Is it fixed?" and dispatch (issues/tasks.py)
DEADLINE_CLOCKS_CHECK = "issues.deadline_clocks_check"
ISSUE_FIX_UNANSWERED_CLOSE = "issues.fix_unanswered_close"
DISPATCH_JOBS_EXPIRE = "issues.jobs_expire"
APPOINTMENTS_CHECK = "issues.appointments_check"
# Data protection (privacy/tasks.py)
PRIVACY_RETENTION_APPLY = "privacy.retention_apply"


_app: Celery | None = None


def app_register(app: Celery) -> None:
    """``config/celery.py`` hands its app over as soon as it exists (and
    ``config/__init__.py`` imports it first thing), so ``queue_task`` sends
    through it without importing ``config.celery``, which imports the names
    above for its routes."""
    global _app
    _app = app


# Monotonic time until which this process does not try the broker again: set
# when a publish fails slowly (BROKER_RETRY_AFTER_SECONDS).
_broker_down_until = 0.0
# A failure that took this long is a broker that hangs; one that refuses answers
# at once (a restart, a failover) and is tried again at the next publish.
SLOW_FAILURE_SECONDS = 0.5


def queue_task(name: str, args: list[Any], *, countdown: float | None = None) -> bool:
    """Queue task ``name`` (one of the constants above) with ``args``; False
    when the broker could not be reached, or failed slowly in this process
    less than ``BROKER_RETRY_AFTER_SECONDS`` ago: a Redis that hangs rather
    than refuses costs a publish its socket timeout, and an emergency's
    webhook publishes several, so only the first pays it."""
    global _broker_down_until
    app = _app
    if app is None:
        raise RuntimeError("no Celery app registered: config.celery registers it when imported")
    if time.monotonic() < _broker_down_until:
        logger.warning("not queueing %s%s: the broker failed moments ago; the sweeper will retry", name, args)
        return False
    started = time.monotonic()
    try:
        app.send_task(name, args=args, countdown=countdown)  # queue from task_routes
    except Exception as exc:  # broker unreachable: the sweeper re-queues from the database
        if time.monotonic() - started >= SLOW_FAILURE_SECONDS:
            _broker_down_until = time.monotonic() + settings.BROKER_RETRY_AFTER_SECONDS
        logger.warning("could not queue %s%s (%s); the sweeper will retry", name, args, exc)
        return False
    return True


def broker_failure_forget() -> None:
    """Try the broker at the next publish (tests; a fresh process does anyway)."""
    global _broker_down_until
    _broker_down_until = 0.0
