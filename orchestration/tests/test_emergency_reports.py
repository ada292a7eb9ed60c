"""What the conversation does around an emergency (orchestration/emergency_reports.py):
one issue with urgency emergency per emergency, whatever the model calls; an
emergency escalation keeps the assistant answering; a dismissed alert turns
the report back into a normal one."""

from __future__ import annotations

import pytest
from django.core import mail

from conversations.models import Conversation, Message
from emergencies.models import EmergencyAlert
from emergencies.validation import emergency_validate
from issues.models import Issue, IssueUpdate
from orchestration.testing.anthropic_stub import tool_use_response
from orchestration.testing.fixtures import PHONE, call, conversation_for, issue_call

pytestmark = pytest.mark.django_db

UNKNOWN = "+447700900999"
GAS_ISSUE = {"category": "gas", "urgency": "emergency", "photo": "not_needed", "title": "Gas smell in the kitchen"}


@pytest.fixture
def rules_alone(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


def assistant_replies(phone: str = PHONE) -> list[str]:
    return list(
        Message.objects.filter(conversation__phone=phone, direction="outbound", author="assistant")
        .order_by("id")
        .values_list("body", flat=True)
    )


def test_an_alert_gets_one_emergency_issue_from_the_tenants_words(home, tenant_says):
    replies = tenant_says(
        "I can smell gas in the kitchen", model=[call("respond", message="Please leave the flat now.")]
    )
    issue = Issue.objects.get()
    alert = EmergencyAlert.objects.get()
    assert (issue.urgency, issue.category, issue.photo) == ("emergency", "gas", "not_needed")
    assert issue.description == "I can smell gas in the kitchen"
    assert alert.issue_id == issue.pk
    conversation = conversation_for()
    assert (conversation.gathering_state, conversation.identity_status) == ("issue_created", "active")
    # The tenant hears the reference once, with the model's own answer.
    assert any("Please leave the flat now." in r and issue.reference in r for r in replies)

    later = tenant_says("it is getting stronger", model=[call("respond", message="Leave now and call 0800 111 999.")])
    assert Issue.objects.count() == 1
    assert later[-1] == "Leave now and call 0800 111 999."  # the reference is not repeated


def test_an_alert_before_the_property_is_confirmed_gets_its_issue_on_confirmation(home, tenant_says):
    tenant_says(
        "I can smell gas in the kitchen",
        phone=UNKNOWN,
        model=[call("respond", message="Please get out. What is your address?")],
    )
    assert EmergencyAlert.objects.filter(conversation__phone=UNKNOWN).exists()
    assert not Issue.objects.exists()  # nobody knows where yet
    tenant_says(
        "12 Harbour Street flat 1 LS1 4AB", phone=UNKNOWN, model=[call("find_property", address="12 Harbour St")]
    )
    assert not Issue.objects.exists()
    [reply] = tenant_says("yes", phone=UNKNOWN, model=[call("confirm_property", confirmed=True)])
    issue = Issue.objects.get()
    assert issue.urgency == "emergency" and issue.property.code == "FLAT-1"
    assert issue.description == "I can smell gas in the kitchen"
    assert issue.reference in reply
    assert EmergencyAlert.objects.get().issue_id == issue.pk
    assert conversation_for(UNKNOWN).gathering_state == "issue_created"


def test_create_issue_after_the_code_made_one_updates_it(home, tenant_says):
    tenant_says("I can smell gas", model=[call("respond", message="Leave the flat now.")])
    issue = Issue.objects.get()
    [reply] = tenant_says(
        "it's in the kitchen, near the cooker",
        model=[issue_call(**GAS_ISSUE, location="kitchen", message="Logged as an emergency.")],
    )
    assert Issue.objects.count() == 1
    assert issue.reference in reply
    issue.refresh_from_db()
    assert issue.location == "kitchen" and issue.urgency == "emergency"
    assert issue.title == "Gas smell in the kitchen"  # the model's summary replaces the code's stand-in
    assert IssueUpdate.objects.filter(issue=issue, body__contains="Gas smell in the kitchen").exists()
    assert conversation_for().emergency_category == ""


def test_a_question_in_the_emergencys_own_turn_keeps_its_issue_as_the_report(home, tenant_says):
    tenant_says(
        "water is pouring through the bathroom ceiling from upstairs",
        model=[call("ask_for_details", question="Is anyone hurt, and can you reach the stopcock?")],
    )
    issue = Issue.objects.get()
    assert issue.urgency == "emergency"
    assert conversation_for().gathering_state == "issue_created"  # not a new report in gathering_details
    tenant_says(
        "nobody hurt, stopcock is off",
        model=[issue_call(**GAS_ISSUE | {"category": "plumbing", "title": "Water through the ceiling"})],
    )
    assert Issue.objects.count() == 1


def test_a_later_report_after_the_emergency_is_its_own_issue(home, tenant_says):
    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Leave the flat now.")])
    gas = Issue.objects.get()
    tenant_says("ok the engineer fixed it", model=[call("respond", message="Glad to hear it.")])
    tenant_says("also the kitchen tap drips", model=[call("ask_for_details", question="Which tap, since when?")])
    assert conversation_for().emergency_category == ""  # a new report: no longer an emergency
    tenant_says("the cold one, since Monday", model=[call("ask_for_photo", message="Photo please?")])
    tenant_says("I can't take one", model=[issue_call(photo="declined")])
    tap = Issue.objects.exclude(pk=gas.pk).get()
    assert tap.urgency == "routine" and tap.title == "Leaking kitchen tap"
    gas.refresh_from_db()
    assert gas.urgency == "emergency" and not gas.updates.exists()


def test_an_emergency_escalation_alerts_a_person_but_keeps_the_assistant_answering(
    home, tenant_says, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        tenant_says(
            "I can smell gas really strongly",
            model=[call("escalate", reason="gas smell", message="I've alerted the team; someone will call you.")],
        )
    conversation = conversation_for()
    assert not conversation.bot_paused and conversation.escalated_at is not None
    assert Issue.objects.get().urgency == "emergency"
    assert EmergencyAlert.objects.count() == 1
    assert not any("needs a person" in m.subject for m in mail.outbox)  # the alert already told them
    replies = tenant_says(
        "should I turn off the meter?", model=[call("respond", message="Yes, turn it off at the meter if safe.")]
    )
    assert replies == ["Yes, turn it off at the meter if safe."]
    assert Issue.objects.count() == 1
    # A person takes over from the admin: the assistant stops.
    Conversation.objects.filter(pk=conversation.pk).update(bot_paused=True)
    assert tenant_says("hello?", model=[call("respond", message="should not be sent")]) == []


def test_a_model_only_emergency_gets_the_safety_text_an_alert_and_an_issue(home, tenant_says, rules_alone):
    """Neither stage caught it (here: the rules alone, which have no phrase for it)."""
    [reply] = tenant_says(
        "my neighbour's bath is pouring through my light fitting",
        model=[
            call(
                "escalate",
                reason="water through a light fitting",
                message="A person from the office will call you.",
                emergency_category="electrical",
            )
        ],
    )
    alert = EmergencyAlert.objects.get()
    issue = Issue.objects.get()
    assert (alert.source, alert.category, alert.issue_id) == ("model", "electrical", issue.pk)
    assert alert.safety_reply and alert.safety_reply in reply
    assert issue.urgency == "emergency" and issue.category == "electrical"
    assert "light fitting" in issue.description
    assert issue.reference in reply
    assert not conversation_for().bot_paused
    # A second escalation in the same emergency sends no second safety text and no second alert.
    [again] = tenant_says(
        "is it safe to stay?",
        model=[
            call("escalate", reason="tenant worried", message="Someone is on the way.", emergency_category="electrical")
        ],
    )
    assert again == "Someone is on the way."
    assert EmergencyAlert.objects.count() == 1 and Issue.objects.count() == 1


def test_a_model_only_emergency_via_create_issue_links_its_alert(home, tenant_says, rules_alone):
    [reply] = tenant_says(
        "the ceiling above the stairs is sagging and cracking loudly",
        model=[issue_call(urgency="emergency", photo="not_needed", category="structural", title="Sagging ceiling")],
    )
    issue = Issue.objects.get()
    alert = EmergencyAlert.objects.get(source="model")
    assert alert.issue_id == issue.pk and issue.reference in reply
    assert EmergencyAlert.objects.count() == 1


def test_a_plain_escalation_pauses_and_acknowledges_once(home, tenant_says):
    replies = tenant_says(
        "I want to discuss my deposit with a person",
        model=[call("escalate", reason="deposit question", message="A person from the office will reply here.")],
    )
    assert replies == ["A person from the office will reply here."]
    assert conversation_for().bot_paused
    assert tenant_says("hello?") == []
    assert tenant_says("anyone?") == []
    assert assistant_replies() == ["A person from the office will reply here."]
    assert not Issue.objects.exists() and not EmergencyAlert.objects.exists()


def test_an_alert_while_a_person_has_taken_over_still_gets_its_issue(home, tenant_says):
    tenant_says("hi", model=[call("respond", message="Hello!")])
    Conversation.objects.filter(phone=PHONE).update(bot_paused=True)
    tenant_says("I can smell gas in the hall")
    assert Issue.objects.get().urgency == "emergency"


def dismissal(**extra) -> dict:
    verdict = {"reasoning": "A scheduled test of the alarm; nothing is burning.", "is_emergency": False}
    return tool_use_response("emergency_verdict", {**verdict, "category": "fire_smoke", **extra})


def test_a_dismissed_alert_turns_the_report_back_into_a_normal_one(
    home, tenant_says, anthropic_stub, rules_alone, django_capture_on_commit_callbacks
):
    anthropic_stub.queue(tool_use_response("respond", {"message": "Glad it's all fine."}))
    tenant_says("the fire alarm test was loud today, all fine")
    issue = Issue.objects.get()
    assert issue.urgency == "emergency"
    # The model was told the emergency's issue exists before it answered.
    assert f"issue {issue.reference} records it" in str(anthropic_stub.requests[0]["json"]["messages"])
    alert = EmergencyAlert.objects.get()
    Conversation.objects.filter(phone=PHONE).update(language="pl")
    anthropic_stub.queue(dismissal(urgency_if_not="routine", tenant_explanation="To był tylko test alarmu."))
    with django_capture_on_commit_callbacks(execute=True):
        emergency_validate(alert_id=alert.pk)
    issue.refresh_from_db()
    assert issue.urgency == "routine" and issue.is_open()
    update = IssueUpdate.objects.get(issue=issue, author="system")
    assert "dismissed" in update.body and "scheduled test" in update.body
    notice = assistant_replies()[-1]
    assert "nie traktujemy" in notice and "To był tylko test alarmu." in notice and issue.reference in notice
    stood_down = [m for m in mail.outbox if "Stood down" in m.subject]
    assert stood_down and issue.reference in stood_down[0].body and "routine" in stood_down[0].body
    assert conversation_for().emergency_category == ""


def test_a_dismissal_without_the_new_fields_keeps_the_issue_urgent(home, tenant_says, anthropic_stub, rules_alone):
    anthropic_stub.queue(tool_use_response("respond", {"message": "OK."}))
    tenant_says("the fire alarm test was loud today, all fine")
    anthropic_stub.queue(dismissal())
    emergency_validate(alert_id=EmergencyAlert.objects.get().pk)
    assert Issue.objects.get().urgency == "urgent"  # the cautious side
    assert "not treating it as an emergency" in assistant_replies()[-1]


def test_the_alert_stamps_the_conversation_and_an_old_one_stops_the_report(home, tenant_says, settings):
    """The conversation keeps its latest alert's time: a report is looked for
    only within the window, and a turn of a conversation never alerted makes
    no query for it."""
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from orchestration.emergency_reports import emergency_issue_find

    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Please leave the flat now.")])
    conversation = conversation_for()
    alert = EmergencyAlert.objects.get()
    assert conversation.emergency_alerted_at == alert.created_at
    assert emergency_issue_find(conversation=conversation) == Issue.objects.get()

    conversation.emergency_alerted_at -= timedelta(hours=settings.GATHERING_STALE_HOURS, minutes=1)
    with CaptureQueriesContext(connection) as captured:
        assert emergency_issue_find(conversation=conversation) is None
    assert not captured.captured_queries


def test_the_backfill_gives_each_alerted_conversation_its_latest_alert(home, tenant_says):
    import importlib
    from datetime import timedelta

    from django.apps import apps

    migration = importlib.import_module("emergencies.migrations.0006_backfill_conversation_emergency_alerted_at")
    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Please leave the flat now.")])
    tenant_says("there is smoke coming from the socket", model=[call("respond", message="Switch off at the fuse box.")])
    first, latest = EmergencyAlert.objects.order_by("created_at")
    EmergencyAlert.objects.filter(pk=first.pk).update(created_at=latest.created_at - timedelta(minutes=5))
    tenant_says("the tap drips", phone=UNKNOWN, model=[call("respond", message="Which tap?")])
    Conversation.objects.update(emergency_alerted_at=None)

    migration.backfill(apps, None)
    assert conversation_for().emergency_alerted_at == latest.created_at
    assert conversation_for(UNKNOWN).emergency_alerted_at is None


def test_the_sweeper_gives_a_conversation_the_time_of_an_alert_that_did_not_stamp_it(home, tenant_says):
    """An alert written by a process older than the column leaves no stamp: the
    emergency sweep sets it, so the next turn finds the report."""
    from emergencies.sweeper import alert_stamps_repair
    from orchestration.emergency_reports import emergency_issue_find

    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Please leave the flat now.")])
    Conversation.objects.update(emergency_alerted_at=None)
    assert emergency_issue_find(conversation=conversation_for()) is None
    assert alert_stamps_repair() == 1
    assert conversation_for().emergency_alerted_at == EmergencyAlert.objects.get().created_at
    assert emergency_issue_find(conversation=conversation_for()) == Issue.objects.get()
    assert alert_stamps_repair() == 0  # nothing behind any more


def _routine_report_after(tenant_says) -> Issue:
    """The tenant reports a dripping tap in three turns; returns its issue."""
    tenant_says("also the kitchen tap drips", model=[call("ask_for_details", question="Which tap, since when?")])
    replies = tenant_says("the cold one, since Monday", model=[call("ask_for_photo", message="Photo please?")])
    assert replies == ["Photo please?"]  # a photo may be asked for: no emergency stands
    tenant_says("I can't take one", model=[issue_call(photo="declined")])
    return Issue.objects.get(title="Leaking kitchen tap")


def test_an_emergency_long_over_does_not_make_the_next_report_an_emergency(home, tenant_says, settings):
    """The model answered the emergency with respond (the code filed its issue),
    so nothing cleared the conversation's emergency; days later a dripping tap
    must be a routine report, with no second alert and no safety text."""
    from datetime import timedelta

    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Leave the flat now.")])
    past = timedelta(hours=settings.GATHERING_STALE_HOURS + 48)
    alert = EmergencyAlert.objects.get()
    EmergencyAlert.objects.filter(pk=alert.pk).update(created_at=alert.created_at - past)
    Conversation.objects.filter(pk=alert.conversation_id).update(emergency_alerted_at=alert.created_at - past)

    tap = _routine_report_after(tenant_says)
    assert tap.urgency == "routine"
    assert EmergencyAlert.objects.count() == 1
    assert conversation_for().emergency_category == ""


def test_an_emergency_whose_issue_was_closed_does_not_make_the_next_report_an_emergency(home, tenant_says):
    from issues.status import issue_status_change

    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Leave the flat now.")])
    gas = Issue.objects.get()
    issue_status_change(issue=gas, status="closed", note="Engineer made it safe.", tenant_told=False)

    tap = _routine_report_after(tenant_says)
    assert tap.urgency == "routine"
    assert EmergencyAlert.objects.count() == 1


def test_a_model_only_emergency_added_to_an_open_report_still_gets_the_safety_text(home, tenant_says, rules_alone):
    """The sagging ceiling was reported as routine; now it is cracking loudly.
    The model files it as an emergency, which joins the open issue: the
    tenant must still get the safety advice the alert records."""
    sagging = {"category": "structural", "title": "Sagging ceiling", "location": "stairs"}
    tenant_says("the ceiling has a bulge", model=[call("ask_for_details", question="Where, and since when?")])
    tenant_says("above the stairs, since last week", model=[call("ask_for_photo", message="A photo please?")])
    tenant_says("I can't reach to take one", model=[issue_call(**sagging, photo="declined")])
    routine = Issue.objects.get()
    [reply] = tenant_says(
        "the ceiling above the stairs is sagging lower and cracking loudly",
        model=[
            issue_call(
                **sagging,
                urgency="emergency",
                photo="not_needed",
                description="The stairs ceiling is sagging and cracking.",
            )
        ],
    )
    alert = EmergencyAlert.objects.get(source="model")
    routine.refresh_from_db()
    assert Issue.objects.count() == 1 and alert.issue_id == routine.pk and routine.urgency == "emergency"
    assert alert.safety_reply and alert.safety_reply in reply
    assert routine.reference in reply
