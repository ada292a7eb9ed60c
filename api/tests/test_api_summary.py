"""The written summary through the API: the draft, sending it once, the
errors, and another organization's issue."""

import datetime

import pytest
import time_machine
from django.core import mail

from config.tasks import OUTBOUND_SEND
from conversations.models import Message
from issues.deadlines import AWAAB_POLICY, clock_meet, issue_clocks_sync
from issues.models import DeadlinePolicy, IssueClock, IssueUpdate
from issues.summary import SUMMARY_MAX_CHARS
from properties.tests.factories import IssueFactory

pytestmark = pytest.mark.django_db

INVESTIGATED = datetime.datetime(2026, 6, 1, 10, 0, tzinfo=datetime.UTC)  # Monday 1 June 2026


def owed(world):
    """Alice's routine issue becomes damp and mould under Awaab's Law, investigated."""
    DeadlinePolicy.objects.filter(organization=world.organization).update(active=False)
    DeadlinePolicy.objects.filter(organization=world.organization, name=AWAAB_POLICY).update(active=True)
    issue = world.routine
    issue.category = "damp_mould"
    issue.photo_findings = "Mould on the window frame."
    issue.save(update_fields=["category", "photo_findings"])
    issue.created_at = INVESTIGATED - datetime.timedelta(days=3)
    issue.save(update_fields=["created_at"])
    with time_machine.travel(INVESTIGATED, tick=False):
        issue_clocks_sync(issue=issue)
        clock_meet(issue=issue, kind="investigated", actor=world.user)
    return issue


def test_the_draft_has_the_findings_and_the_due_times_in_local_time(alice_api, worlds):
    alice, _ = worlds
    issue = owed(alice)
    response = alice_api.get(f"/api/v1/issues/{issue.pk}/summary/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "From your photos: Mould on the window frame." in body["draft"]
    assert "We investigated the problem on Monday 1 June 2026." in body["draft"]
    # 5 working days: the end of Monday 8 June in London, 22:59:59 UTC.
    assert "We will start the repair work by the end of Monday 8 June 2026." in body["draft"]
    assert body["owed"] is True
    # 3 working days: the end of Thursday 4 June in London.
    assert datetime.datetime.fromisoformat(body["due_at"]) == datetime.datetime(
        2026, 6, 4, 22, 59, 59, tzinfo=datetime.UTC
    )
    assert body["max_chars"] == SUMMARY_MAX_CHARS
    assert body["whatsapp"] == alice.tenant.phone and body["email"] == ""
    assert body["last_sent_at"] is None


def test_sending_meets_the_clock_once_and_a_second_post_is_refused(
    alice_api, worlds, queued, django_capture_on_commit_callbacks
):
    alice, _ = worlds
    issue = owed(alice)
    url = f"/api/v1/issues/{issue.pk}/summary/"
    text = alice_api.get(url).json()["draft"]
    sent_at = INVESTIGATED + datetime.timedelta(days=1)
    with time_machine.travel(sent_at, tick=False), django_capture_on_commit_callbacks(execute=True):
        response = alice_api.post(url, {"text": text}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    [message] = Message.objects.filter(raw_payload__purpose="written_summary")
    assert body["messages"] == [message.pk] and message.body == text
    assert body["clock_met"] is True and body["whatsapp_not_sent"] == "" and body["emailed_to"] == ""
    summary_clock = next(c for c in body["issue"]["clocks"] if c["kind"] == "summary_sent")
    assert summary_clock["state"] == "met"  # in time
    assert datetime.datetime.fromisoformat(summary_clock["met_at"]) == sent_at
    [line] = [u for u in body["issue"]["updates"] if u["body"].startswith("Written summary sent to the tenant")]
    assert line["body"].endswith(f"\n\n{text}") and f"message {message.pk}" in line["body"]
    assert (
        IssueUpdate.objects.get(issue=issue, body__startswith="Written summary sent to the tenant").user == alice.user
    )
    assert queued == [(OUTBOUND_SEND, [[message.pk]], "outbound")]  # after commit
    assert not mail.outbox  # Alice's tenant has no email

    with django_capture_on_commit_callbacks(execute=True):
        again = alice_api.post(url, {"text": text}, format="json")
    assert again.status_code == 400
    assert "sent to the tenant already" in again.json()["error"]["fields"]["text"][0]
    assert Message.objects.filter(raw_payload__purpose="written_summary").count() == 1
    assert len(queued) == 1
    assert IssueClock.objects.get(issue=issue, kind="summary_sent").met_by == alice.user
    assert alice_api.get(url).json()["owed"] is False


def test_invalid_texts_are_400_with_the_reason(alice_api, worlds):
    alice, _ = worlds
    url = f"/api/v1/issues/{alice.routine.pk}/summary/"
    assert alice_api.post(url, {"text": "  "}, format="json").status_code == 400
    assert alice_api.post(url, {}, format="json").status_code == 400
    too_long = alice_api.post(url, {"text": "x" * (SUMMARY_MAX_CHARS + 1)}, format="json")
    assert (
        too_long.status_code == 400 and f"at most {SUMMARY_MAX_CHARS}" in too_long.json()["error"]["fields"]["text"][0]
    )
    extra = alice_api.post(url, {"text": "Hello", "to": "+447700900999"}, format="json")
    assert extra.status_code == 400 and "to" in extra.json()["error"]["fields"]
    assert not Message.objects.filter(raw_payload__purpose="written_summary").exists()


def test_an_issue_without_a_tenant_or_conversation_is_a_clear_400(alice_api, worlds):
    alice, _ = worlds
    lonely = IssueFactory(organization=alice.organization, property=alice.property)
    response = alice_api.post(f"/api/v1/issues/{lonely.pk}/summary/", {"text": "Summary"}, format="json")
    assert response.status_code == 400
    assert "no tenant or conversation" in response.json()["error"]["fields"]["text"][0]
    assert alice_api.get(f"/api/v1/issues/{lonely.pk}/summary/").json()["whatsapp"] == ""


def test_another_organizations_issue_is_not_found(bob_api, worlds):
    alice, _ = worlds
    issue = owed(alice)
    url = f"/api/v1/issues/{issue.pk}/summary/"
    assert bob_api.get(url).status_code == 404
    assert bob_api.post(url, {"text": "Hello"}, format="json").status_code == 404
    assert not Message.objects.filter(raw_payload__purpose="written_summary").exists()
    assert IssueClock.objects.get(issue=issue, kind="summary_sent").met_at is None
