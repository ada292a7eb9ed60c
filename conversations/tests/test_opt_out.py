"""A tenant's STOP and START through the signed webhook, with proactive
messages sent through the real twilio SDK against the local stub: STOP gets
one confirmation and silences status updates (also those queued before it),
the safety reply to the tenant's own message still goes, START or a new
report turns messages back on, and one organization's STOP never touches
another's conversation with the same number."""

from __future__ import annotations

import datetime

import pytest

from conversations.delivery import message_send
from conversations.models import Conversation, Message
from conversations.opt_out import OPTED_OUT_CODE
from conversations.outbound import Choice, outbound_choice_queue, outbound_text_queue
from issues.models import IssueUpdate
from issues.status import issue_status_change
from orchestration.models import Turn
from orchestration.testing.fixtures import ORG_NUMBER, PHONE
from properties.models import Tenant
from properties.tests.factories import (
    IssueFactory,
    OrganizationFactory,
    PropertyFactory,
    TenantFactory,
    UserFactory,
    WhatsAppNumberFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _classifier_off(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


def deliver() -> None:
    """What the outbound worker does with every message waiting to be sent."""
    pending = Message.objects.filter(direction="outbound", status="pending").order_by("id")
    for pk in pending.values_list("pk", flat=True):
        message_send(message_id=pk)


def say(post_inbound, body: str, *, phone: str = PHONE, to: str = ORG_NUMBER, **kwargs):
    response = post_inbound(phone=phone, to=to, body=body, **kwargs)
    assert response.status_code == 200
    return response


def inbound(response) -> Message:
    return Message.objects.get(provider_sid=response.params["MessageSid"])


@pytest.fixture
def issue(home):
    conversation = Conversation.objects.create(
        organization=home, phone=PHONE, whatsapp_id=f"whatsapp:{PHONE}", language="en"
    )
    return IssueFactory(
        organization=home,
        conversation=conversation,
        tenant=Tenant.objects.get(phone=PHONE, organization=home),
        property=home.properties.first(),
        reference="R-000777",
    )


def bodies(stub) -> list[str]:
    return [sent.get("Body", "") for sent in stub.sent]


def test_stop_confirms_once_and_silences_status_updates_until_start(home, issue, post_inbound, twilio_stub):
    landlord = UserFactory()
    stop = say(post_inbound, "STOP")
    message = inbound(stop)
    # STOP is the opt-out machinery's: processed at once, no turn queued for the model.
    assert message.processed_at is not None and message.queued_at is None
    conversation = Conversation.objects.get(pk=issue.conversation_id)
    assert conversation.opted_out_at is not None
    deliver()
    [confirmation] = bodies(twilio_stub)
    assert "START" in confirmation and "Harbour Lettings" in confirmation
    assert twilio_stub.sent[0]["To"] == f"whatsapp:{PHONE}"

    # Twilio delivers the same STOP again: no second confirmation, the state unchanged.
    post_inbound(stop.params)
    deliver()
    assert len(twilio_stub.sent) == 1
    conversation.refresh_from_db()
    assert conversation.opted_out_at == message.created_at

    # The landlord acknowledges the issue: recorded on the issue, nothing reaches Twilio.
    update = issue_status_change(issue=issue, status="acknowledged", actor=landlord)
    deliver()
    assert len(twilio_stub.sent) == 1
    assert IssueUpdate.objects.filter(pk=update.pk, issue=issue).exists()
    assert "Tenant not notified: they opted out" in update.body  # the landlord is not told otherwise
    refused = Message.objects.get(conversation=conversation, raw_payload__purpose="issue_update")
    assert (refused.status, refused.error_code) == ("failed", OPTED_OUT_CODE)
    assert "opted out" in refused.error_message and refused.queued_at is None

    # START: a short confirmation, no turn, and updates flow again.
    start = say(post_inbound, "Start")
    assert inbound(start).processed_at is not None
    deliver()
    assert len(twilio_stub.sent) == 2 and "back on" in bodies(twilio_stub)[1]
    conversation.refresh_from_db()
    assert conversation.opted_out_at is None
    issue_status_change(issue=issue, status="scheduled", scheduled_for=datetime.date.today() + datetime.timedelta(2))
    deliver()
    assert len(twilio_stub.sent) == 3 and "R-000777" in bodies(twilio_stub)[2]
    assert Turn.objects.count() == 0  # neither STOP nor START reached the model


def test_an_update_queued_before_the_stop_is_not_sent_after_it(home, issue, post_inbound, twilio_stub):
    say(post_inbound, "hello")  # inside the 24-hour window
    issue_status_change(issue=issue, status="acknowledged", actor=UserFactory())
    update = Message.objects.get(raw_payload__purpose="issue_update")
    assert update.status == "pending"
    say(post_inbound, "stop.")
    deliver()
    assert len(twilio_stub.sent) == 1 and "START" in bodies(twilio_stub)[0]
    update.refresh_from_db()
    assert (update.status, update.error_code) == ("failed", OPTED_OUT_CODE)


def test_a_second_stop_while_opted_out_sends_nothing_more(home, post_inbound, twilio_stub):
    say(post_inbound, "STOP")
    say(post_inbound, "unsubscribe")
    deliver()
    assert len(twilio_stub.sent) == 1


@pytest.mark.parametrize(
    ("body", "language", "words"),
    [
        ("Rezygnuję", "pl", "odpowiedz START"),
        ("BAJA", "es", "responde START"),
        ("Dezabonare", "ro", "răspundeți START"),
        ("Sair", "pt", "responda START"),
    ],
)
def test_the_confirmation_is_in_the_tenants_language(home, post_inbound, twilio_stub, body, language, words):
    say(post_inbound, body)
    deliver()
    [confirmation] = bodies(twilio_stub)
    assert words in confirmation


@pytest.mark.parametrize(
    "body",
    ["please stop the water coming through the ceiling", "can you stop by tomorrow", "END of tenancy question"],
)
def test_a_tempting_negative_does_not_opt_out_and_goes_to_the_turn(home, post_inbound, twilio_stub, body):
    message = inbound(say(post_inbound, body))
    assert message.processed_at is None and message.queued_at is not None  # the turn will answer it
    assert Conversation.objects.get(phone=PHONE).opted_out_at is None
    deliver()
    assert twilio_stub.sent == []


def test_a_new_report_turns_messages_back_on(home, issue, post_inbound, twilio_stub):
    say(post_inbound, "STOP")
    message = inbound(say(post_inbound, "the boiler is making a banging noise again"))
    assert message.processed_at is None and message.queued_at is not None  # an ordinary turn
    assert Conversation.objects.get(phone=PHONE).opted_out_at is None
    issue_status_change(issue=issue, status="acknowledged", actor=UserFactory())
    deliver()
    assert len(twilio_stub.sent) == 2 and "R-000777" in bodies(twilio_stub)[1]


def test_start_from_a_tenant_who_never_opted_out_is_an_ordinary_message(home, post_inbound, twilio_stub):
    message = inbound(say(post_inbound, "START"))
    assert message.processed_at is None and message.queued_at is not None
    deliver()
    assert twilio_stub.sent == []


def test_a_reaction_does_not_turn_messages_back_on(home, post_inbound, twilio_stub):
    say(post_inbound, "STOP")
    say(post_inbound, "", extra={"MessageType": "reaction"})
    assert Conversation.objects.get(phone=PHONE).opted_out_at is not None


def test_the_safety_reply_to_the_tenants_own_message_still_goes(home, post_inbound, twilio_stub, queued, settings):
    """The gas message is screened by the emergency worker after the tenant's STOP arrived."""
    settings.EMERGENCY_CLASSIFIER = "e5"  # the request queues the screening for the worker
    gas = inbound(say(post_inbound, "I can smell gas in the kitchen"))
    assert gas.screened_at is None and [name for name, _, _ in queued] == ["emergency.screen"]
    settings.EMERGENCY_CLASSIFIER = "off"  # the worker's rules decide (no classifier in this test)
    say(post_inbound, "STOP")
    deliver()
    assert len(twilio_stub.sent) == 1  # the opt-out confirmation

    from emergencies.screening import message_screen

    message_screen(message_id=gas.pk, stage="worker")
    assert len(twilio_stub.sent) == 2
    safety = Message.objects.get(raw_payload__purpose="safety")
    assert safety.status != "failed" and twilio_stub.sent[1]["Body"] == safety.body
    assert Conversation.objects.get(phone=PHONE).opted_out_at is not None


def test_a_turn_reply_and_a_button_prompt_are_refused_while_opted_out(home, post_inbound, twilio_stub):
    say(post_inbound, "STOP")
    conversation = Conversation.objects.get(phone=PHONE)
    [reply] = outbound_text_queue(conversation=conversation, body="Could you send a photo?", purpose="reply")
    prompt = outbound_choice_queue(
        conversation=conversation,
        body="Is it fixed? Reply 1 for Yes, 2 for No.",
        choices=[Choice(payload="yes", title="Yes"), Choice(payload="no", title="No")],
        purpose="button_prompt",
        content_variables={},
    )
    deliver()
    assert len(twilio_stub.sent) == 1  # only the confirmation
    for message in (reply, prompt):
        message.refresh_from_db()
        assert (message.status, message.error_code) == ("failed", OPTED_OUT_CODE)


def test_an_update_to_a_bare_number_respects_the_conversation_opt_out(home, post_inbound, twilio_stub):
    """An issue entered by hand with only the tenant's phone: the organization's conversation decides."""
    say(post_inbound, "STOP")
    [message] = outbound_text_queue(organization=home, to=PHONE, body="Plumber on Tuesday", purpose="issue_update")
    deliver()
    message.refresh_from_db()
    assert (message.status, message.error_code) == ("failed", OPTED_OUT_CODE)
    assert len(twilio_stub.sent) == 1


def test_one_organizations_stop_does_not_touch_another_organizations_conversation(home, post_inbound, twilio_stub):
    other = OrganizationFactory(name="Bob Homes")
    WhatsAppNumberFactory(organization=other, number="+14155550002")
    PropertyFactory(organization=other, code="BOB-1")
    TenantFactory(organization=other, phone=PHONE)
    say(post_inbound, "hello", to="+14155550002")
    say(post_inbound, "STOP")  # to Harbour Lettings only
    ours = Conversation.objects.get(organization=home, phone=PHONE)
    theirs = Conversation.objects.get(organization=other, phone=PHONE)
    assert ours.opted_out_at is not None and theirs.opted_out_at is None
    deliver()
    assert len(twilio_stub.sent) == 1
    outbound_text_queue(conversation=theirs, body="Bob Homes: your repair is booked", purpose="issue_update")
    outbound_text_queue(conversation=ours, body="Harbour: your repair is booked", purpose="issue_update")
    deliver()
    assert bodies(twilio_stub)[1:] == ["Bob Homes: your repair is booked"]
    assert twilio_stub.sent[1]["From"] == "whatsapp:+14155550002"


def test_stop_never_reaches_the_model_and_a_turn_already_under_way_is_not_answered_after_it(
    home, post_inbound, twilio_stub, tenant_says
):
    from llm.scripted import scripted_queue
    from orchestration.pipeline import inbound_process
    from orchestration.testing.fixtures import call

    # STOP through the turn path: nothing for the model (no scripted call queued, no Turn).
    assert tenant_says("STOP") != []  # the confirmation, queued by the webhook
    assert Turn.objects.count() == 0
    tenant_says("the kitchen tap drips", model=[call("ask_for_details", question="Which tap?")])
    deliver()
    assert len(twilio_stub.sent) == 2  # STOP's confirmation and the answer to the new report

    # A report the worker has not answered yet, then STOP: the late answer is not sent.
    report = inbound(say(post_inbound, "the bathroom light flickers"))
    say(post_inbound, "STOP")
    scripted_queue(phone=PHONE, calls=[call("ask_for_details", question="Since when?")])
    inbound_process(message_id=report.pk)
    deliver()
    assert len(twilio_stub.sent) == 3  # only the second confirmation
    late = Message.objects.get(body__contains="Since when?")
    assert (late.status, late.error_code) == ("failed", OPTED_OUT_CODE)
