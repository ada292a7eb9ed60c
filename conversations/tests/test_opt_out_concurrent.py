"""STOP delivered several times at the same moment (Twilio retrying, a tenant
tapping send twice): one opt-out, one confirmation."""

import pytest

from config.tasks import INBOUND_PROCESS, OUTBOUND_SEND
from conftest import deliver_concurrently
from conversations.models import Conversation, Message
from conversations.opt_out import OPT_OUT_CONFIRM_PURPOSE
from conversations.testing.signing import inbound_params
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

pytestmark = pytest.mark.django_db(transaction=True)


def test_simultaneous_stops_give_one_confirmation(home, queued, settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    Conversation.objects.create(organization=home, phone=PHONE, whatsapp_id=f"whatsapp:{PHONE}")
    repeated = inbound_params(phone=PHONE, to=ORG_NUMBER, body="STOP")
    burst = [repeated, dict(repeated), inbound_params(phone=PHONE, to=ORG_NUMBER, body="stop")] + [
        inbound_params(phone=PHONE, to=ORG_NUMBER, body="Unsubscribe") for _ in range(2)
    ]
    assert deliver_concurrently(burst) == [200] * len(burst)
    assert Message.objects.filter(direction="inbound").count() == 4  # the repeat stored once
    assert Message.objects.filter(raw_payload__purpose=OPT_OUT_CONFIRM_PURPOSE).count() == 1
    assert Conversation.objects.get(phone=PHONE).opted_out_at is not None
    names = [name for name, _, _ in queued]
    assert INBOUND_PROCESS not in names and names.count(OUTBOUND_SEND) == 1  # no turn; one send
