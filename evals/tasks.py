"""Scheduled evaluations (off unless EVAL_SCHEDULE_ENABLED): retrieval quality
weekly, the judge monthly. Results are stored as EvalRun rows for the admin."""

from __future__ import annotations

import io
import json
import logging

from celery import shared_task
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from config.tasks import EVALS_JUDGE, EVALS_RETRIEVAL
from evals.judge import JUDGE_NEEDS_CLAUDE, conversations_judge, judge_available
from evals.models import EvalRun

logger = logging.getLogger(__name__)


@shared_task(name=EVALS_RETRIEVAL, acks_late=True)
def scheduled_retrieval_eval() -> int:
    run = EvalRun.objects.create(kind=EvalRun.Kind.RETRIEVAL)
    out = io.StringIO()
    try:
        call_command("eval_retrieval", "--json", stdout=out)  # measures inside a rolled-back transaction
        run.summary, run.ok = json.loads(out.getvalue()), True
    except Exception as exc:  # recorded for the admin, not raised: a failed measurement is a result
        logger.exception("scheduled retrieval evaluation failed")
        run.ok, run.error = False, str(exc)[:4000]
    run.finished_at = timezone.now()
    run.save()
    return run.pk


@shared_task(name=EVALS_JUDGE, acks_late=True)
def scheduled_judge() -> int:
    run = EvalRun.objects.create(kind=EvalRun.Kind.JUDGE)
    if not judge_available():
        logger.warning("scheduled judge skipped: it needs ANTHROPIC_API_KEY")
        run.ok, run.error = False, JUDGE_NEEDS_CLAUDE
    else:
        try:
            run = conversations_judge(sample=settings.EVAL_JUDGE_SAMPLE, run=run)  # records Claude's failures itself
        except Exception as exc:  # recorded for the admin, not raised: a failed evaluation is a result
            logger.exception("scheduled judge failed")
            run.ok, run.error = False, str(exc)[:4000]
    if not run.ok:
        run.finished_at = timezone.now()
        run.save(update_fields=["ok", "error", "finished_at"])
    return run.pk
