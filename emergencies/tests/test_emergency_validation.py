"""The model's check of a keyword alert through the real anthropic SDK and the
Celery task (run in-process with ``apply``), for the answers that go wrong:
a malformed verdict, a model slower than the client's timeout, a permanent
error. Each leaves the alert an emergency; only transient errors retry."""

from __future__ import annotations

import pytest

from emergencies.models import EmergencyAlert
from emergencies.tasks import validate_emergency
from emergencies.testing import screen_waiting
from orchestration.testing.anthropic_stub import StubReply, error_reply, text_response, tool_use_response
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

pytestmark = pytest.mark.django_db


@pytest.fixture
def alert(home, post_inbound):
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="I can smell gas in the hallway")
    screen_waiting()
    return EmergencyAlert.objects.get()


@pytest.fixture
def quick_retries(settings):
    settings.EMERGENCY_VALIDATION_MAX_RETRIES = 1
    settings.EMERGENCY_VALIDATION_RETRY_BACKOFF_SECONDS = 0


def verdict(**tool_input):
    return tool_use_response("emergency_verdict", tool_input, model="claude-haiku-4-5")


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(verdict(reasoning="Smells of gas.", category="gas"), id="missing is_emergency"),
        pytest.param(verdict(reasoning="Smells of gas.", is_emergency="no", category="gas"), id="string not boolean"),
        pytest.param(verdict(reasoning="Smells of gas.", is_emergency=None, category="gas"), id="null verdict"),
        pytest.param(text_response("It is probably fine."), id="text instead of the tool"),
    ],
)
def test_a_malformed_verdict_leaves_the_alert_an_emergency(alert, anthropic_stub, answer):
    anthropic_stub.queue(answer)
    validate_emergency.apply(args=[alert.pk])
    alert.refresh_from_db()
    assert alert.status == "validation_failed" and alert.is_emergency
    assert "no usable verdict" in alert.validation_reasoning
    assert alert.conversation.emergency_category == "gas"


def test_a_model_slower_than_the_timeout_retries_then_fails_safe(
    alert, anthropic_stub, settings, quick_retries, caplog
):
    settings.LLM_TIMEOUT_SECONDS = 0.5
    settings.LLM_MAX_RETRIES = 0  # the task's retries only, so the count below is exact
    late = StubReply(body=verdict(reasoning="Not an emergency.", is_emergency=False, category="gas"), delay=2.0)
    anthropic_stub.queue(late, late)
    validate_emergency.apply(args=[alert.pk])
    alert.refresh_from_db()
    assert alert.status == "validation_failed" and alert.is_emergency
    assert "APITimeoutError" in alert.validation_reasoning
    assert len(anthropic_stub.requests) == 2  # the first try and one retry
    assert "dismissed" not in {a.status for a in EmergencyAlert.objects.all()}


def test_a_timeout_then_an_answer_is_a_verdict(alert, anthropic_stub, settings, quick_retries):
    settings.LLM_TIMEOUT_SECONDS = 0.5
    settings.LLM_MAX_RETRIES = 0
    anthropic_stub.queue(
        StubReply(body=verdict(reasoning="late", is_emergency=False, category="gas"), delay=2.0),
        verdict(reasoning="A gas smell at home now.", is_emergency=True, category="gas"),
    )
    validate_emergency.apply(args=[alert.pk])
    alert.refresh_from_db()
    assert alert.status == "confirmed" and alert.validation_reasoning == "A gas smell at home now."


def test_overloaded_past_the_retries_fails_safe(alert, anthropic_stub, quick_retries):
    anthropic_stub.default = error_reply(529, "overloaded_error")
    validate_emergency.apply(args=[alert.pk])
    alert.refresh_from_db()
    assert alert.status == "validation_failed" and alert.is_emergency
    # One task try and one task retry, each with the SDK's own two retries.
    assert len(anthropic_stub.requests) == 2 * 3


def test_a_permanent_error_is_not_retried(alert, anthropic_stub, settings):
    settings.EMERGENCY_VALIDATION_MAX_RETRIES = 3
    settings.EMERGENCY_VALIDATION_RETRY_BACKOFF_SECONDS = 0
    anthropic_stub.default = error_reply(401, "authentication_error", "invalid x-api-key")
    validate_emergency.apply(args=[alert.pk])
    alert.refresh_from_db()
    assert alert.status == "validation_failed" and alert.is_emergency
    assert "401" in alert.validation_reasoning
    assert len(anthropic_stub.requests) == 1
