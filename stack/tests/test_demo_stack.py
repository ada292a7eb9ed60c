"""``make demo``: the demo conversation played against a live web server and a
real Celery worker on real Redis, with the demo data and documents loaded the
way ``run_stack`` loads them."""

from __future__ import annotations

import io

import pytest

from emergencies.defaults import defaults_seed
from emergencies.models import EmergencyAlert, EmergencyRule, SafetyMessage
from issues.models import Issue
from stack.demo import DEMO_LANDLORD_PASSWORD, DEMO_WHATSAPP_NUMBER, demo_prepare

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_stack(live_server, celery_worker_factory, settings):
    """The demo organization with its documents, a live server and a worker,
    on the scripted model whatever the developer's environment says."""
    defaults_seed(EmergencyRule, SafetyMessage)  # transactional tests flush the migration's rules
    settings.LLM_BACKEND = "scripted"
    demo_prepare(landlord_password=DEMO_LANDLORD_PASSWORD, stdout=io.StringIO())
    celery_worker_factory(LLM_BACKEND="scripted", MEDIA_ROOT=str(settings.MEDIA_ROOT)).start()
    return live_server.url


def test_make_demo_reports_a_leak_with_a_photo_answers_gas_at_once_and_the_boiler_from_the_documents(demo_stack):
    from stack.demo_conversation import demo_play

    lines: list[str] = []
    issues = demo_play(server_url=demo_stack, org_number=DEMO_WHATSAPP_NUMBER, out=lines.append)
    transcript = "\n".join(lines)
    assert transcript.startswith("Model: scripted"), transcript
    assert "no reply within" not in transcript, transcript

    # Amira's leak: asked for details and a photo, sent one, an issue with that photo.
    leak = Issue.objects.get(tenant__phone="+447700900123")
    assert leak.title == "Leaking pipe under bathroom sink"
    assert leak.photos.count() == 1
    assert leak.photos.get().media.content_type == "image/jpeg"

    # Tomasz's gas: the emergency worker's safety text comes first, and an alert exists.
    gas = _section(lines, "+447700900456")
    replies = [line for line in gas if line.startswith("  assistant < ")]
    assert replies and replies[0].startswith("  assistant < If you smell gas"), transcript
    alert = EmergencyAlert.objects.get(conversation__phone="+447700900456")
    assert alert.category == "gas" and alert.safety_reply.startswith("If you smell gas")

    # Priya's boiler question: the answer quotes the boiler guide for her home.
    boiler = [line for line in _section(lines, "+447700900321") if line.startswith("  assistant < ")]
    assert len(boiler) == 1, transcript
    # Answered from the house's boiler guide (its pressure sections), not invented.
    assert "From your home's guide" in boiler[0] and "pressure" in boiler[0], transcript
    assert not Issue.objects.filter(tenant__phone="+447700900321").exists()

    # The landlord's list at the end shows both issues.
    assert {issue.pk for issue in issues} == set(Issue.objects.values_list("pk", flat=True))
    assert len(issues) == 2


def _section(lines: list[str], phone: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("===") and phone in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("===")), len(lines))
    return lines[start + 1 : end]
