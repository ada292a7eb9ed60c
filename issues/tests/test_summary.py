"""The written summary (Awaab's Law): the draft built from the issue, sending
it to the tenant once (WhatsApp through the real twilio SDK against the stub,
and email), the clock it meets, and its admin page."""

from __future__ import annotations

import datetime
import json
import threading

import pytest
import time_machine
from django.core import mail
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from config.tasks import OUTBOUND_SEND
from conversations.delivery import message_send
from conversations.models import Message
from issues.deadlines import AWAAB_POLICY, clock_meet, issue_clocks_sync
from issues.models import DeadlinePolicy, Issue, IssueClock, IssueUpdate
from issues.status import issue_status_change
from issues.summary import (
    SUMMARY_HISTORY_PREFIX,
    SUMMARY_MAX_CHARS,
    SUMMARY_PART_MAX_CHARS,
    SummaryError,
    summary_draft,
    summary_send,
)
from properties.tests.factories import IssueFactory, OrganizationFactory, TenantFactory, UserFactory
from properties.tests.persona import ConversationFactory, alice_and_bob

SUMMARY_TEMPLATE = "HX" + "5" * 32
UTC = datetime.UTC
REPORTED = datetime.datetime(2026, 5, 28, 9, 0, tzinfo=UTC)  # Thursday 28 May 2026, 10:00 in London
INVESTIGATED = datetime.datetime(2026, 6, 1, 10, 0, tzinfo=UTC)  # Monday 1 June 2026
SENT = datetime.datetime(2026, 6, 2, 14, 0, tzinfo=UTC)


def awaab(organization):
    DeadlinePolicy.objects.filter(organization=organization).update(active=False)
    DeadlinePolicy.objects.filter(organization=organization, name=AWAAB_POLICY).update(active=True)


def damp_issue(*, email="amira@example.com", conversation=True, tenant=True, username="sam", reference="R2605-DAMP01"):
    """A damp and mould report under Awaab's Law, its investigation recorded
    with a note, the landlord's own note on the history, and a status change
    whose note went to the tenant already."""
    organization = OrganizationFactory(name="Harbour Lettings", notification_email="office@example.com")
    awaab(organization)
    landlord = UserFactory(username=username)
    phone = "+447700900123"
    the_tenant = TenantFactory(organization=organization, phone=phone, email=email) if tenant else None
    chat = (
        ConversationFactory(organization=organization, phone=phone, last_inbound_at=REPORTED) if conversation else None
    )
    with time_machine.travel(REPORTED, tick=False):
        issue = IssueFactory(
            organization=organization,
            tenant=the_tenant,
            conversation=chat,
            reference=reference,
            title="Black mould in the bedroom",
            description="Black mould is spreading on the ceiling above the bed.",
            location="bedroom ceiling",
            category="damp_mould",
            urgency="urgent",
            photo_findings="Black mould patches about 40 cm across near the window.",
        )
        issue_clocks_sync(issue=issue)
    with time_machine.travel(REPORTED + datetime.timedelta(hours=1), tick=False):
        issue_status_change(issue=issue, status="acknowledged", actor=landlord, note="A surveyor will call you.")
        IssueUpdate.objects.create(
            issue=issue, author="landlord", user=landlord, body="Extractor fan in the bathroom is blocked."
        )
        # What dispatch writes when a job is taken back: the reason is the agency's, not the tenant's to read.
        IssueUpdate.objects.create(
            issue=issue, author="landlord", user=landlord, body="Job withdrawn from Damp Co by ana. Quote too high."
        )
    with time_machine.travel(INVESTIGATED, tick=False):
        clock_meet(
            issue=issue,
            kind="investigated",
            actor=landlord,
            note="Surveyor found condensation behind the wardrobe.",
        )
    issue.refresh_from_db()
    return issue, landlord


@pytest.fixture
def damp(db):
    return damp_issue()


def summary_updates(issue):
    return list(IssueUpdate.objects.filter(issue=issue, body__startswith=SUMMARY_HISTORY_PREFIX))


def summary_messages(issue):
    return list(Message.objects.filter(organization=issue.organization, raw_payload__purpose="written_summary"))


# --- the draft --------------------------------------------------------------------


def test_the_draft_says_what_was_reported_found_and_will_be_done_by_when_in_local_time(damp):
    issue, _ = damp
    draft = summary_draft(issue=issue)

    assert draft.startswith(
        "Written summary of your repair R2605-DAMP01 (Black mould in the bedroom), from Harbour Lettings."
    )
    assert "On Thursday 28 May 2026 you reported: Black mould in the bedroom, bedroom ceiling." in draft
    assert '"Black mould is spreading on the ceiling above the bed."' in draft
    # The findings: the photos, the investigation's date and note, the landlord's own note.
    assert "We investigated the problem on Monday 1 June 2026." in draft
    assert "From your photos: Black mould patches about 40 cm across near the window." in draft
    assert "- Investigated: Surveyor found condensation behind the wardrobe." in draft
    assert "- Extractor fan in the bathroom is blocked." in draft
    # Works start within 5 working days of the investigation: the end of Monday 8 June in London
    # (22:59 UTC), and the summary's own clock is not an action.
    assert "- We will start the repair work by the end of Monday 8 June 2026." in draft
    assert "written summary" not in draft.split("What we will do", 1)[1].lower()
    # The services' own lines and a note already sent with a status change stay out.
    assert "Status" not in draft and "surveyor will call" not in draft and "Quote too high" not in draft
    assert "reply to this message and quote R2605-DAMP01" in draft
    assert "becomes unwell" in draft
    assert draft == summary_draft(issue=issue)  # deterministic
    assert len(draft) <= SUMMARY_MAX_CHARS


def test_the_drafts_due_times_are_in_the_organizations_zone_not_utc(db):
    organization = OrganizationFactory(timezone="Europe/London")
    awaab(organization)
    # An emergency under Awaab's Law: made safe within 24 hours of the report.
    with time_machine.travel(datetime.datetime(2026, 7, 1, 23, 30, tzinfo=UTC), tick=False):
        issue = IssueFactory(organization=organization, urgency="emergency", category="plumbing")
        issue_clocks_sync(issue=issue)
    draft = summary_draft(issue=issue)
    # 23:30 UTC on 2 July is 00:30 on 3 July in London (BST).
    assert "- We will make your home safe by 00:30 on Friday 3 July 2026." in draft
    assert "- We will investigate the problem by 00:30 on Friday 3 July 2026." in draft
    assert "On Thursday 2 July 2026 you reported" in draft  # 00:30 local on the 2nd
    assert "23:30" not in draft


def test_a_draft_with_nothing_found_yet_says_so_and_long_words_are_cut_to_fit(db):
    issue = IssueFactory(description="mould " * 2000, photo_findings="")
    for n in range(6):
        IssueUpdate.objects.create(issue=issue, author="landlord", user=UserFactory(), body=f"note {n} " * 200)
    draft = summary_draft(issue=issue)
    assert len(draft) <= SUMMARY_MAX_CHARS
    assert "note 0" not in draft and "note 5" in draft  # the newest notes only
    issue = IssueFactory(photo_findings="")
    assert "We are still looking into the problem" in summary_draft(issue=issue)


# --- sending ----------------------------------------------------------------------


def test_sending_records_it_meets_the_clock_queues_one_whatsapp_message_and_one_email(
    damp, settings, queued, twilio_stub, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE, "generic": "HX" + "9" * 32}
    issue, landlord = damp
    text = summary_draft(issue=issue) + "\n\nSigned, Sam"
    with time_machine.travel(SENT, tick=False), django_capture_on_commit_callbacks(execute=True):
        sent = summary_send(issue=issue, text=text, user=landlord)

    [update] = summary_updates(issue)
    assert update == sent.update and update.user == landlord and update.author == "landlord"
    assert update.body.endswith(f"\n\n{text}")
    [message] = summary_messages(issue)
    assert sent.messages == [message] and f"message {message.pk}" in update.body
    assert message.body == text and message.author == "landlord" and message.status == "pending"
    assert message.conversation == issue.conversation
    assert queued == [(OUTBOUND_SEND, [[message.pk]], "outbound")]  # one task, after commit
    [email] = mail.outbox
    assert email.to == ["amira@example.com"] and email.body == text and email.reply_to == ["office@example.com"]
    assert "R2605-DAMP01" in email.subject

    clock = IssueClock.objects.get(issue=issue, kind="summary_sent")
    assert clock.met_at == SENT and clock.met_by == landlord and sent.clock_met
    assert IssueUpdate.objects.filter(issue=issue, body__startswith="Written summary sent recorded by sam").count() == 1

    # The tenant last wrote days ago: it goes as the approved template, the text its one variable.
    message_send(message_id=message.pk)
    [request] = twilio_stub.sent
    assert request["ContentSid"] == SUMMARY_TEMPLATE
    assert json.loads(request["ContentVariables"]) == {"1": " ".join(text.split())}  # WhatsApp: one line


def test_sending_the_same_summary_twice_sends_it_once_and_says_so(
    damp, settings, queued, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE}
    issue, landlord = damp
    text = summary_draft(issue=issue)
    with django_capture_on_commit_callbacks(execute=True):
        summary_send(issue=issue, text=text, user=landlord)
    with (
        pytest.raises(SummaryError, match="sent to the tenant already"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        summary_send(issue=issue, text=f"  {text}\r\n", user=landlord)  # the browser's line ends
    assert len(summary_updates(issue)) == 1
    assert len(summary_messages(issue)) == 1
    assert len(queued) == 1 and len(mail.outbox) == 1
    assert IssueUpdate.objects.filter(issue=issue, body__contains="Written summary sent recorded by").count() == 1

    # An updated summary is a new one: it goes, and the clock (met already) is left alone.
    met_at = IssueClock.objects.get(issue=issue, kind="summary_sent").met_at
    again = summary_send(issue=issue, text=text + "\nUpdate: the fan is fixed.", user=landlord)
    assert not again.clock_met
    assert IssueClock.objects.get(issue=issue, kind="summary_sent").met_at == met_at
    assert len(summary_updates(issue)) == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("owed", [True, False], ids=["summary-clock-running", "no-summary-clock"])
def test_a_double_click_two_requests_at_once_sends_once(settings, queued, owed):
    """Two sends of the same text at the same moment, each on its own
    connection: the issue's row lock makes the second wait and see the first
    (also where no clock is met, whose own lock would otherwise serialise them)."""
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE}
    issue, landlord = damp_issue()
    if not owed:
        IssueClock.objects.filter(issue=issue, kind="summary_sent").delete()
    queued.clear()  # the status change's message to the tenant
    text = summary_draft(issue=issue)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def click():
        barrier.wait()
        try:
            summary_send(issue=issue, text=text, user=landlord)
            outcomes.append("sent")
        except SummaryError as error:
            outcomes.append(str(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes)[-1] == "sent" and "already" in sorted(outcomes)[0], outcomes
    assert len(summary_messages(issue)) == 1
    assert len(queued) == 1 and len(mail.outbox) == 1
    assert len(summary_updates(issue)) == 1
    if owed:
        assert IssueClock.objects.get(issue=issue, kind="summary_sent").met_at is not None


def test_an_issue_without_a_tenant_or_conversation_gives_a_clear_error_and_changes_nothing(db):
    issue, landlord = damp_issue(conversation=False, tenant=False)
    with pytest.raises(SummaryError, match="no tenant or conversation to send the summary to"):
        summary_send(issue=issue, text="Summary", user=landlord)
    assert not summary_updates(issue) and not summary_messages(issue) and not mail.outbox
    assert IssueClock.objects.get(issue=issue, kind="summary_sent").met_at is None


def test_empty_and_too_long_texts_are_refused(damp):
    issue, landlord = damp
    with pytest.raises(SummaryError, match="empty"):
        summary_send(issue=issue, text=" \n ", user=landlord)
    with pytest.raises(SummaryError, match=f"at most {SUMMARY_MAX_CHARS}"):
        summary_send(issue=issue, text="x" * (SUMMARY_MAX_CHARS + 1), user=landlord)
    assert not summary_updates(issue) and not summary_messages(issue)


def test_a_long_summary_goes_as_numbered_messages_each_fitting_a_template_in_one_task(
    damp, settings, queued, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE}
    issue, landlord = damp
    text = " ".join(f"Sentence {n} of the findings." for n in range(90))  # about 2 500 characters
    with django_capture_on_commit_callbacks(execute=True):
        sent = summary_send(issue=issue, text=text, user=landlord)
    bodies = [m.body for m in sent.messages]
    assert len(bodies) == 3
    assert [b[:6] for b in bodies] == ["(1/3) ", "(2/3) ", "(3/3) "]
    assert all(len(b) <= SUMMARY_PART_MAX_CHARS for b in bodies)
    assert " ".join(b[6:] for b in bodies) == text
    assert queued == [(OUTBOUND_SEND, [[m.pk for m in sent.messages]], "outbound")]  # in order, one task


def test_an_opted_out_tenant_gets_it_by_email_only_and_without_email_it_is_refused(damp, settings):
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE}
    issue, landlord = damp
    issue.conversation.opted_out_at = timezone.now()
    issue.conversation.save(update_fields=["opted_out_at"])

    no_email, _ = damp_issue(email="", username="kim", reference="R2605-DAMP02")
    no_email.conversation.opted_out_at = timezone.now()
    no_email.conversation.save(update_fields=["opted_out_at"])
    with pytest.raises(SummaryError, match=r"opted out.*no email address"):
        summary_send(issue=no_email, text="Summary", user=landlord)
    assert not summary_updates(no_email) and not summary_messages(no_email)
    assert IssueClock.objects.get(issue=no_email, kind="summary_sent").met_at is None

    sent = summary_send(issue=issue, text="Summary", user=landlord)
    assert sent.messages == [] and "opted out" in sent.whatsapp_refusal
    assert not summary_messages(issue)
    [update] = summary_updates(issue)
    assert "by email to amira@example.com; not over WhatsApp: the tenant opted out" in update.body
    assert sent.clock_met


def test_outside_the_window_without_a_template_only_email_can_carry_it(db, settings):
    settings.WHATSAPP_TEMPLATES = {}
    issue, landlord = damp_issue(email="")
    with pytest.raises(SummaryError, match="outside WhatsApp's 24-hour window and no approved template"):
        summary_send(issue=issue, text="Summary", user=landlord)
    # Inside the window free text needs no template.
    issue.conversation.last_inbound_at = timezone.now()
    issue.conversation.save(update_fields=["last_inbound_at"])
    assert len(summary_send(issue=issue, text="Summary", user=landlord).messages) == 1


def test_an_issue_entered_by_hand_goes_to_the_conversation_of_the_tenants_number(db, settings):
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE}
    issue, landlord = damp_issue(conversation=False)
    chat = ConversationFactory(organization=issue.organization, phone=issue.tenant.phone)
    [message] = summary_send(issue=issue, text="Summary", user=landlord).messages
    assert message.conversation == chat and message.to_address == f"whatsapp:{issue.tenant.phone}"


# --- the admin --------------------------------------------------------------------


@pytest.fixture
def worlds(db, client):
    alice, bob = alice_and_bob()
    client.force_login(alice.user)
    return alice, bob


def test_the_issue_page_links_the_summary_page_highlighted_while_it_is_owed(client, worlds):
    alice, _ = worlds
    change = reverse("admin:issues_issue_change", args=[alice.routine.pk])
    summary = reverse("admin:issues_issue_summary", args=[alice.routine.pk])
    page = client.get(change).content.decode()
    assert f'href="{summary}" class="written-summary"' in page and "Written summary…</a>" in page

    awaab(alice.organization)
    Issue.objects.filter(pk=alice.routine.pk).update(category="damp_mould")
    alice.routine.refresh_from_db()
    issue_clocks_sync(issue=alice.routine)
    clock_meet(issue=alice.routine, kind="investigated", actor=alice.user)
    page = client.get(change).content.decode()
    assert f'href="{summary}" class="written-summary written-summary-owed"' in page
    assert "Written summary… (owed)</a>" in page
    assert f'href="{summary}">Write and send…' in page  # beside Record… in the Deadlines table


def test_the_summary_page_shows_the_draft_and_sends_the_edited_text_once(client, worlds, settings, queued):
    settings.WHATSAPP_TEMPLATES = {"written_summary": SUMMARY_TEMPLATE}
    alice, _ = worlds
    url = reverse("admin:issues_issue_summary", args=[alice.routine.pk])
    page = client.get(url)
    assert page.status_code == 200
    draft = page.context["form"].initial["text"]
    assert draft == summary_draft(issue=alice.routine)
    assert "Written summary of your repair ALI-0002" in page.content.decode()
    assert "<textarea" in page.content.decode()

    text = draft + "\r\nSam, Alice Lettings"
    response = client.post(url, {"text": text}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("admin:issues_issue_change", args=[alice.routine.pk])
    assert "Written summary of ALI-0002 sent over WhatsApp" in response.content.decode()
    [update] = summary_updates(alice.routine)
    assert update.user == alice.user and update.body.endswith("\nSam, Alice Lettings")
    assert len(summary_messages(alice.routine)) == 1

    again = client.post(url, {"text": text})
    assert again.status_code == 200 and "sent to the tenant already" in again.content.decode()
    assert len(summary_messages(alice.routine)) == 1

    empty = client.post(url, {"text": "   "})
    assert empty.status_code == 200 and "This field is required" in empty.content.decode()


def test_another_organizations_summary_page_is_not_found_and_sends_nothing(client, worlds):
    _, bob = worlds
    url = reverse("admin:issues_issue_summary", args=[bob.routine.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"text": "Hello Bob's tenant"}).status_code == 404
    assert not summary_updates(bob.routine) and not summary_messages(bob.routine)
