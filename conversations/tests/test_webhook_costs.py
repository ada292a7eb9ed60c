"""What the webhook reads for each message (docs/benchmarks.md): the routing
of a number and the emergency rules' version are kept per process for
PROCESS_CACHE_SECONDS, never past an edit made in the same process, and a
number nobody had routes at once."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations.models import Message
from emergencies.models import EmergencyRule
from properties.models import WhatsAppNumber
from properties.tests.factories import OrganizationFactory, WhatsAppNumberFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def number():
    return WhatsAppNumberFactory(number="+14155550001")


def _post(post_inbound, body: str = "The kitchen tap is dripping", to: str = "+14155550001"):
    response = post_inbound(phone="+447700900123", to=to, body=body)
    assert response.status_code == 200
    return Message.objects.get(provider_sid=response.params["MessageSid"])


def test_an_ordinary_message_of_a_known_sender_takes_two_statements(post_inbound, number, queued, settings):
    """The conversation upserted with its last inbound time, the message
    inserted once; routing and the rules' version come from the process."""
    settings.EMERGENCY_CLASSIFIER = "e5"  # the webhook only matches the organization's own rules
    _post(post_inbound)  # the first message creates the conversation and fills the caches
    with CaptureQueriesContext(connection) as captured:
        assert post_inbound(phone="+447700900123", to="+14155550001", body="still dripping").status_code == 200
    # The test's own transaction turns the request's BEGIN / COMMIT into a savepoint.
    statements = [q["sql"].split()[0] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert statements == ["WITH", "INSERT"], captured.captured_queries


def test_a_number_moved_in_another_process_routes_anew_within_the_bound(
    post_inbound, number, queued, settings, monkeypatch
):
    settings.PROCESS_CACHE_SECONDS = 5
    clock = [1000.0]
    monkeypatch.setattr("config.expiring._clock", lambda: clock[0])
    other = OrganizationFactory()
    first = _post(post_inbound)
    # Another process's edit: no signal reaches this one.
    WhatsAppNumber.objects.filter(pk=number.pk).update(organization=other)
    clock[0] += 4.9
    assert _post(post_inbound).organization_id == first.organization_id  # still trusted
    clock[0] += 0.2  # past the bound
    assert _post(post_inbound).organization_id == other.pk


def test_an_edit_in_this_process_and_a_new_number_route_at_once(post_inbound, number, queued, settings):
    settings.PROCESS_CACHE_SECONDS = 3600
    _post(post_inbound)
    other = OrganizationFactory()
    number.organization = other
    number.save()
    assert _post(post_inbound).organization_id == other.pk
    unknown = _post(post_inbound, to="+14155550999")
    assert unknown.organization_id is None and "unrouted" in unknown.flags
    added = WhatsAppNumberFactory(number="+14155550999")
    assert _post(post_inbound, to="+14155550999").organization_id == added.organization_id


def test_a_rule_saved_in_this_process_applies_to_the_next_message(post_inbound, number, queued, settings):
    settings.PROCESS_CACHE_SECONDS = 3600
    settings.EMERGENCY_CLASSIFIER = "off"  # the rules decide in the request
    assert "<Message>" not in post_inbound(phone="+447700900123", to="+14155550001", body="the gerbil").content.decode()
    EmergencyRule.objects.create(organization=number.organization, phrase="gerbil", category="gas", language="en")
    reply = post_inbound(phone="+447700900123", to="+14155550001", body="the gerbil again").content.decode()
    assert "<Message>" in reply


def test_a_repeated_delivery_changes_nothing_and_a_new_conversation_is_in_the_audit_log(post_inbound, number, queued):
    from auditlog.models import LogEntry

    from conversations.models import Conversation

    response = post_inbound(phone="+447700900123", to="+14155550001", body="hi", extra={"ProfileName": "Ana"})
    conversation = Conversation.objects.get()
    assert LogEntry.objects.get_for_object(conversation).filter(action=LogEntry.Action.CREATE).count() == 1
    params = {**response.params, "ProfileName": "Someone Else"}
    assert post_inbound(params).status_code == 200  # Twilio delivers the same message again, later
    again = Conversation.objects.get()
    assert (again.last_inbound_at, again.profile_name) == (conversation.last_inbound_at, conversation.profile_name)
    assert Message.objects.count() == 1
