"""Booking the visit over WhatsApp, through the signed webhook: the
contractor proposes times (tapped from their working hours or typed), the
tenant picks one, both get the calendar entry, a reminder the day before,
and either side can report a missed visit."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.core import mail
from django.urls import reverse

from conversations.models import Conversation, Message
from issues.appointments import (
    AppointmentError,
    Window,
    appointments_check,
    ics_link,
    job_reply,
    slot_propose,
    slots_free,
    visit_pick,
    window_text,
)
from issues.dispatch import job_offer
from issues.models import Appointment, IssueUpdate, Job
from issues.status import issue_status_change
from orchestration.testing.fixtures import PHONE
from properties.models import Contractor, Tenant
from properties.tests.factories import IssueFactory
from properties.working_time import zone_get

PLUMBER = "+447700900701"
LANDLORD = "+447700900555"
WEDNESDAY = datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC)
LONDON = zone_get("Europe/London")


@pytest.fixture(autouse=True)
def _classifier_off(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


@pytest.fixture
def clock():
    with time_machine.travel(WEDNESDAY, tick=False) as traveller:
        yield traveller


@pytest.fixture
def plumber(home):
    home.contact_whatsapp = LANDLORD
    home.timezone = "Europe/London"
    home.save()
    return Contractor.objects.create(
        organization=home,
        name="Leeds Plumbing",
        trades=["plumbing"],
        whatsapp=PLUMBER,
        email="jobs@leedsplumbing.example",
    )


@pytest.fixture
def accepted(home, plumber, clock):
    """A leak reported in the tenant's conversation, its job accepted."""
    Tenant.objects.filter(phone=PHONE).update(email="amira@example.com")
    conversation = Conversation.objects.create(organization=home, phone=PHONE, whatsapp_id=f"whatsapp:{PHONE}")
    issue = IssueFactory(
        organization=home,
        property=home.properties.get(code="FLAT-1"),
        tenant=Tenant.objects.get(phone=PHONE),
        conversation=conversation,
        reference="R2611-LEAK01",
        title="Leak under the sink",
    )
    job = job_offer(issue=issue, contractor=plumber)
    job_reply(conversation=Conversation.objects.get(phone=PLUMBER), job_id=job.pk, accept=True)
    return job


def latest(phone: str) -> Message:
    return Message.objects.filter(to_address=f"whatsapp:{phone}").latest("id")


def visit_over(say, clock) -> None:
    """Friday 08:00-10:00 booked, its window passed, both asked how it went."""
    say("friday 8am", phone=PLUMBER)
    tap(say, PHONE, latest(PHONE).raw_payload["choices"][0])
    clock.move_to(datetime.datetime(2026, 11, 27, 10, 30, tzinfo=datetime.UTC))
    appointments_check()


def tap(say, phone: str, choice: dict) -> list[str]:
    return say(choice["title"], phone=phone, extra={"ButtonPayload": choice["payload"], "ButtonText": choice["title"]})


def test_the_list_is_half_days_of_the_contractors_working_days_without_holidays_or_booked_visits(plumber, home):
    issue = IssueFactory(organization=home, property=home.properties.get(code="FLAT-1"))
    home.timezone, home.country = "Europe/London", "GB"
    plumber.work_starts, plumber.work_ends = datetime.time(8), datetime.time(17)
    christmas_eve = datetime.datetime(2026, 12, 23, 10, 0, tzinfo=datetime.UTC)  # a Wednesday
    windows = slots_free(plumber, issue=issue, now=christmas_eve)
    texts = [window_text(w, LONDON) for w in windows]
    # Christmas (Fri), the weekend and Boxing Day's substitute (Mon 28) are skipped.
    assert texts[:4] == [
        "Thu 24 Dec 08:00-12:00",
        "Thu 24 Dec 12:00-17:00",
        "Tue 29 Dec 08:00-12:00",
        "Tue 29 Dec 12:00-17:00",
    ]
    assert len(texts) == 9
    plumber.working_days = [1, 5]  # Tuesdays and Saturdays
    weekend_worker = slots_free(plumber, issue=issue, now=christmas_eve)
    assert {w.starts.astimezone(LONDON).weekday() for w in weekend_worker} == {1, 5}
    assert window_text(weekend_worker[0], LONDON) == "Tue 29 Dec 08:00-12:00"  # Boxing Day, a Saturday, skipped


def test_accept_asks_for_times_then_the_tenant_picks_and_both_get_the_calendar_entry(
    accepted, tenant_says, client, django_capture_on_commit_callbacks
):
    offer = latest(PLUMBER)
    assert offer.raw_payload["purpose"] == "appointment_slots"
    choices = offer.raw_payload["choices"]
    assert [c["title"] for c in choices[:3]] == [
        "Thu 26 Nov 08:00-12:00",
        "Thu 26 Nov 12:00-17:00",
        "Fri 27 Nov 08:00-12:00",
    ]
    tap(tenant_says, PLUMBER, choices[0])
    again = latest(PLUMBER)  # noted, and the list again with "Send 1 to tenant" first
    assert again.body.startswith("Noted: Thu 26 Nov 08:00-12:00.")
    assert again.raw_payload["choices"][0]["title"] == "Send 1 to tenant"
    assert "Thu 26 Nov 08:00-12:00" not in [c["title"] for c in again.raw_payload["choices"]]
    tap(tenant_says, PLUMBER, again.raw_payload["choices"][2])  # Fri 27 Nov 08:00-12:00
    tenant_says("1", phone=PLUMBER)  # typed: "Send 2 to tenant"
    question = latest(PHONE)
    assert question.raw_payload["purpose"] == "appointment_offer"
    assert [c["title"] for c in question.raw_payload["choices"]] == [
        "Thu 26 Nov 08:00-12:00",
        "Fri 27 Nov 08:00-12:00",
        "None of these",
    ]
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        replies = tap(tenant_says, PHONE, question.raw_payload["choices"][1])
    assert replies[0].startswith("Booked: Leeds Plumbing will come Fri 27 Nov 08:00-12:00 for R2611-LEAK01.")
    booked = Appointment.objects.get(state="booked")
    assert Appointment.objects.filter(state="not_chosen").count() == 1
    assert latest(PLUMBER).body.startswith("Booked: R2611-LEAK01 at Flat 1, 12 Harbour Street, Leeds, Fri 27 Nov")
    booked.job.issue.refresh_from_db()
    assert booked.job.issue.status == "scheduled" and booked.job.issue.scheduled_for == datetime.date(2026, 11, 27)
    # One each (the landlord's notice is the other email): neither sees the other's address.
    emails = [m for m in mail.outbox if m.attachments]
    assert sorted(m.to for m in emails) == [["amira@example.com"], ["jobs@leedsplumbing.example"]]
    email = emails[0]
    [(_, ics, kind)] = email.attachments
    assert kind == "text/calendar" and "DTSTART:20261127T080000Z" in ics and "Leak under the sink" in ics
    link = replies[0].rsplit(" ", 1)[-1]
    response = client.get(link[link.index("/visits/") :])
    assert response.status_code == 200 and response["Content-Type"].startswith("text/calendar")
    assert b"DTEND:20261127T120000Z" in response.content
    history = list(IssueUpdate.objects.filter(issue=booked.job.issue).values_list("body", flat=True))
    assert "Visit booked with Leeds Plumbing: Fri 27 Nov 08:00-12:00 (the tenant's pick)." in history
    # A second tap on the other time changes nothing.
    tap(tenant_says, PHONE, question.raw_payload["choices"][0])
    assert Appointment.objects.filter(state="booked").count() == 1


def test_typed_times_go_to_the_tenant_and_unreadable_text_goes_to_the_landlord(accepted, tenant_says):
    tenant_says("sorry mate cant say yet, van is in the garage", phone=PLUMBER)
    assert latest(LANDLORD).body.startswith("Message from Leeds Plumbing: sorry mate")
    assert latest(PLUMBER).raw_payload["purpose"] == "appointment_slots"  # the list again
    assert not Appointment.objects.exists()
    tenant_says("I can do tues 9 or weds 2pm", phone=PLUMBER)
    question = latest(PHONE)
    assert [c["title"] for c in question.raw_payload["choices"]] == [
        "Tue 1 Dec 09:00-11:00",
        "Wed 2 Dec 14:00-16:00",
        "None of these",
    ]


def test_a_contractors_message_of_several_lines_reaches_the_landlord_whole(
    accepted, tenant_says, home, django_capture_on_commit_callbacks
):
    home.notification_email = "office@harbour.example"
    home.save()
    words = "Hi\nCan't get in, the key safe code is wrong. " + "Tried the side gate too, locked. " * 6
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        tenant_says(words, phone=PLUMBER)
    [email] = mail.outbox  # Django refuses a subject with a line break: this was never sent
    assert email.subject.startswith("Message from Leeds Plumbing: Hi Can't get in") and "\n" not in email.subject
    assert "the key safe code is wrong" in email.body
    assert latest(LANDLORD).body.endswith("Tried the side gate too, locked.")  # the whole text, not 120 characters


def test_a_contractor_made_inactive_still_reaches_dispatch_about_the_job_they_hold(accepted, tenant_says, plumber):
    plumber.active = False
    plumber.save()
    tenant_says("running late, there by 3", phone=PLUMBER)
    assert latest(LANDLORD).body == "Message from Leeds Plumbing: running late, there by 3"  # not the tenant assistant
    tenant_says("friday 8am", phone=PLUMBER)
    assert latest(PHONE).raw_payload["purpose"] == "appointment_offer"  # their times still go to the tenant


def test_typed_times_replace_times_tapped_before_them(accepted, tenant_says):
    tap(tenant_says, PLUMBER, latest(PLUMBER).raw_payload["choices"][0])  # Thu 26 Nov 08:00-12:00, tapped
    tenant_says("tues 9, weds 2pm or thurs 10", phone=PLUMBER)  # then three typed: the whole proposal
    titles = [c["title"] for c in latest(PHONE).raw_payload["choices"]]
    assert titles == ["Thu 26 Nov 10:00-12:00", "Tue 1 Dec 09:00-11:00", "Wed 2 Dec 14:00-16:00", "None of these"]


def test_a_pick_racing_the_landlords_close_books_nothing_and_is_refused_plainly(accepted, tenant_says, monkeypatch):
    """The job is read open, then the landlord closes the issue before the pick
    schedules it: the tenant is told it cannot be done (the turn goes on),
    not left to the fallback that pauses their assistant."""
    import issues.appointments
    from issues.status import IssueStatusError

    tenant_says("friday 8am", phone=PLUMBER)
    pick = latest(PHONE).raw_payload["choices"][0]

    def closed_meanwhile(**kwargs):
        raise IssueStatusError("R2611-LEAK01 is closed; it cannot become scheduled.")

    monkeypatch.setattr(issues.appointments, "issue_status_change", closed_meanwhile)
    with pytest.raises(AppointmentError, match="closed"):
        visit_pick(
            conversation=Conversation.objects.get(phone=PHONE), appointment_id=int(pick["payload"].rsplit(":", 1)[1])
        )
    assert not Appointment.objects.filter(state="booked").exists()


def test_none_of_these_asks_the_contractor_again_and_tells_the_landlord(accepted, tenant_says):
    tenant_says("tomorrow 10am", phone=PLUMBER)
    question = latest(PHONE)
    tap(tenant_says, PHONE, question.raw_payload["choices"][-1])
    assert list(Appointment.objects.values_list("state", flat=True)) == ["not_chosen"]
    ask = latest(PLUMBER)
    assert ask.body.startswith("None of those times suits the tenant of R2611-LEAK01.")
    assert ask.raw_payload["purpose"] == "appointment_slots"
    assert "None of Leeds Plumbing's times suited the tenant" in latest(LANDLORD).body


def test_times_the_tenant_never_picks_lapse_and_the_contractor_is_asked_again(accepted, tenant_says, clock):
    tenant_says("thursday 10am or friday 2pm", phone=PLUMBER)
    offer = latest(PHONE)
    assert offer.raw_payload["purpose"] == "appointment_offer"
    clock.move_to(datetime.datetime(2026, 11, 26, 11, 0, tzinfo=datetime.UTC))  # Thursday's has started
    assert appointments_check().lapsed == 0
    clock.move_to(datetime.datetime(2026, 11, 27, 14, 30, tzinfo=datetime.UTC))  # so has Friday's
    assert appointments_check().lapsed == 1
    assert appointments_check().lapsed == 0  # once
    assert sorted(Appointment.objects.values_list("state", flat=True)) == ["not_chosen", "not_chosen"]
    ask = latest(PLUMBER)
    assert ask.raw_payload["purpose"] == "appointment_slots"
    assert ask.body.startswith("The tenant of R2611-LEAK01 did not pick any of those times in time.")
    assert "did not pick a visit time" in latest(LANDLORD).body
    tap(tenant_says, PHONE, offer.raw_payload["choices"][1])  # a late tap books nothing
    assert not Appointment.objects.filter(state="booked").exists()
    tenant_says("mon 9am", phone=PLUMBER)  # the contractor can propose again
    assert latest(PHONE).raw_payload["purpose"] == "appointment_offer"


def test_a_reminder_the_day_before_then_a_missed_visit_reported_by_the_tenant(accepted, tenant_says, clock):
    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    clock.move_to(datetime.datetime(2026, 11, 26, 7, 0, tzinfo=datetime.UTC))  # 25 h before
    assert appointments_check().reminded == 0
    clock.move_to(datetime.datetime(2026, 11, 26, 9, 0, tzinfo=datetime.UTC))
    assert appointments_check().reminded == 1
    assert appointments_check().reminded == 0  # once
    assert (
        latest(PHONE).body == latest(PLUMBER).body == "Reminder: the visit for R2611-LEAK01 is Fri 27 Nov 08:00-10:00."
    )
    clock.move_to(datetime.datetime(2026, 11, 27, 10, 30, tzinfo=datetime.UTC))
    checked = appointments_check()
    assert (checked.reminded, checked.asked) == (0, 1)
    assert appointments_check().asked == 0
    question = latest(PHONE)
    assert question.body.startswith("Did Leeds Plumbing come for R2611-LEAK01 (Fri 27 Nov 08:00-10:00)?")
    assert latest(PLUMBER).body.startswith("How did the visit for R2611-LEAK01 at Flat 1, 12 Harbour Street, Leeds")
    tenant_says("2", phone=PHONE)  # No
    appointment = Appointment.objects.get()
    assert appointment.state == "missed" and appointment.missed_by == "tenant"
    assert "Missed visit (Fri 27 Nov 08:00-10:00), reported by the tenant" in latest(LANDLORD).body
    asked = latest(PLUMBER)
    assert asked.body.startswith("The visit of Fri 27 Nov 08:00-10:00 for R2611-LEAK01 was missed.")
    appointment.job.issue.refresh_from_db()
    assert appointment.job.issue.status == "acknowledged" and appointment.job.issue.scheduled_for is None
    # The contractor's own "Fixed" to the earlier question comes too late.
    earlier = Message.objects.filter(to_address=f"whatsapp:{PLUMBER}", raw_payload__purpose="appointment").latest("id")
    tap(tenant_says, PLUMBER, earlier.raw_payload["choices"][0])
    appointment.refresh_from_db()
    assert appointment.state == "missed"


def test_a_visit_nobody_says_happened_is_told_to_the_landlord_once(accepted, tenant_says, clock, settings):
    settings.APPOINTMENT_UNANSWERED_HOURS = 24
    visit_over(tenant_says, clock)  # asked at Friday 10:30
    clock.move_to(datetime.datetime(2026, 11, 28, 10, 0, tzinfo=datetime.UTC))
    assert appointments_check().unanswered == 0
    clock.move_to(datetime.datetime(2026, 11, 28, 10, 31, tzinfo=datetime.UTC))
    assert appointments_check().unanswered == 1
    assert appointments_check().unanswered == 0  # once
    assert "Nobody has said whether Leeds Plumbing's visit of Fri 27 Nov 08:00-10:00 happened" in latest(LANDLORD).body


def test_a_visit_only_the_tenant_confirmed_is_told_to_the_landlord_once_as_waiting_for_the_contractor(
    accepted, tenant_says, clock, settings
):
    """The tenant's Yes, and no word from the contractor on how it went: the
    issue would stay scheduled for a past visit with nobody told."""
    settings.APPOINTMENT_UNANSWERED_HOURS = 24
    visit_over(tenant_says, clock)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])  # Yes, they came
    clock.move_to(datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.UTC))
    assert appointments_check().unanswered == 1
    assert appointments_check().unanswered == 0  # once
    assert (
        "The tenant says Leeds Plumbing came on Fri 27 Nov 08:00-10:00, but Leeds Plumbing has not said how it went"
        in latest(LANDLORD).body
    )


def test_a_visit_of_a_job_since_withdrawn_is_not_told(accepted, tenant_says, clock, settings):
    from issues.dispatch import job_withdraw

    settings.APPOINTMENT_UNANSWERED_HOURS = 24
    visit_over(tenant_says, clock)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])  # Yes, they came
    job_withdraw(job=accepted, reason="Sending someone else.")
    clock.move_to(datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.UTC))
    assert appointments_check().unanswered == 0


def test_a_visit_both_sides_answered_is_not_told(accepted, tenant_says, clock, settings):
    settings.APPOINTMENT_UNANSWERED_HOURS = 24
    visit_over(tenant_says, clock)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])  # Yes, they came
    another = next(c for c in latest(PLUMBER).raw_payload["choices"] if "again" in c["payload"])
    tap(tenant_says, PLUMBER, another)  # Another visit needed
    clock.move_to(datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.UTC))
    assert appointments_check().unanswered == 0


def test_the_contractors_fixed_resolves_the_issue_and_asks_the_tenant_is_it_fixed(accepted, tenant_says, clock):
    visit_over(tenant_says, clock)
    tenant_says("1", phone=PHONE)  # Yes, they came
    how = latest(PLUMBER)
    assert [c["title"] for c in how.raw_payload["choices"]] == ["Fixed", "Another visit", "Couldn't get in"]
    tap(tenant_says, PLUMBER, how.raw_payload["choices"][0])
    accepted.issue.refresh_from_db()
    assert accepted.issue.status == "resolved" and Appointment.objects.get().state == "visited"
    assert latest(PHONE).raw_payload["purpose"] == "issue_fixed"  # "Is it fixed?"
    tap(tenant_says, PLUMBER, how.raw_payload["choices"][0])  # twice: nothing more
    assert Message.objects.filter(raw_payload__purpose="issue_fixed").count() == 1


def test_with_auto_dispatch_a_tenants_not_fixed_brings_the_contractor_back(accepted, tenant_says, clock, home):
    home.auto_dispatch = True
    home.save()
    visit_over(tenant_says, clock)
    tap(tenant_says, PLUMBER, latest(PLUMBER).raw_payload["choices"][0])  # Fixed
    fixed = Message.objects.get(raw_payload__purpose="issue_fixed")
    tap(tenant_says, PHONE, fixed.raw_payload["choices"][1])  # No, it is not fixed
    back = latest(PLUMBER)
    assert back.raw_payload["purpose"] == "appointment_slots"
    assert back.body.startswith("The tenant of R2611-LEAK01 says it is not fixed. When can you come back?")
    tenant_says("mon 9am", phone=PLUMBER)
    assert latest(PHONE).raw_payload["purpose"] == "appointment_offer"


def test_another_visit_asks_the_contractor_for_times_again(accepted, tenant_says, clock):
    visit_over(tenant_says, clock)
    tap(tenant_says, PLUMBER, latest(PLUMBER).raw_payload["choices"][1])  # Another visit
    asked = latest(PLUMBER)
    assert asked.raw_payload["purpose"] == "appointment_slots"
    assert asked.body.startswith("When can you come back to R2611-LEAK01?")
    tenant_says("mon 9am", phone=PLUMBER)
    assert latest(PHONE).raw_payload["purpose"] == "appointment_offer"


def test_resolving_the_issue_cancels_the_visit_to_come_and_tells_both_sides(accepted, tenant_says):
    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    issue_status_change(issue=accepted.issue, status="resolved", tenant_told=False)  # the tenant sorted it
    assert Appointment.objects.get().state == "cancelled"
    assert appointments_check().reminded == 0  # the contractor is not reminded of a visit to a fixed repair
    told = (
        "The visit for R2611-LEAK01 on Fri 27 Nov 08:00 is cancelled: Harbour Lettings has marked the repair as done."
    )
    assert latest(PLUMBER).body == told
    accepted.refresh_from_db()
    assert accepted.state == "accepted"  # who did the work is kept


def test_closing_the_issue_cancels_its_visit_and_the_calendar_entry_says_so(accepted, tenant_says, client):
    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    issue_status_change(issue=accepted.issue, status="closed")
    appointment = Appointment.objects.get()
    assert appointment.state == "cancelled"
    assert appointments_check().reminded == 0
    told = "The visit for R2611-LEAK01 on Fri 27 Nov 08:00 is cancelled: Harbour Lettings has closed the repair."
    assert latest(PHONE).body == latest(PLUMBER).body == told
    link = Message.objects.filter(body__startswith="Booked:", to_address=f"whatsapp:{PHONE}").get().body
    response = client.get(link[link.index("/visits/") :])
    assert b"STATUS:CANCELLED" in response.content and b"drips" not in response.content  # not the tenant's words


def test_withdrawing_the_job_cancels_its_booked_visit_and_tells_both_sides(accepted, tenant_says):
    from issues.dispatch import job_withdraw

    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    job_withdraw(job=accepted)
    assert Appointment.objects.get().state == "cancelled"
    told = "The visit for R2611-LEAK01 on Fri 27 Nov 08:00 is cancelled: Harbour Lettings has withdrawn the job."
    assert latest(PHONE).body == told
    assert latest(PLUMBER).body.startswith("Harbour Lettings has withdrawn job R2611-LEAK01")
    assert appointments_check().reminded == 0


def test_withdrawing_during_the_visits_window_unschedules_the_issue_and_asks_nobody_how_it_went(
    accepted, tenant_says, clock
):
    from issues.dispatch import job_withdraw

    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    visit = Appointment.objects.get(state="booked")
    clock.move_to(datetime.datetime(2026, 11, 27, 9, 30, tzinfo=datetime.UTC))  # they have not come; the window runs
    job_withdraw(job=accepted, reason="No show.")
    visit.refresh_from_db()
    accepted.issue.refresh_from_db()
    assert visit.state == "cancelled"
    assert accepted.issue.status == "acknowledged"  # not scheduled for a visit that is off
    clock.move_to(datetime.datetime(2026, 11, 27, 12, 30, tzinfo=datetime.UTC))
    assert appointments_check().asked == 0  # the withdrawn contractor is not asked "How did it go?"
    with pytest.raises(AppointmentError):
        from issues.appointments import visit_report

        visit_report(conversation=Conversation.objects.get(phone=PLUMBER), appointment_id=visit.pk, outcome="fixed")
    accepted.issue.refresh_from_db()
    assert accepted.issue.status == "acknowledged"


def test_withdrawing_while_the_tenant_has_times_to_pick_tells_the_tenant(accepted, tenant_says):
    from issues.dispatch import job_withdraw

    tenant_says("friday 8am", phone=PLUMBER)
    offer = latest(PHONE)
    assert offer.raw_payload["purpose"] == "appointment_offer"
    job_withdraw(job=accepted)
    assert latest(PHONE).body == (
        "The visit times offered for R2611-LEAK01 are withdrawn: Harbour Lettings has withdrawn the job."
    )
    assert list(Appointment.objects.values_list("state", flat=True)) == ["cancelled"]


def test_a_forged_or_foreign_calendar_link_is_not_found(accepted, client):
    assert client.get(reverse("appointment-ics", args=["not-a-token"])).status_code == 404


def test_a_pick_from_another_number_is_refused(accepted, tenant_says, home):
    tenant_says("friday 8am", phone=PLUMBER)
    offered = Appointment.objects.get(state="offered")
    stranger = Conversation.objects.create(
        organization=home, phone="+447700900999", whatsapp_id="whatsapp:+447700900999"
    )
    with pytest.raises(AppointmentError, match="not reported from this number"):
        visit_pick(conversation=stranger, appointment_id=offered.pk)
    with pytest.raises(AppointmentError, match="not this number's"):  # the contractor cannot pick for the tenant
        slot_propose(conversation=stranger, job_id=accepted.pk, window=Window(offered.starts_at, offered.ends_at))
    assert not Appointment.objects.filter(state="booked").exists()


def test_answers_after_the_visit_change_nothing_on_a_closed_issue(accepted, tenant_says, clock):
    visit_over(tenant_says, clock)
    how = latest(PLUMBER).raw_payload["choices"]
    issue_status_change(issue=accepted.issue, status="resolved", tenant_told=False)
    issue_status_change(issue=accepted.issue, status="closed")
    replies = tap(tenant_says, PLUMBER, how[1])  # Another visit, on a closed issue
    assert replies == ["That can't be done now: R2611-LEAK01 is closed already."]
    accepted.issue.refresh_from_db()
    assert accepted.issue.status == "closed" and Appointment.objects.get().state == "booked"
    # Reopened, another contractor can be sent: the done job is over.
    issue_status_change(issue=accepted.issue, status="open")
    accepted.refresh_from_db()
    assert accepted.state == "cancelled"


def test_a_time_that_has_passed_is_not_booked_and_the_contractor_is_asked_again(accepted, tenant_says, clock):
    tenant_says("friday 8am", phone=PLUMBER)
    offer = latest(PHONE).raw_payload["choices"][0]
    clock.move_to(datetime.datetime(2026, 11, 27, 9, 0, tzinfo=datetime.UTC))
    [reply, *_] = tap(tenant_says, PHONE, offer)
    assert reply == "Sorry, that time has passed. I've asked Leeds Plumbing for new times for R2611-LEAK01."
    assert not Appointment.objects.filter(state="booked").exists()
    assert latest(PLUMBER).body.startswith("The tenant of R2611-LEAK01 picked a time that has passed.")


def test_a_time_the_contractor_booked_for_another_job_meanwhile_is_not_booked_twice(accepted, tenant_says, home):
    tenant_says("friday 8am", phone=PLUMBER)
    offered = Appointment.objects.get()
    other = IssueFactory(organization=home, property=accepted.issue.property, reference="R2611-OTHER1")
    other_job = Job.objects.create(
        issue=other, contractor=accepted.contractor, state="accepted", offered_at=WEDNESDAY, respond_by=WEDNESDAY
    )
    Appointment.objects.create(job=other_job, starts_at=offered.starts_at, ends_at=offered.ends_at, state="booked")
    [reply, *_] = tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    assert reply.startswith("Sorry, that time has just been taken.")
    offered.refresh_from_db()
    assert offered.state == "not_chosen"


def test_typed_text_is_read_for_times_only_in_answer_to_the_times_question(accepted, tenant_says, clock):
    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    tenant_says("all done by friday 10, invoice to follow", phone=PLUMBER)
    assert latest(LANDLORD).body.startswith("Message from Leeds Plumbing: all done by friday 10")
    assert Appointment.objects.count() == 1


def test_with_a_visit_booked_typed_words_name_the_job_they_give_times_for(accepted, tenant_says, home):
    """A contractor with a visit booked and a second job waiting for times:
    "running late, be there by 3 today" is about the visit, so it goes to the
    landlord, not to the second job's tenant as a 15:00 visit. Times that name
    the second job's reference are read for it."""
    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])  # the leak's visit booked
    second = IssueFactory(
        organization=home,
        property=accepted.issue.property,
        tenant=accepted.issue.tenant,
        conversation=accepted.issue.conversation,
        reference="R2611-TAP002",
        title="Dripping bath tap",
    )
    job = job_offer(issue=second, contractor=accepted.contractor)
    job_reply(conversation=Conversation.objects.get(phone=PLUMBER), job_id=job.pk, accept=True)
    asked = latest(PLUMBER)
    assert asked.raw_payload["purpose"] == "appointment_slots"  # the tap's times asked for
    assert "write them after its reference (e.g. 'R2611-TAP002 Tue 9am" in asked.body  # two jobs: say which

    tenant_says("running late, be there by 3 today", phone=PLUMBER)
    assert latest(LANDLORD).body == "Message from Leeds Plumbing: running late, be there by 3 today"
    assert not Appointment.objects.filter(job=job).exists()
    again = latest(PLUMBER)
    assert again.raw_payload["purpose"] == "appointment_slots" and again.pk != asked.pk
    assert again.body.startswith("You have more than one job with us, so I've passed that on to the landlord.")
    # No time in it, or another job named: passed on, and the list is not sent again and again.
    for words in ("on site now, all good", "R2611-LEAK01 running late, there by 3 today"):
        tenant_says(words, phone=PLUMBER)
        assert latest(LANDLORD).body == f"Message from Leeds Plumbing: {words}"
        assert latest(PLUMBER).body == "Thanks, I've passed your message on to Harbour Lettings."

    tenant_says("R2611-TAP002 monday 2pm", phone=PLUMBER)
    assert [c["title"] for c in latest(PHONE).raw_payload["choices"]] == ["Mon 30 Nov 14:00-16:00", "None of these"]


def test_words_a_job_refuses_still_reach_the_landlord(accepted, tenant_says):
    """A scheduled issue moved back to acknowledged keeps its booked visit:
    the contractor's typed words were refused ("times have gone to the
    tenant already") and reached nobody. A person reads them now."""
    tenant_says("friday 8am", phone=PLUMBER)
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])  # booked: the issue is scheduled
    issue_status_change(issue=accepted.issue, status="acknowledged", note="Waiting for the part.")
    tenant_says("the part came in, can do it thursday instead", phone=PLUMBER)
    assert latest(LANDLORD).body == "Message from Leeds Plumbing: the part came in, can do it thursday instead"
    reply = latest(PLUMBER).body
    assert reply.startswith("That can't be done now:") and "passed your message on" in reply


def visit_path(appointment: Appointment) -> str:
    link = ics_link(appointment)
    return link[link.index("/visits/") :]


def test_a_calendar_link_shows_only_a_booked_visit_and_stops_a_day_after_it(accepted, tenant_says, client, clock):
    tenant_says("friday 8am", phone=PLUMBER)
    assert client.get(visit_path(Appointment.objects.get())).status_code == 404  # offered, not booked
    tap(tenant_says, PHONE, latest(PHONE).raw_payload["choices"][0])
    path = visit_path(Appointment.objects.get())
    assert client.get(path).status_code == 200
    clock.move_to(datetime.datetime(2026, 11, 28, 11, 0, tzinfo=datetime.UTC))  # a day after the visit
    assert client.get(path).status_code == 404
