"""A pin and a tapped button end to end: the signed webhook, a real Celery
worker running the turn and sending, the real twilio SDK against the stub."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from conftest import wait_for
from conversations.models import Conversation, Message
from llm.scripted import scripted_clear, scripted_queue
from orchestration.testing.fixtures import ORG_NUMBER, call

STRANGER = "+447700900555"
CONFIRM_SID = "HX" + "c" * 32


@pytest.mark.worker
def test_a_pin_then_a_tapped_yes_through_the_worker(home, post_inbound, twilio_stub, celery_worker_factory, settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    flat = home.properties.get(code="FLAT-1")
    flat.latitude, flat.longitude = Decimal("53.796000"), Decimal("-1.547000")
    flat.save()
    worker = celery_worker_factory(
        WHATSAPP_TEMPLATES=f"property_confirm={CONFIRM_SID},generic=HX{'g' * 32}",
        EMERGENCY_CLASSIFIER="off",
        INBOUND_COALESCE_SECONDS="0",
    ).start()
    try:
        pin = {"MessageType": "location", "Latitude": "53.796200", "Longitude": "-1.547100", "ProfileName": "Ana"}
        assert post_inbound(phone=STRANGER, to=ORG_NUMBER, extra=pin).status_code == 200
        wait_for(lambda: len(twilio_stub.sent) >= 1, timeout=60, message=f"the question\n{worker.log_path}")
        question = twilio_stub.sent[0]
        assert question["ContentSid"] == CONFIRM_SID
        assert json.loads(question["ContentVariables"]) == {
            "1": "Flat 1, 12 Harbour Street, Leeds, LS1 4AB",
            "2": "FLAT-1",
        }
        conversation = Conversation.objects.get(phone=STRANGER)
        assert conversation.identity_status == "identified" and conversation.property is None

        scripted_queue(phone=STRANGER, calls=[call("respond", message="What can I help you with?")])
        tap = {"MessageType": "button", "ButtonPayload": "confirm_property:yes:FLAT-1", "ButtonText": "Yes"}
        assert post_inbound(phone=STRANGER, to=ORG_NUMBER, body="Yes", extra=tap).status_code == 200
        wait_for(lambda: len(twilio_stub.sent) >= 2, timeout=60, message=f"the answer\n{worker.log_path}")
        assert (
            twilio_stub.sent[1]["Body"] == "Thanks, that's Flat 1, 12 Harbour Street, Leeds.\nWhat can I help you with?"
        )
        conversation.refresh_from_db()
        assert conversation.identity_status == "confirmed" and conversation.property_id == flat.pk
        assert Message.objects.filter(conversation=conversation, direction="inbound", processed_at=None).count() == 0
    finally:
        scripted_clear(phone=STRANGER)
