"""The safety reply needs only PostgreSQL: with the broker's Redis process
stopped and Claude failing, a tenant who smells gas still gets the advice in
the webhook's own answer, and nothing about the alert is lost."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from conversations.models import Conversation, Message
from emergencies.models import EmergencyAlert
from emergencies.sweeper import emergency_sweep
from emergencies.tasks import validate_emergency
from orchestration.testing.anthropic_stub import error_reply
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

pytestmark = pytest.mark.django_db


def test_safety_reply_with_redis_stopped_and_claude_failing(
    home, post_inbound, private_redis, anthropic_stub, settings, django_capture_on_commit_callbacks
):
    home.emergency_contact_phone = "+447700900555"
    home.save()
    anthropic_stub.default = error_reply(529, "overloaded_error")
    private_redis.stop()  # the Celery app publishes to this Redis, now gone

    with django_capture_on_commit_callbacks(execute=True):  # the queueing really tries the dead broker
        response = post_inbound(phone=PHONE, to=ORG_NUMBER, body="I can smell gas in the hallway")

    assert response.status_code == 200
    twiml = response.content.decode()
    assert "National Gas Emergency Service on 0800 111 999" in twiml and "<Message>" in twiml
    alert = EmergencyAlert.objects.get()
    assert (alert.category, alert.status) == ("gas", "pending")
    assert Conversation.objects.get(phone=PHONE).emergency_category == "gas"
    # The landlord's WhatsApp alert is stored, waiting for the outbound sweeper.
    landlord = Message.objects.get(to_address="whatsapp:+447700900555")
    assert landlord.status == "pending" and "EMERGENCY" in landlord.body
    assert anthropic_stub.requests == []  # nothing in the request waited on Claude

    # Still no broker: the sweeper's queueing fails quietly and the alert stays pending.
    settings.EMERGENCY_SWEEP_GRACE_SECONDS = -1
    queued_again = {"screened": 0, "safety_sent": 0, "validate": 1, "notify": 1, "stamped": 0}
    assert emergency_sweep() == queued_again  # the request screened it
    assert EmergencyAlert.objects.get().status == "pending"
    assert emergency_sweep() == queued_again  # nothing queued: no lease

    # When the check does run and Claude is still failing, the alert stays an emergency.
    settings.EMERGENCY_VALIDATION_MAX_RETRIES = 0
    validate_emergency.apply(args=[alert.pk])
    alert.refresh_from_db()
    assert alert.status == "validation_failed" and alert.is_emergency
    assert Conversation.objects.get(phone=PHONE).emergency_category == "gas"


def test_the_sweeper_queues_an_alerts_lost_work_once_per_lease_and_gives_up_after_the_cap(
    home, post_inbound, settings, caplog
):
    settings.EMERGENCY_CLASSIFIER = "off"
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="I can smell gas in the hallway")
    settings.EMERGENCY_SWEEP_GRACE_SECONDS = -1
    assert emergency_sweep()["validate"] == 1
    assert emergency_sweep()["validate"] == 0  # leased: a backlog is not queued again by every sweep
    settings.SWEEP_LEASE_SECONDS = -1  # every lease has run out
    for _ in range(settings.SWEEP_MAX_REQUEUES - 1):
        assert emergency_sweep()["validate"] == 1
    assert emergency_sweep()["validate"] == 0
    assert "still unvalidated or unnotified after" in caplog.text


def test_the_sweeper_requeues_the_model_check_of_a_classifier_alert_too(home, post_inbound, settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="I can smell gas in the hallway")
    settings.EMERGENCY_SWEEP_GRACE_SECONDS = -1
    emergency_sweep()  # screened here: the rules' alert
    EmergencyAlert.objects.update(source="classifier")  # had the classifier raised it, its lost check is the same
    settings.SWEEP_LEASE_SECONDS = -1
    assert emergency_sweep()["validate"] == 1
    # One lost hours ago is left pending (an emergency): a check now would read today's conversation.
    EmergencyAlert.objects.update(created_at=timezone.now() - datetime.timedelta(hours=7), landlord_notified_at=None)
    assert emergency_sweep() | {"stamped": 0} == {
        "screened": 0,
        "safety_sent": 0,
        "validate": 0,
        "notify": 1,
        "stamped": 0,
    }
