"""STOP and START with a real Celery worker on real Redis and the real twilio
SDK against the stub: the confirmations are queued when the webhook commits
and sent by the worker, once; a status update while opted out never reaches
Twilio, and flows again after START."""

import datetime
import time

import pytest

from conftest import wait_for
from conversations.models import Conversation, Message
from conversations.opt_out import OPTED_OUT_CODE
from issues.status import issue_status_change
from orchestration.models import Turn
from orchestration.testing.fixtures import ORG_NUMBER, PHONE
from properties.models import Tenant
from properties.tests.factories import IssueFactory, UserFactory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_stop_and_start_through_a_real_worker(home, post_inbound, twilio_stub, celery_worker_factory, settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    worker = celery_worker_factory(EMERGENCY_CLASSIFIER="off").start()
    conversation = Conversation.objects.create(organization=home, phone=PHONE, whatsapp_id=f"whatsapp:{PHONE}")
    issue = IssueFactory(
        organization=home,
        conversation=conversation,
        tenant=Tenant.objects.get(phone=PHONE),
        property=home.properties.first(),
    )
    stop = post_inbound(phone=PHONE, to=ORG_NUMBER, body="Stop")
    assert stop.status_code == 200
    wait_for(lambda: len(twilio_stub.sent) == 1, timeout=60, message=f"the confirmation sent\n{worker.log_path}")
    assert "START" in twilio_stub.sent[0]["Body"]
    post_inbound(stop.params)  # Twilio delivers it again

    issue_status_change(issue=issue, status="acknowledged", actor=UserFactory())
    refused = Message.objects.get(raw_payload__purpose="issue_update")
    assert (refused.status, refused.error_code) == ("failed", OPTED_OUT_CODE)

    post_inbound(phone=PHONE, to=ORG_NUMBER, body="START")
    wait_for(lambda: len(twilio_stub.sent) == 2, timeout=60, message=f"the START confirmation\n{worker.log_path}")
    issue_status_change(
        issue=issue, status="scheduled", scheduled_for=datetime.date.today() + datetime.timedelta(days=2)
    )
    wait_for(lambda: len(twilio_stub.sent) == 3, timeout=60, message=f"the update sent\n{worker.log_path}")
    assert issue.reference in twilio_stub.sent[2]["Body"]
    time.sleep(3)  # nothing more comes: no second confirmation, no turn for STOP or START
    assert len(twilio_stub.sent) == 3 and Turn.objects.count() == 0
    refused.refresh_from_db()
    assert refused.status == "failed"
