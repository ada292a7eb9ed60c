"""The scheduled evaluations: beat entries only when EVAL_SCHEDULE_ENABLED is
set, and each task stores a result row the admin can read, failures included."""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

from conversations.tests.factories import ConversationFactory, MessageFactory
from evals.models import EvalRun, JudgeVerdict
from evals.tasks import scheduled_judge, scheduled_retrieval_eval
from orchestration.testing.anthropic_stub import error_reply

BEAT = (
    "import json, django; django.setup(); from config.celery import app; "
    "print(json.dumps({k: [v['task'], repr(v['schedule'])] for k, v in app.conf.beat_schedule.items()}))"
)


def beat_schedule(enabled: str | None) -> dict:
    """The beat schedule Celery reads, from the real settings in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "EVAL_SCHEDULE_ENABLED"}
    if enabled is not None:
        env["EVAL_SCHEDULE_ENABLED"] = enabled
    result = subprocess.run(
        [sys.executable, "-c", BEAT], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_evaluations_are_scheduled_only_when_enabled():
    from config.celery import app

    assert not any(task.startswith("evals.") for task, _ in beat_schedule(None).values())
    assert not any(task.startswith("evals.") for task, _ in beat_schedule("false").values())
    enabled = beat_schedule("true")
    assert enabled["evals-retrieval-weekly"][0] == "evals.retrieval"
    assert "<crontab: 0 3 * * 1 " in enabled["evals-retrieval-weekly"][1]  # Mondays 03:00
    assert enabled["evals-judge-monthly"][0] == "evals.judge"
    assert "<crontab: 0 4 1 * * " in enabled["evals-judge-monthly"][1]  # the 1st, 04:00
    # The other beat entries are unchanged, and both scheduled names are real tasks.
    assert set(enabled) - set(beat_schedule(None)) == {"evals-retrieval-weekly", "evals-judge-monthly"}
    assert {"evals.retrieval", "evals.judge"} <= set(app.tasks)


@pytest.mark.django_db
def test_weekly_retrieval_evaluation_stores_its_figures():
    run = EvalRun.objects.get(pk=scheduled_retrieval_eval.apply().get())
    assert run.kind == "retrieval" and run.ok is True and run.error == "" and run.finished_at
    # The shipped labelled set: every query measured, with the headline figures.
    assert run.summary["queries"] >= 80
    assert 0 < run.summary["modes"]["hybrid"]["overall"]["ndcg_at_10"] <= 1


@pytest.mark.django_db
def test_monthly_judge_without_a_key_records_why(settings):
    settings.LLM_BACKEND, settings.ANTHROPIC_API_KEY = "scripted", ""
    run = EvalRun.objects.get(pk=scheduled_judge.apply().get())
    assert run.kind == "judge" and run.ok is False and run.finished_at
    assert "needs Claude: set ANTHROPIC_API_KEY" in run.error


def judged_conversation():
    conversation = ConversationFactory()
    MessageFactory(conversation=conversation, body="No hot water since yesterday")
    MessageFactory(conversation=conversation, direction="outbound", author="assistant", body="Sorry! Which tap?")
    return conversation


@pytest.mark.django_db
def test_monthly_judge_records_claude_failing_on_its_row(anthropic_stub):
    judged_conversation()
    anthropic_stub.queue(error_reply(400, "invalid_request_error", "model: unknown model"))
    run = EvalRun.objects.get(pk=scheduled_judge.apply().get())
    assert run.kind == "judge" and run.ok is False and run.finished_at
    assert "the judge model failed after 0 conversation(s)" in run.error and "unknown model" in run.error
    assert run.summary["conversations"] == 0
    assert not JudgeVerdict.objects.exists()
    assert len(anthropic_stub.requests) == 1  # a bad request is not retried
