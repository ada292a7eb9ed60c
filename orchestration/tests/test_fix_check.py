"""'Is it fixed?': asked when the landlord resolves, answered by tap, typed
number or title through the signed webhook and the turn, without the model."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.utils import timezone

from conversations.models import Conversation, Message
from issues.deadlines import clock_meet, issue_clocks_sync
from issues.fix_check import fix_unanswered_close
from issues.models import Issue, IssueUpdate
from issues.status import issue_status_change
from llm.scripted import scripted_queue
from orchestration.models import Turn
from orchestration.testing.fixtures import ORG_NUMBER, PHONE, call, conversation_for
from properties.tests.factories import IssueFactory, UserFactory


@pytest.fixture(autouse=True)
def _classifier_off(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


@pytest.fixture
def resolved(home, tenant_says):
    """A reported leak the landlord has just resolved; returns the issue."""
    home.contact_whatsapp = "+447700900555"
    home.save()
    tenant_says("hello")  # the conversation exists
    conversation = conversation_for()
    issue = IssueFactory(
        organization=home,
        property=home.properties.get(code="FLAT-1"),
        conversation=conversation,
        tenant=conversation.tenant,
        reference="R2611-ABC123",
        title="Dripping kitchen tap",
    )
    issue_clocks_sync(issue=issue)
    issue_status_change(issue=issue, status="resolved", actor=UserFactory())
    return issue


def tap(payload: str, title: str) -> dict[str, str]:
    return {"MessageType": "button", "ButtonPayload": payload, "ButtonText": title}


def manager_texts():
    return list(
        Message.objects.filter(to_address="whatsapp:+447700900555").order_by("id").values_list("body", flat=True)
    )


def test_resolving_asks_the_tenant_with_yes_no_choices(resolved):
    question = Message.objects.filter(conversation=resolved.conversation, raw_payload__purpose="issue_fixed").get()
    assert "marked it as fixed. Is it fixed?" in question.body and "Reply 1 for Yes" in question.body
    assert [c["payload"] for c in question.raw_payload["choices"]] == [
        "issue_fixed:yes:R2611-ABC123",
        "issue_fixed:no:R2611-ABC123",
    ]
    resolved.refresh_from_db()
    assert resolved.fix_asked_at is not None and resolved.fix_answer == ""


def test_yes_closes_the_issue_then_a_rating_and_a_comment_are_recorded(resolved, tenant_says):
    replies = tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-ABC123", "Yes"))
    assert replies == [
        "Glad it's fixed. How would you rate the repair, from 1 (poor) to 5 (excellent)? Reply with a number."
    ]
    replies = tenant_says("4")
    assert replies == ["Thank you. If you'd like to add a comment for your landlord, just reply here."]
    turns = list(Turn.objects.filter(conversation=resolved.conversation).order_by("id"))
    assert [t.outcome for t in turns[-2:]] == ["issue_fixed", "issue_rating"]
    assert all(t.input_tokens == 0 for t in turns[-2:])  # no model call

    tenant_says("Plumber was quick and tidy", model=[call("respond", message="Thank you, that's kind.")])
    resolved.refresh_from_db()
    assert (resolved.status, resolved.fix_answer, resolved.rating) == ("closed", "yes", 4)
    assert resolved.rating_comment == "Plumber was quick and tidy"
    history = list(IssueUpdate.objects.filter(issue=resolved, author="tenant").values_list("body", flat=True))
    assert history == [
        "The tenant says it is fixed.",
        "The tenant rated the repair 4/5.",
        "Comment: Plumber was quick and tidy",
    ]
    # The comment still reached the model, told what it was.
    turn = Turn.objects.filter(conversation=resolved.conversation).latest("id")
    assert turn.tool_calls[-1]["name"] == "respond"

    # Once the comment is in, the next message is only the model's.
    tenant_says("is the bin day still tuesday?")
    assert IssueUpdate.objects.filter(issue=resolved, author="tenant").count() == 3


def test_no_reopens_alerts_the_manager_and_the_next_words_go_on_the_issue(resolved, tenant_says):
    replies = tenant_says("2")  # the numbered text's second choice
    assert replies == ["Sorry it's not fixed. I've reopened R2611-ABC123 and told your landlord. What is still wrong?"]
    resolved.refresh_from_db()
    assert (resolved.status, resolved.fix_answer) == ("open", "no")
    assert resolved.clocks.get(kind="resolved").met_at is None  # the clock runs again
    assert manager_texts()[-1] == "[R2611-ABC123] The tenant says it is NOT fixed: reopened"

    tenant_says("still dripping under the sink when the tap is off")
    assert Turn.objects.filter(conversation=resolved.conversation).latest("id").tool_calls  # the model answered
    assert IssueUpdate.objects.filter(issue=resolved).latest("id").body == (
        "Still wrong: still dripping under the sink when the tap is off"
    )
    assert manager_texts()[-1].startswith("[R2611-ABC123] Not fixed, the tenant says: still dripping")


def burst(post_inbound, *messages: dict) -> list[str]:
    """Several messages from the tenant in one burst, answered by one turn;
    returns the replies that turn queued."""
    from orchestration.pipeline import inbound_process

    before = max(Message.objects.filter(direction="outbound").values_list("id", flat=True), default=0)
    for fields in messages:
        response = post_inbound(phone=PHONE, to=ORG_NUMBER, **fields)
        assert response.status_code == 200
    last = Message.objects.get(provider_sid=response.params["MessageSid"])
    inbound_process(message_id=last.pk)
    assert not Message.objects.filter(direction="inbound", processed_at__isnull=True).exists()
    return list(
        Message.objects.filter(direction="outbound", id__gt=before, conversation=last.conversation)
        .order_by("id")
        .values_list("body", flat=True)
    )


def test_no_tapped_with_words_records_them_without_asking_and_the_model_answers(resolved, post_inbound, queued):
    scripted_queue(phone=PHONE, calls=[call("respond", message="Thanks, I've passed that on.")])
    replies = burst(
        post_inbound,
        {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")},
        {"body": "still dripping under the sink when the tap is off"},
    )
    assert replies == ["Thanks, I've passed that on."]  # not also "What is still wrong?"
    resolved.refresh_from_db()
    assert (resolved.status, resolved.fix_answer) == ("open", "no")
    assert IssueUpdate.objects.filter(issue=resolved, author="tenant").latest("id").body == (
        "Still wrong: still dripping under the sink when the tap is off"
    )
    assert manager_texts() == [
        "[R2611-ABC123] Not fixed, the tenant says: still dripping under the sink when the tap is off"
    ]
    turn = Turn.objects.filter(conversation=resolved.conversation).latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["issue_fixed", "respond"]
    assert len(turn.message_ids) == 2


def test_a_rating_typed_with_a_comment_records_both(resolved, post_inbound, queued, tenant_says):
    tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-ABC123", "Yes"))
    scripted_queue(phone=PHONE, calls=[call("respond", message="Thank you!")])
    replies = burst(post_inbound, {"body": "5"}, {"body": "very tidy work, thanks"})
    assert replies == ["Thank you!"]  # the comment is not invited again
    resolved.refresh_from_db()
    assert (resolved.rating, resolved.rating_comment) == (5, "very tidy work, thanks")


def test_yes_tapped_with_a_new_problem_reaches_the_model(resolved, post_inbound, queued):
    scripted_queue(phone=PHONE, calls=[call("ask_for_details", question="Which light is it?")])
    replies = burst(
        post_inbound,
        {"body": "Yes", "extra": tap("issue_fixed:yes:R2611-ABC123", "Yes")},
        {"body": "but now the hallway light has stopped working"},
    )
    assert replies[0].startswith("Glad it's fixed. How would you rate the repair")
    assert replies[-1] == "Which light is it?"
    resolved.refresh_from_db()
    assert (resolved.status, resolved.fix_answer) == ("closed", "yes")
    assert not IssueUpdate.objects.filter(issue=resolved, body__startswith="Comment").exists()


def test_a_tap_with_a_sticker_alone_still_ends_the_turn_without_the_model(resolved, post_inbound, queued):
    replies = burst(
        post_inbound,
        {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")},
        {"body": "", "extra": {"MessageType": "sticker"}},
    )
    assert replies == ["Sorry it's not fixed. I've reopened R2611-ABC123 and told your landlord. What is still wrong?"]
    assert Turn.objects.filter(conversation=resolved.conversation).latest("id").outcome == "issue_fixed"


def test_a_caption_less_photo_with_the_no_leaves_the_prompt_to_ask(resolved, post_inbound, queued):
    photo = [("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", "image/jpeg")]
    replies = burst(
        post_inbound,
        {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")},
        {"body": "", "media": photo},
    )
    assert replies == ["Sorry it's not fixed. I've reopened R2611-ABC123 and told your landlord. What is still wrong?"]


def test_no_typed_then_tapped_is_one_answer_not_its_own_words(resolved, post_inbound, queued):
    replies = burst(post_inbound, {"body": "no"}, {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")})
    assert replies == ["Sorry it's not fixed. I've reopened R2611-ABC123 and told your landlord. What is still wrong?"]
    assert not IssueUpdate.objects.filter(issue=resolved, body__startswith="Still wrong").exists()


def test_words_with_an_answer_while_an_emergency_stands_are_the_emergencys(resolved, post_inbound, queued):
    from emergencies.models import EmergencyAlert

    conversation = conversation_for()
    hello = conversation.messages.filter(direction="inbound").latest("id")
    alert = EmergencyAlert.objects.create(
        organization=resolved.organization,
        conversation=conversation,
        message=hello,
        category="flooding",
        safety_reply=".",
    )
    conversation.emergency_category, conversation.emergency_alerted_at = "flooding", alert.created_at
    conversation.save(update_fields=["emergency_category", "emergency_alerted_at"])
    scripted_queue(phone=PHONE, calls=[call("respond", message="Turn off the water at the stopcock now.")])
    replies = burst(
        post_inbound,
        {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")},
        {"body": "water is pouring through the ceiling now"},
    )
    assert replies[-1].startswith("Turn off the water at the stopcock now.")
    assert not any("What is still wrong?" in reply for reply in replies)  # it could not be answered now
    resolved.refresh_from_db()
    assert resolved.fix_answer == "no"
    assert not IssueUpdate.objects.filter(issue=resolved, body__startswith="Still wrong").exists()
    turn = Turn.objects.filter(conversation=conversation).latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["issue_fixed", "respond"]


def test_no_typed_then_tapped_with_words_records_them_and_the_model_hears_no_refusal(
    resolved, post_inbound, queued, monkeypatch
):
    from orchestration import engine

    real_decide, notes = engine.decide, []
    monkeypatch.setattr(
        engine, "decide", lambda context, decision: notes.extend(context.notes) or real_decide(context, decision)
    )
    scripted_queue(phone=PHONE, calls=[call("respond", message="Thanks, passed on.")])
    burst(
        post_inbound,
        {"body": "no"},
        {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")},
        {"body": "the tap still drips"},
    )
    assert (
        IssueUpdate.objects.filter(issue=resolved, author="tenant").latest("id").body
        == "Still wrong: the tap still drips"
    )
    assert notes and not any("Nothing was changed" in note for note in notes)


def test_a_tap_on_an_older_question_is_judged_against_that_question(resolved, home, tenant_says, post_inbound, queued):
    second = IssueFactory(
        organization=home, property=resolved.property, conversation=resolved.conversation, reference="R2611-DEF456"
    )
    issue_status_change(issue=second, status="resolved", actor=UserFactory())
    tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-DEF456", "Yes"))  # the rating question is the latest now
    replies = burst(post_inbound, {"body": "no"}, {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")})
    resolved.refresh_from_db()
    assert resolved.fix_answer == "no"
    assert not IssueUpdate.objects.filter(issue=resolved, body__startswith="Still wrong").exists()  # "no" is the answer
    assert replies == ["Sorry it's not fixed. I've reopened R2611-ABC123 and told your landlord. What is still wrong?"]


def test_an_answer_kept_from_another_conversation_is_not_replayed(resolved):
    from orchestration.repair_answers import SETTLED_KEY, answer_settle
    from orchestration.trace import Decision

    conversation = conversation_for()
    message = conversation.messages.filter(direction="inbound").latest("id")
    entry = {"name": "issue_fixed", "result": "R2611-ABC123: reopened"}
    message.raw_payload = {SETTLED_KEY: {"conversation": conversation.pk + 1, "answered": [message.pk], "entry": entry}}
    kept = answer_settle(
        conversation=conversation, messages=[message], message_ids=[message.pk], started=0.0, decision=Decision()
    )
    assert kept is None  # handed on from a retired conversation: not this one's answer
    message.raw_payload[SETTLED_KEY]["conversation"] = conversation.pk
    kept = answer_settle(
        conversation=conversation, messages=[message], message_ids=[message.pk], started=0.0, decision=Decision()
    )
    assert kept is not None and "R2611-ABC123: reopened" in kept.note


def test_a_settled_burst_run_again_keeps_its_answer_and_records_nothing_twice(
    resolved, post_inbound, queued, monkeypatch
):
    """The state moves during the first model call: the answer was settled
    and committed; the turn that runs again must not tell the model the tap
    changed nothing, nor record the words twice."""
    from orchestration import engine

    real_decide, notes = engine.decide, []

    def moved_meanwhile(context, decision):
        notes.append(list(context.notes))
        real_decide(context, decision)
        if len(notes) == 1:
            Conversation.objects.filter(pk=context.conversation.pk).update(gathering_state="gathering_details")

    monkeypatch.setattr(engine, "decide", moved_meanwhile)
    scripted_queue(
        phone=PHONE,
        calls=[call("respond", message="first answer, dropped"), call("respond", message="Thanks, passed on.")],
    )
    replies = burst(
        post_inbound,
        {"body": "No", "extra": tap("issue_fixed:no:R2611-ABC123", "No")},
        {"body": "still dripping under the sink"},
    )
    assert replies == ["Thanks, passed on."]
    assert len(notes) == 2 and notes[0] == notes[1]
    assert "answer is recorded" in notes[1][0] and "Nothing was changed" not in " ".join(notes[1])
    assert IssueUpdate.objects.filter(issue=resolved, body__startswith="Still wrong").count() == 1
    assert len(manager_texts()) == 1
    turn = Turn.objects.filter(conversation=resolved.conversation).latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["issue_fixed", "respond"]


def test_a_turn_run_again_gets_the_same_note_and_records_nothing_twice(resolved, tenant_says):
    from issues.fix_check import follow_up_record

    tenant_says("2")
    tenant_says("still dripping under the sink")
    answer = Message.objects.filter(conversation=resolved.conversation, direction="inbound").latest("id")
    updates, texts = IssueUpdate.objects.filter(issue=resolved).count(), len(manager_texts())
    # The turn is discarded and runs again: the model is still told what was recorded.
    again = follow_up_record(conversation=resolved.conversation, message=answer)
    assert again == "R2611-ABC123: what is still wrong recorded and sent to the manager"
    assert (IssueUpdate.objects.filter(issue=resolved).count(), len(manager_texts())) == (updates, texts)


def test_yes_keeps_the_issue_resolved_while_a_clock_is_still_owed(home, tenant_says):
    from issues.deadlines import AWAAB_POLICY
    from issues.models import DeadlinePolicy

    DeadlinePolicy.objects.filter(organization=home).update(active=False)
    DeadlinePolicy.objects.filter(organization=home, name=AWAAB_POLICY).update(active=True)
    tenant_says("hello")
    conversation = conversation_for()
    damp = IssueFactory(
        organization=home,
        property=home.properties.get(code="FLAT-1"),
        conversation=conversation,
        reference="R-DAMP1",
        category="damp_mould",
    )
    issue_clocks_sync(issue=damp)
    issue_status_change(issue=damp, status="resolved", actor=UserFactory())
    tenant_says("Yes", extra=tap("issue_fixed:yes:R-DAMP1", "Yes"))
    damp.refresh_from_db()
    assert (damp.fix_answer, damp.status) == ("yes", "resolved")  # the written summary is still owed
    assert damp.clocks.get(kind="summary_sent").met_at is None
    assert fix_unanswered_close() == 0
    clock_meet(issue=damp, kind="summary_sent", actor=UserFactory())  # sent: nothing is owed any more
    assert fix_unanswered_close() == 1  # beat closes it, as the Yes would have
    damp.refresh_from_db()
    assert damp.status == "closed"


def test_no_answer_while_a_clock_is_owed_leaves_the_question_open_and_a_late_no_still_reopens(
    home, tenant_says, settings
):
    from issues.deadlines import AWAAB_POLICY
    from issues.models import DeadlinePolicy

    settings.ISSUE_FIX_CLOSE_DAYS = 7
    DeadlinePolicy.objects.filter(organization=home).update(active=False)
    DeadlinePolicy.objects.filter(organization=home, name=AWAAB_POLICY).update(active=True)
    tenant_says("hello")
    damp = IssueFactory(
        organization=home,
        property=home.properties.get(code="FLAT-1"),
        conversation=conversation_for(),
        reference="R-DAMP2",
        category="damp_mould",
    )
    issue_clocks_sync(issue=damp)
    issue_status_change(issue=damp, status="resolved", actor=UserFactory())
    with time_machine.travel(timezone.now() + datetime.timedelta(days=8)):
        assert fix_unanswered_close() == 0  # the written summary is owed: it stays resolved
        tenant_says("No", extra=tap("issue_fixed:no:R-DAMP2", "No"))
    damp.refresh_from_db()
    assert (damp.fix_answer, damp.status) == ("no", "open")  # the late No still counts


def test_two_issues_resolved_together_each_answer_by_its_own_button(resolved, home, tenant_says):
    second = IssueFactory(
        organization=home, property=resolved.property, conversation=resolved.conversation, reference="R2611-DEF456"
    )
    issue_status_change(issue=second, status="resolved", actor=UserFactory())
    tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-ABC123", "Yes"))  # the first question's button
    tenant_says("4")  # the rating question is the latest now
    resolved.refresh_from_db()
    second.refresh_from_db()
    assert (resolved.fix_answer, resolved.rating, second.fix_answer) == ("yes", 4, "")
    tenant_says("No", extra=tap("issue_fixed:no:R2611-DEF456", "No"))
    second.refresh_from_db()
    assert (second.status, second.fix_answer) == ("open", "no")


def test_a_payload_never_offered_in_this_conversation_is_refused(resolved, home, tenant_says):
    # Resolved, but nobody asked: a forged tap must not answer it.
    other = IssueFactory(
        organization=home, property=resolved.property, conversation=resolved.conversation, reference="R2611-ZZZ999"
    )
    Issue.objects.filter(pk=other.pk).update(status="resolved")
    tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-ZZZ999", "Yes"))
    other.refresh_from_db()
    assert other.fix_answer == "" and other.status == "resolved"


def test_the_next_text_is_not_taken_as_a_comment_while_an_emergency_stands(resolved, tenant_says):
    tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-ABC123", "Yes"))
    tenant_says("5")
    conversation = conversation_for()
    conversation.emergency_category = "gas"
    conversation.save(update_fields=["emergency_category"])
    tenant_says("i can smell gas in the hall now")
    resolved.refresh_from_db()
    assert resolved.rating_comment == ""


def test_an_answer_after_the_landlord_reopened_changes_nothing_and_goes_to_the_model(resolved, tenant_says):
    issue_status_change(issue=resolved, status="open", actor=UserFactory())
    tenant_says("Yes", extra=tap("issue_fixed:yes:R2611-ABC123", "Yes"))
    resolved.refresh_from_db()
    assert (resolved.status, resolved.fix_answer) == ("open", "")
    turn = Turn.objects.filter(conversation=resolved.conversation).latest("id")
    assert turn.outcome != "issue_fixed"


def test_the_answer_is_recorded_with_the_assistant_off_and_while_a_person_has_taken_over(
    resolved, tenant_says, settings
):
    settings.USE_LLM_ORCHESTRATION = False
    conversation = resolved.conversation
    conversation.bot_paused = True
    conversation.save(update_fields=["bot_paused"])
    tenant_says("yes")  # the choice's title, typed
    resolved.refresh_from_db()
    assert resolved.fix_answer == "yes"


def test_the_question_is_in_the_tenants_language_and_its_title_answers_it(home, tenant_says):
    tenant_says("Dzień dobry, mam problem z kranem w kuchni")
    conversation = conversation_for()
    conversation.language = "pl"
    conversation.save(update_fields=["language"])
    issue = IssueFactory(
        organization=home, property=home.properties.get(code="FLAT-1"), conversation=conversation, reference="R-PL1"
    )
    issue_status_change(issue=issue, status="resolved", actor=UserFactory())
    question = Message.objects.get(conversation=conversation, raw_payload__purpose="issue_fixed")
    assert "Czy jest naprawiona?" in question.body
    tenant_says("Nie")
    issue.refresh_from_db()
    assert issue.fix_answer == "no"


def test_a_resolved_issue_nobody_answers_is_closed_after_the_configured_days(resolved, settings):
    settings.ISSUE_FIX_CLOSE_DAYS = 7
    with time_machine.travel(timezone.now() + datetime.timedelta(days=6)):
        assert fix_unanswered_close() == 0
    with time_machine.travel(timezone.now() + datetime.timedelta(days=7, minutes=1)):
        assert fix_unanswered_close() == 1
        assert fix_unanswered_close() == 0
    resolved.refresh_from_db()
    assert (resolved.status, resolved.fix_answer) == ("closed", "none")
    assert "No answer to 'Is it fixed?' in 7 days." in IssueUpdate.objects.filter(issue=resolved).latest("id").body


def test_an_issue_entered_by_hand_asks_in_the_tenants_conversation_and_its_answer_counts(home, tenant_says):
    tenant_says("hello")
    tenant = home.tenants.get(phone=PHONE)
    issue = IssueFactory(
        organization=home, property=home.properties.get(code="FLAT-1"), tenant=tenant, reference="R-HAND1"
    )
    issue_status_change(issue=issue, status="resolved", actor=UserFactory())
    assert Message.objects.get(raw_payload__purpose="issue_fixed").conversation == conversation_for()
    tenant_says("No", extra=tap("issue_fixed:no:R-HAND1", "No"))
    issue.refresh_from_db()
    assert (issue.status, issue.fix_answer) == ("open", "no")


def test_an_issue_with_no_conversation_at_all_gets_no_question(home):
    tenant = home.tenants.get(phone=PHONE)
    issue = IssueFactory(organization=home, property=home.properties.get(code="FLAT-1"), tenant=tenant)
    issue_status_change(issue=issue, status="resolved", actor=UserFactory())
    issue.refresh_from_db()
    assert issue.fix_asked_at is None
    assert Message.objects.get(direction="outbound").raw_payload["purpose"] == "issue_update"
