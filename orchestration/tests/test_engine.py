"""The turn engine end to end from a signed webhook, with the scripted model
(queued tool calls) so each test says exactly what the model chose."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from conversations.models import Conversation, Message
from orchestration.models import Turn
from orchestration.tests.conftest import PHONE, call, conversation_for, issue_call
from properties.models import Issue, IssueUpdate
from properties.tests.factories import IssueFactory, PropertyFactory, TenancyFactory, TenantFactory

pytestmark = pytest.mark.django_db

PHOTO = [("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", "image/jpeg")]


def test_boiler_not_working_gets_a_question_not_an_issue(home, tenant_says):
    replies = tenant_says("My boiler is not working")  # the scripted policy, no queued call
    conversation = conversation_for()
    assert conversation.identity_status == "confirmed"  # one current tenancy
    assert conversation.gathering_state == "gathering_details"
    assert len(replies) == 1 and "?" in replies[0]
    assert not Issue.objects.exists()
    turn = Turn.objects.get()
    assert [c["name"] for c in turn.tool_calls] == ["ask_for_details"]
    assert (turn.identity_before, turn.identity_after) == ("unidentified", "confirmed")
    assert (turn.gathering_before, turn.gathering_after) == ("idle", "gathering_details")
    assert Message.objects.get(direction="inbound").processed_at is not None


def test_full_report_details_photo_issue(home, tenant_says, django_capture_on_commit_callbacks):
    tenant_says("The kitchen tap is leaking", model=[call("ask_for_details", question="Which tap, and since when?")])
    tenant_says("Cold tap, since Monday, drips all the time", model=[call("ask_for_photo", message="Photo please?")])
    assert conversation_for().gathering_state == "awaiting_photo"
    replies = tenant_says("gimme a min I'll take pics", model=[call("respond", message="No rush!")])
    assert replies == ["No rush!"]
    assert conversation_for().gathering_state == "awaiting_photo" and not Issue.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        [reply] = tenant_says("", media=PHOTO, model=[issue_call()])
    issue = Issue.objects.get()
    conversation = conversation_for()
    assert (conversation.gathering_state, conversation.identity_status) == ("issue_created", "active")
    assert issue.reference in reply
    assert issue.photos.count() == 1 and issue.photo == "provided"
    assert issue.tenant.phone == PHONE and issue.property.code == "FLAT-1"
    assert mail.outbox and issue.reference in mail.outbox[0].subject


def test_disallowed_call_is_rejected_and_the_model_tries_again(home, tenant_says):
    replies = tenant_says(
        "My boiler is not working",
        model=[issue_call(photo="declined"), call("ask_for_details", question="What does the display show?")],
    )
    assert replies == ["What does the display show?"]
    turn = Turn.objects.get()
    assert turn.gating_rejections == 1
    assert turn.tool_calls[0]["is_error"] and "ask_for_photo" in turn.tool_calls[0]["rejection"]
    assert not Issue.objects.exists()


def test_ask_for_photo_before_details_is_rejected(home, tenant_says):
    tenant_says("Hi", model=[call("ask_for_photo", message="Photo?"), call("respond", message="Hello!")])
    turn = Turn.objects.get()
    assert "too early" in turn.tool_calls[0]["rejection"]
    assert conversation_for().gathering_state == "idle"


def test_three_rejections_give_the_fallback_reply_and_escalate(home, tenant_says):
    bad = issue_call(photo="declined")
    [reply] = tenant_says("boiler broken", model=[bad, bad, bad])
    conversation = conversation_for()
    assert "passed your message" in reply
    assert conversation.escalated_at is not None
    turn = Turn.objects.get()
    assert turn.outcome == "fallback" and turn.gating_rejections == 3
    assert Message.objects.get(direction="inbound").processed_at is not None


def test_model_outage_gives_the_fallback_reply(home, tenant_says):
    [reply] = tenant_says("boiler broken", model=[{"error": "unavailable"}])
    assert "passed your message" in reply
    assert conversation_for().escalated_at is not None
    assert Turn.objects.get().outcome == "fallback"


def test_invalid_input_is_rejected_with_the_schema_errors(home, tenant_says):
    tenant_says("hi", model=[call("respond", text="wrong key"), call("respond", message="Hello!")])
    assert "missing 'message'" in Turn.objects.get().tool_calls[0]["rejection"]


def test_photo_declined_only_after_being_asked(home, tenant_says):
    tenant_says("Tap leaking in kitchen", model=[call("ask_for_details", question="Since when?")])
    tenant_says("since monday", model=[issue_call(photo="declined"), call("ask_for_photo", message="Photo?")])
    assert not Issue.objects.exists()
    tenant_says("sorry I can't take one", model=[issue_call(photo="declined")])
    assert Issue.objects.get().photo == "declined"


def test_unknown_number_is_matched_by_address_with_typos_and_confirmed(home, tenant_says):
    phone = "+447700900999"
    tenant_says("hi my sink is blocked", phone=phone, model=[issue_call(photo="not_needed", urgency="emergency")])
    assert not Issue.objects.exists()  # identity first
    assert conversation_for(phone).identity_status == "unidentified"
    [reply] = tenant_says(
        "12 Harbor St, Leeds", phone=phone, model=[call("find_property", address="12 Harbor St, Leeds")]
    )
    conversation = conversation_for(phone)
    assert conversation.identity_status == "identified"
    assert conversation.candidate_property.code == "FLAT-1" and "Harbour Street" in reply
    tenant_says("yes", phone=phone, model=[call("confirm_property", confirmed=True)])
    conversation = conversation_for(phone)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "FLAT-1"
    assert conversation.tenant is None  # a confirmed property, not a tenant on record


def test_unknown_address_stays_unidentified_and_a_no_goes_back(home, tenant_says):
    phone = "+447700900998"
    tenant_says("hello", phone=phone, model=[call("find_property", address="99 Nowhere Road, Bristol")])
    assert conversation_for(phone).identity_status == "unidentified"
    tenant_says("12 harbour street", phone=phone, model=[call("find_property", address="12 harbour street")])
    tenant_says("no", phone=phone, model=[call("confirm_property", confirmed=False)])
    conversation = conversation_for(phone)
    assert conversation.identity_status == "unidentified" and conversation.candidate_property is None


def test_tenant_with_two_homes_is_asked_which(home, tenant_says):
    tenant = TenantFactory(organization=home, phone="+447700900789")
    for code in ("FLAT-2", "HOUSE-7"):
        TenancyFactory(tenant=tenant, property=PropertyFactory(organization=home, code=code))
    tenant_says("hi", phone=tenant.phone, model=[call("respond", message="Which home: FLAT-2 or HOUSE-7?")])
    assert conversation_for(tenant.phone).identity_status == "identified"
    tenant_says(
        "the house", phone=tenant.phone, model=[call("confirm_property", confirmed=True, property_code="FLAT-1")]
    )
    assert conversation_for(tenant.phone).identity_status == "identified"  # FLAT-1 is not theirs: rejected
    tenant_says(
        "the house", phone=tenant.phone, model=[call("confirm_property", confirmed=True, property_code="HOUSE-7")]
    )
    conversation = conversation_for(tenant.phone)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "HOUSE-7"


def test_duplicate_of_an_open_issue_adds_details_instead(home, tenant_says):
    flat = home.properties.get(code="FLAT-1")
    existing = IssueFactory(organization=home, property=flat, title="Leaking kitchen tap", location="kitchen sink")
    tenant_says("kitchen tap leaking again", model=[call("ask_for_details", question="Same tap?")])
    tenant_says("yes", model=[call("ask_for_photo", message="Photo?")])
    [reply] = tenant_says("", media=PHOTO, model=[issue_call()])
    assert Issue.objects.count() == 1
    assert existing.reference in reply
    assert IssueUpdate.objects.filter(issue=existing, author="tenant").exists()


def test_emergency_skips_the_photo_and_forces_urgency(home, tenant_says):
    tenant_says("hello", model=[call("respond", message="Hi")])
    Conversation.objects.filter(phone=PHONE).update(emergency_category="gas")
    tenant_says(
        "strong gas smell in the kitchen",
        model=[
            call("ask_for_photo", message="Photo?"),
            issue_call(urgency="urgent", photo="not_needed", category="gas", title="Gas smell"),
        ],
    )
    turn = Turn.objects.latest("id")
    assert "emergency" in turn.tool_calls[0]["rejection"]
    issue = Issue.objects.get()
    assert issue.urgency == "emergency" and issue.photo == "not_needed"
    assert conversation_for().emergency_category == ""


def test_flag_off_acknowledges_once_and_hands_over(home, tenant_says):
    home.llm_orchestration_enabled = False
    home.save()
    first = tenant_says("boiler broken")
    second = tenant_says("hello??")
    assert len(first) == 1 and "passed to Harbour Lettings" in first[0]
    assert second == []
    conversation = conversation_for()
    assert conversation.escalated_at is not None
    assert list(Turn.objects.values_list("outcome", flat=True)) == ["flag_off", "flag_off"]
    assert not Message.objects.filter(direction="inbound", processed_at__isnull=True).exists()


def test_taken_over_conversation_stays_silent(home, tenant_says):
    tenant_says("hi", model=[call("respond", message="Hello!")])
    Conversation.objects.filter(phone=PHONE).update(bot_paused=True)
    assert tenant_says("are you there?") == []
    assert Turn.objects.latest("id").outcome == "paused"


def test_stale_report_starts_afresh(home, tenant_says):
    tenant_says("tap leaking", model=[call("ask_for_details", question="Which tap?")])
    long_ago = timezone.now() - timedelta(days=3)
    Conversation.objects.filter(phone=PHONE).update(last_turn_at=long_ago, gathering_started_at=long_ago)
    tenant_says("hi again", model=[call("respond", message="Hello again!")])
    turn = Turn.objects.latest("id")
    assert turn.gathering_before == "gathering_details"
    assert conversation_for().gathering_state == "idle"


def test_a_second_run_for_the_same_messages_does_nothing(home, tenant_says):
    from orchestration.engine import turn_run

    tenant_says("hi", model=[call("respond", message="Hello!")])
    message = Message.objects.get(direction="inbound")
    assert turn_run(conversation_id=message.conversation_id, message_ids=[message.pk]) is None
    assert Message.objects.filter(direction="outbound").count() == 1


def test_a_turn_stays_within_its_query_budget(home, tenant_says, django_assert_max_num_queries):
    tenant_says("tap leaking", model=[call("ask_for_details", question="Which tap?")])
    with django_assert_max_num_queries(45):
        tenant_says("cold tap in the kitchen", model=[call("ask_for_photo", message="Photo?")])


def test_an_emergency_the_keywords_missed_still_gets_safety_advice_and_an_alert(home, tenant_says):
    from orchestration.models import EmergencyAlert

    [reply] = tenant_says(
        "the radiator valve snapped off and it is spraying across the room",
        model=[
            issue_call(urgency="emergency", photo="not_needed", title="Burst radiator pipe", location="living room")
        ],
    )
    alert = EmergencyAlert.objects.get()
    assert (alert.source, alert.category) == ("model", "flooding")
    assert "stopcock" in reply and Issue.objects.get().reference in reply
