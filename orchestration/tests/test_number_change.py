"""A tenant's number changes hands: their conversation from it is retired,
whoever writes from it next starts afresh, and the history stays theirs."""

from __future__ import annotations

import datetime

import pytest

from config.tasks import INBOUND_PROCESS
from conversations.delivery import message_send
from conversations.models import Conversation, Message
from conversations.number_change import RETIRED_CODE
from conversations.outbound import outbound_text_queue
from conversations.takeover import ConversationActionError, conversation_landlord_message_send
from issues.models import Issue
from issues.status import issue_status_change
from llm.scripted import scripted_queue
from orchestration.pipeline import inbound_process
from orchestration.testing.fixtures import ORG_NUMBER, PHONE, call, conversation_for
from privacy.selectors import tenant_records
from properties.models import Tenant
from properties.tests.factories import IssueFactory, PropertyFactory, TenancyFactory, TenantFactory, UserFactory

NEW_PHONE = "+447700900999"


@pytest.fixture(autouse=True)
def _classifier_off(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


@pytest.fixture
def reported(home, tenant_says):
    """Amira reported a leak from her number, which then went to Ben, a tenant of another flat."""
    tenant_says("The kitchen tap is dripping", model=[call("respond", message="Sorry, since when?")])
    amira = Tenant.objects.get(phone=PHONE)
    issue = IssueFactory(
        organization=home,
        property=home.properties.get(code="FLAT-1"),
        tenant=amira,
        conversation=conversation_for(),
        reference="R2611-TAP001",
        title="Dripping kitchen tap",
    )
    amira.phone = NEW_PHONE  # a new phone
    amira.save()
    flat_2 = PropertyFactory(organization=home, code="FLAT-2", address="Flat 2, 3 Dock Road, Leeds", postcode="LS2 1AA")
    ben = TenantFactory(organization=home, phone=PHONE, name="Ben Ode")
    TenancyFactory(tenant=ben, property=flat_2, start_date=datetime.date(2026, 6, 1))
    return amira, ben, issue


def test_the_next_writer_from_the_old_number_starts_afresh_as_who_they_are(reported, tenant_says):
    amira, ben, issue = reported
    old = issue.conversation
    old.refresh_from_db()
    assert old.retired_at is not None and old.tenant == amira  # her history stays hers
    tenant_says("hi the boiler is making a banging noise", model=[call("respond", message="Sorry to hear that.")])
    new = conversation_for()  # the live one
    assert new.pk != old.pk
    assert (new.tenant, new.property.code, new.identity_status) == (ben, "FLAT-2", "confirmed")
    assert not Issue.objects.filter(conversation=new).exists()  # Amira's report is not Ben's
    # Data rights: each sees their own.
    assert list(tenant_records(tenant=ben).conversations) == [new]
    amira_conversations = set(tenant_records(tenant=amira).conversations)
    assert old in amira_conversations and new not in amira_conversations
    assert not tenant_records(tenant=ben).messages.filter(body="The kitchen tap is dripping").exists()


def test_updates_on_the_former_tenants_issue_go_to_their_new_number(reported, tenant_says):
    _, _, issue = reported
    issue_status_change(issue=issue, status="acknowledged", actor=UserFactory())
    update = Message.objects.filter(raw_payload__purpose="issue_update").latest("id")
    assert update.to_address == f"whatsapp:{NEW_PHONE}" and update.status == "pending"
    assert not Message.objects.filter(raw_payload__purpose="issue_update", to_address=f"whatsapp:{PHONE}").exists()
    # Once she writes from it, her answers there count for the issue reported from the old number.
    tenant_says("hello it's Amira, new phone", phone=NEW_PHONE, model=[call("respond", message="Thanks Amira.")])
    issue_status_change(issue=issue, status="resolved", actor=UserFactory())
    question = Message.objects.filter(raw_payload__purpose="issue_fixed").latest("id")
    assert question.conversation == conversation_for(NEW_PHONE)
    tenant_says("Yes", phone=NEW_PHONE, extra={"ButtonPayload": f"issue_fixed:yes:{issue.reference}"})
    issue.refresh_from_db()
    assert issue.fix_answer == "yes"


def test_a_message_that_came_in_just_before_the_change_is_answered_as_the_number_is_now(
    home, tenant_says, post_inbound, queued, django_capture_on_commit_callbacks, monkeypatch
):
    from orchestration import engine

    contexts = []  # what the model is asked with
    real_decide = engine.decide
    monkeypatch.setattr(
        engine, "decide", lambda context, decision: contexts.append(context) or real_decide(context, decision)
    )
    tenant_says("hello", model=[call("respond", message="Hi Amira, how can I help?")])
    old = conversation_for()
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body="who is this? I just got this number")
    waiting = Message.objects.get(provider_sid=response.params["MessageSid"])
    amira = Tenant.objects.get(phone=PHONE)
    amira.phone = NEW_PHONE  # saved before the worker got to the message
    amira.save()
    asked = len(contexts)
    with django_capture_on_commit_callbacks(execute=True):
        inbound_process(message_id=waiting.pk)  # finds its conversation retired
    assert len(contexts) == asked  # the model is never asked with Amira's identity and history
    waiting.refresh_from_db()
    live = conversation_for()
    assert waiting.conversation == live and live.pk != old.pk and waiting.processed_at is None
    # They wrote just now: the reply goes as text, not as a template that may not be configured.
    from conversations.delivery import session_window_open

    assert session_window_open(live) and live.last_inbound_at == waiting.created_at
    assert (INBOUND_PROCESS, [waiting.pk], "inbound") in queued  # its turn, in the live conversation
    assert not Message.objects.filter(conversation=old, direction="outbound", id__gt=waiting.pk).exists()
    scripted_queue(phone=PHONE, calls=[call("respond", message="Hello, I can help with repairs.")])
    inbound_process(message_id=waiting.pk)
    live.refresh_from_db()
    assert live.tenant is None and live.identity_status == "unidentified"  # not taken for Amira
    reply = Message.objects.filter(conversation=live, direction="outbound").get()
    assert reply.body == "Hello, I can help with repairs." and reply.status == "pending"


def test_an_alert_raised_by_a_handed_on_message_goes_with_it(home, tenant_says, post_inbound):
    from emergencies.models import EmergencyAlert

    tenant_says("hello", model=[call("respond", message="Hi Amira, how can I help?")])
    old = conversation_for()
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body="the thing in the kitchen is hissing")
    waiting = Message.objects.get(provider_sid=response.params["MessageSid"])
    alert = EmergencyAlert.objects.create(  # raised (by the worker's classifier, say) before the turn ran
        organization=home, conversation=old, message=waiting, category="gas", safety_reply="Leave now."
    )
    Conversation.objects.filter(pk=old.pk).update(emergency_category="gas", emergency_alerted_at=alert.created_at)
    amira = Tenant.objects.get(phone=PHONE)
    amira.phone = NEW_PHONE
    amira.save()
    inbound_process(message_id=waiting.pk)
    alert.refresh_from_db()
    live = conversation_for()
    assert alert.conversation == live and live.emergency_category == "gas"  # the emergency is the new holder's


def test_a_conversation_from_the_old_number_linked_to_no_one_stays_with_the_tenant(home, tenant_says):
    tenant_says("hello", model=[call("respond", message="Hi, how can I help?")])
    conversation = conversation_for()
    Conversation.objects.filter(pk=conversation.pk).update(tenant=None)  # confirmed by address, say, not linked
    amira = Tenant.objects.get(phone=PHONE)
    amira.phone = NEW_PHONE
    amira.save()
    conversation.refresh_from_db()
    assert conversation.retired_at is not None and conversation.tenant == amira
    assert conversation in tenant_records(tenant=amira).conversations


def test_a_bare_number_update_stays_with_the_tenant_it_was_sent_to(home):
    amira = Tenant.objects.get(phone=PHONE)
    issue = IssueFactory(
        organization=home, property=home.properties.get(code="FLAT-1"), tenant=amira, reference="R2611-HAND01"
    )
    issue_status_change(issue=issue, status="acknowledged", actor=UserFactory())  # no conversation: her number
    [update] = Message.objects.filter(raw_payload__purpose="issue_update")
    assert update.conversation is None and update.to_address == f"whatsapp:{PHONE}"
    amira.phone = NEW_PHONE
    amira.save()
    ben = TenantFactory(organization=home, phone=PHONE, name="Ben Ode")
    assert update in tenant_records(tenant=amira).messages
    assert update not in tenant_records(tenant=ben).messages


def test_linking_an_unverified_issue_never_uses_a_number_that_changed_hands(reported):
    from issues.services import IssueLinkError, issue_number_link

    _, _, issue = reported
    Issue.objects.filter(pk=issue.pk).update(tenant=None, tenant_unverified=True)
    issue.refresh_from_db()
    with pytest.raises(IssueLinkError, match="no longer the reporter's"):
        issue_number_link(issue=issue, actor=UserFactory())


def pending(conversation: Conversation, body: str, *, purpose: str) -> Message:
    """An outbound message waiting to be sent, as a queued one is stored."""
    return Message.objects.create(
        organization=conversation.organization,
        conversation=conversation,
        direction="outbound",
        author="system",
        body=body,
        to_address=f"whatsapp:{PHONE}",
        raw_payload={"purpose": purpose},
        status="pending",
    )


def test_nothing_more_is_sent_to_a_retired_conversation_but_a_safety_text(home, tenant_says):
    tenant_says("hello", model=[call("respond", message="Hi, how can I help?")])
    conversation = conversation_for()
    waiting = pending(conversation, "We'll call round on Monday.", purpose="generic")
    Tenant.objects.get(phone=PHONE).delete()  # deleted: the number is nobody's on record now
    conversation.refresh_from_db()
    assert conversation.retired_at is not None
    waiting.refresh_from_db()
    assert (waiting.status, waiting.error_code) == ("failed", RETIRED_CODE)  # not sent to whoever has it now
    with pytest.raises(ConversationActionError, match="stopped being the tenant's"):
        conversation_landlord_message_send(conversation=conversation, user=UserFactory(), body="Are you there?")
    # Queued meanwhile by a path still holding the conversation: refused at sending too.
    late = pending(conversation, "Reminder: the visit is tomorrow.", purpose="appointment")
    message_send(message_id=late.pk)
    late.refresh_from_db()
    assert (late.status, late.error_code) == ("failed", RETIRED_CODE)
    # Queued now by such a path: stored refused, never queued; a safety text still goes.
    [refused] = outbound_text_queue(conversation=conversation, body="Your repair is booked.", purpose="issue_update")
    assert (refused.status, refused.error_code) == ("failed", RETIRED_CODE)
    [safety] = outbound_text_queue(conversation=conversation, body="Leave now.", purpose="safety", queue=False)
    assert safety.status == "pending"


def test_a_save_that_keeps_the_number_retires_nothing(home, tenant_says):
    tenant_says("hello", model=[call("respond", message="Hi, how can I help?")])
    amira = Tenant.objects.get(phone=PHONE)
    amira.name = "Amira K. Khan"
    amira.save()
    assert Conversation.objects.get(phone=PHONE).retired_at is None
