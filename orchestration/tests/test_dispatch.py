"""Dispatch: suggesting a contractor, offering the job over WhatsApp (real
twilio SDK against the stub), and the contractor's Accept / Decline through
the signed webhook, never reaching the tenant's assistant."""

from __future__ import annotations

import datetime
import json
import zoneinfo

import pytest
import time_machine
from django.core import mail

from conversations.delivery import message_send
from conversations.models import Message
from issues.dispatch import (
    DispatchError,
    contractors_suggest,
    dispatch_auto,
    job_offer,
    job_withdraw,
    jobs_expire,
    postcode_district,
    respond_by_from,
)
from issues.models import IssueUpdate, Job
from issues.status import issue_status_change
from orchestration.models import Turn
from properties.models import Contractor
from properties.tests.factories import IssueFactory, OrganizationFactory, UserFactory

PLUMBER = "+447700900701"
ELECTRICIAN = "+447700900702"


@pytest.fixture(autouse=True)
def _classifier_off(settings):
    settings.EMERGENCY_CLASSIFIER = "off"


@pytest.fixture
def leak(home):
    home.contact_whatsapp = "+447700900555"
    home.save()
    flat = home.properties.get(code="FLAT-1")
    flat.access_notes = "Key safe by the door, code 1234."
    flat.save()
    Contractor.objects.create(
        organization=home,
        name="Leeds Plumbing",
        trades=["plumbing"],
        areas=["LS1"],
        whatsapp=PLUMBER,
        email="jobs@leedsplumbing.example",
    )
    Contractor.objects.create(
        organization=home, name="Wakefield Plumbing", trades=["plumbing"], areas=["WF1"], email="jobs@wakefield.example"
    )
    Contractor.objects.create(organization=home, name="Nobody Reachable", trades=["plumbing"], areas=["WF1"])
    Contractor.objects.create(organization=home, name="Sparks Ltd", trades=["electrical"], whatsapp=ELECTRICIAN)
    return IssueFactory(
        organization=home, property=flat, reference="R2611-LEAK01", title="Leak under the sink", category="plumbing"
    )


def names(suggestions):
    return [s.contractor.name for s in suggestions]


def test_postcode_districts_are_read_as_written_on_a_letter():
    assert [postcode_district(p) for p in ["LS1 4AB", "ls14ab", "SW1A 1AA", "EC1V 9HX", "", "12345"]] == [
        "LS1",
        "LS1",
        "SW1A",
        "EC1V",
        "",
        "",
    ]


def test_suggestions_rank_trade_then_area_then_who_is_free(leak):
    assert names(contractors_suggest(issue=leak)) == [
        "Leeds Plumbing",
        "Nobody Reachable",
        "Wakefield Plumbing",
        "Sparks Ltd",
    ]
    best = contractors_suggest(issue=leak)[0]
    assert best.reasons == ["does plumbing and leaks", "covers LS1", "free"]
    # A plumber busy on another job drops below an equally placed free one.
    Contractor.objects.filter(name="Wakefield Plumbing").update(areas=["LS1"])
    other = IssueFactory(organization=leak.organization, property=leak.property, category="plumbing")
    job_offer(issue=other, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    assert names(contractors_suggest(issue=leak))[:2] == ["Wakefield Plumbing", "Leeds Plumbing"]


def test_another_organizations_contractor_is_never_suggested_or_offered(leak):
    stranger = Contractor.objects.create(
        organization=OrganizationFactory(), name="Elsewhere Ltd", trades=["plumbing"], whatsapp="+447700900799"
    )
    assert "Elsewhere Ltd" not in names(contractors_suggest(issue=leak))
    with pytest.raises(DispatchError, match="active contractor of the issue's organization"):
        job_offer(issue=leak, contractor=stranger)
    assert not Job.objects.exists()


def test_the_offer_goes_by_whatsapp_template_with_accept_decline_and_by_email_with_the_details(
    leak, twilio_stub, settings, django_capture_on_commit_callbacks
):
    settings.WHATSAPP_TEMPLATES = {"job_offer": "HX" + "j" * 32}
    plumber = Contractor.objects.get(name="Leeds Plumbing")
    with django_capture_on_commit_callbacks(execute=True):
        job = job_offer(issue=leak, contractor=plumber, actor=UserFactory(username="sam"))
    offer = Message.objects.get(raw_payload__purpose="job_offer")
    assert offer.to_address == f"whatsapp:{PLUMBER}"
    assert [c["payload"] for c in offer.raw_payload["choices"]] == [f"job:accept:{job.pk}", f"job:decline:{job.pk}"]
    assert "Flat 1, 12 Harbour Street, Leeds, LS1 4AB" in offer.body and "Key safe by the door" in offer.body
    message_send(message_id=offer.pk)  # the contractor never wrote to us: outside the window, the template
    [sent] = twilio_stub.sent
    assert sent["ContentSid"] == "HX" + "j" * 32
    assert json.loads(sent["ContentVariables"]) == {"1": "R2611-LEAK01: Leak under the sink", "2": str(job.pk)}
    [email] = mail.outbox
    assert email.to == ["jobs@leedsplumbing.example"] and "Key safe by the door" in email.body
    assert IssueUpdate.objects.filter(issue=leak).latest("id").body.startswith("Job offered to Leeds Plumbing by sam")
    with pytest.raises(DispatchError, match="already offered"):
        job_offer(issue=leak, contractor=Contractor.objects.get(name="Wakefield Plumbing"))


def test_the_contractor_taps_accept_and_the_tenants_assistant_never_hears_of_it(leak, tenant_says):
    job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    replies = tenant_says(
        "Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"}
    )
    reply, times = replies  # the details, then the visit times to pick from
    assert times.startswith("When can you visit Flat 1, 12 Harbour Street, Leeds for R2611-LEAK01?")
    assert reply.startswith("Thanks, R2611-LEAK01 is yours. Next I'll ask you for times to visit.")
    assert "Flat 1, 12 Harbour Street, Leeds, LS1 4AB" in reply and "Key safe by the door" in reply  # the details
    job.refresh_from_db()
    assert job.state == "accepted" and job.responded_at is not None
    turn = Turn.objects.latest("id")
    assert turn.outcome == "contractor_answer" and turn.input_tokens == 0
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told == "[R2611-LEAK01] Leeds Plumbing accepted R2611-LEAK01."
    # A second tap changes nothing.
    again = tenant_says(
        "Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"}
    )
    assert again == ["That can't be done now: the offer of R2611-LEAK01 is accepted already."]


def test_a_decline_typed_as_a_number_goes_back_to_the_landlord_with_the_next_suggestion(leak, tenant_says):
    job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    tenant_says("2", phone=PLUMBER)
    job.refresh_from_db()
    assert job.state == "declined"
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told == (
        "[R2611-LEAK01] Leeds Plumbing declined R2611-LEAK01. Next suggestion: Wakefield Plumbing "
        "(does plumbing and leaks, free)."
    )
    assert names(contractors_suggest(issue=leak))[-1] == "Leeds Plumbing"  # passed on it: last


def test_closing_the_issue_cancels_its_offer_and_a_late_tap_changes_nothing(leak, tenant_says):
    job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    issue_status_change(issue=leak, status="closed")
    job.refresh_from_db()
    assert job.state == "cancelled"
    tenant_says("Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"})
    job.refresh_from_db()
    assert job.state == "cancelled"
    assert jobs_expire() == 0


def test_the_landlord_withdraws_an_accepted_job_and_can_offer_it_to_someone_else(leak, tenant_says):
    landlord = UserFactory(username="lena")
    plumber = Contractor.objects.get(name="Leeds Plumbing")
    job = job_offer(issue=leak, contractor=plumber)
    tenant_says("Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"})
    with pytest.raises(DispatchError, match="already accepted by Leeds Plumbing"):
        job_offer(issue=leak, contractor=Contractor.objects.get(name="Wakefield Plumbing"))

    job_withdraw(job=job, actor=landlord, reason="You have not been in touch for three days.")

    job.refresh_from_db()
    assert job.state == "cancelled"
    told = Message.objects.filter(to_address=f"whatsapp:{PLUMBER}").latest("id").body
    assert told == (
        f"{leak.organization.name} has withdrawn job R2611-LEAK01 (Leak under the sink). "
        "You have not been in touch for three days."
    )
    history = IssueUpdate.objects.filter(issue=leak).latest("id")
    assert history.body.startswith("Job withdrawn from Leeds Plumbing by lena.") and history.user == landlord
    # Withdrawn once: a second try is refused, and the issue can go to someone else.
    with pytest.raises(DispatchError, match="cancelled already"):
        job_withdraw(job=job, actor=landlord)
    assert job_offer(issue=leak, contractor=Contractor.objects.get(name="Wakefield Plumbing")).state == "offered"
    # The withdrawn contractor's late tap changes nothing.
    tenant_says("Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"})
    job.refresh_from_db()
    assert job.state == "cancelled"


def test_an_email_only_contractor_is_told_of_the_withdrawal_by_email(leak, django_capture_on_commit_callbacks):
    job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Wakefield Plumbing"))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        job_withdraw(job=job, reason="Sorted by the tenant.")
    [email] = mail.outbox
    assert email.to == ["jobs@wakefield.example"] and email.subject == "[R2611-LEAK01] Job withdrawn"
    assert email.body.endswith("has withdrawn job R2611-LEAK01 (Leak under the sink). Sorted by the tenant.")


def test_a_contractor_made_inactive_loses_open_offers_and_the_landlord_gets_the_next_suggestion(leak):
    plumber = Contractor.objects.get(name="Leeds Plumbing")
    offered = job_offer(issue=leak, contractor=plumber)
    other = IssueFactory(organization=leak.organization, property=leak.property, reference="R2611-OTHER1")
    accepted = job_offer(issue=other, contractor=plumber)
    Job.objects.filter(pk=accepted.pk).update(state="accepted")

    plumber.active = False
    plumber.save()

    offered.refresh_from_db()
    accepted.refresh_from_db()
    assert offered.state == "cancelled"
    assert accepted.state == "accepted"  # work already taken stays theirs until the landlord withdraws it
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told.startswith("[R2611-LEAK01] Leeds Plumbing was made inactive: the offer of R2611-LEAK01 is withdrawn.")
    assert "Next suggestion: Wakefield Plumbing" in told
    plumber.save()  # saved again while inactive: nothing more to withdraw
    assert Job.objects.filter(contractor=plumber, state="cancelled").count() == 1


def test_any_other_message_from_a_contractor_is_passed_on_to_the_landlord(leak, tenant_says):
    replies = tenant_says("running late, there by 3", phone=ELECTRICIAN)
    assert replies == ["Thanks, I've passed your message on to Harbour Lettings."]
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told == "Message from Sparks Ltd: running late, there by 3"
    assert Turn.objects.latest("id").outcome == "contractor_message"


MORNING = datetime.datetime(2026, 11, 25, 9, 0, tzinfo=datetime.UTC)  # a Wednesday, 09:00 in London


def test_an_unanswered_offer_lapses_once_and_the_landlord_gets_the_next_suggestion(leak, settings):
    settings.DISPATCH_RESPONSE_HOURS = 4
    with time_machine.travel(MORNING, tick=False):
        job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    with time_machine.travel(MORNING + datetime.timedelta(hours=3), tick=False):
        assert jobs_expire() == 0
    with time_machine.travel(MORNING + datetime.timedelta(hours=4, minutes=1), tick=False):
        assert jobs_expire() == 1
        assert jobs_expire() == 0
    job.refresh_from_db()
    assert job.state == "expired"
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert "did not answer for R2611-LEAK01. Next suggestion: Wakefield Plumbing" in told
    lapsed = Message.objects.filter(to_address=f"whatsapp:{PLUMBER}").latest("id").body
    assert lapsed == "The offer of R2611-LEAK01 has lapsed; no need to reply."


def test_resolving_cancels_an_open_offer_and_nobody_is_suggested_for_a_done_repair(leak, settings):
    with time_machine.travel(MORNING, tick=False):
        job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
        issue_status_change(issue=leak, status="resolved", tenant_told=False)
    job.refresh_from_db()
    assert job.state == "cancelled"
    with time_machine.travel(MORNING + datetime.timedelta(days=2), tick=False):
        assert jobs_expire() == 0  # no lapse, and no "Next suggestion" for a fixed repair


def test_accept_tapped_after_the_offer_lapsed_is_told_so_and_the_landlord_hears_of_it(leak, settings, tenant_says):
    settings.DISPATCH_RESPONSE_HOURS = 4
    with time_machine.travel(MORNING, tick=False):
        job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    with time_machine.travel(MORNING + datetime.timedelta(hours=4, minutes=3), tick=False):
        assert jobs_expire() == 1
        replies = tenant_says(
            "Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"}
        )
    assert replies == [
        "Sorry, the offer of R2611-LEAK01 lapsed at Wed 25 Nov 13:00. "
        "I've told Harbour Lettings you would still take it."
    ]
    job.refresh_from_db()
    assert job.state == "expired"  # the landlord decides; no visit times are asked for
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told == "[R2611-LEAK01] Leeds Plumbing tapped Accept for R2611-LEAK01 after the offer lapsed."
    again = tenant_says("Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}"})
    assert again[0].startswith("Sorry, the offer of R2611-LEAK01 lapsed")
    assert Message.objects.filter(body=told).count() == 1  # the landlord is told once, however often it is tapped
    declined = tenant_says("Decline", phone=PLUMBER, extra={"ButtonPayload": f"job:decline:{job.pk}"})
    assert declined == [
        "That can't be done now: the offer of R2611-LEAK01 is not open any more: it was not answered in time."
    ]


def test_with_auto_dispatch_a_routine_report_goes_to_the_best_plumber_and_on_after_a_decline(leak, home, tenant_says):
    home.auto_dispatch = True
    home.save()
    leak.organization.refresh_from_db()
    assert dispatch_auto(leak) == "Offered automatically to Leeds Plumbing."
    first = Job.objects.get()
    # Email only: no way to accept an offer (WhatsApp's buttons are the only one), so never sent one automatically.
    Contractor.objects.create(
        organization=home, name="Aardvark Plumbing", trades=["plumbing"], email="jobs@aardvark.example"
    )
    Contractor.objects.create(
        organization=home,
        name="Anywhere Plumbing",
        trades=["plumbing"],
        email="jobs@anywhere.example",
        whatsapp="+447700900799",
    )
    tenant_says("2", phone=PLUMBER)  # Decline
    second = Job.objects.exclude(pk=first.pk).get()
    # Wakefield Plumbing covers WF1 only: it is suggested, never sent a job in LS1 without a person.
    assert second.contractor.name == "Anywhere Plumbing" and second.state == "offered"
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told.endswith("declined R2611-LEAK01. Offered automatically to Anywhere Plumbing.")
    # The electrician is never tried for a leak; after the plumbers of the area who can answer, a person decides.
    Job.objects.filter(pk=second.pk).update(state="declined")
    assert dispatch_auto(leak) == (
        "No contractor of that trade covering LS1 is left to offer it to on WhatsApp (Aardvark Plumbing: "
        "email only, so offer it to them yourself): please arrange it yourself."
    )


def test_auto_dispatch_leaves_emergencies_and_organizations_without_it_to_a_person(leak, home, settings):
    assert dispatch_auto(leak) == ""  # off by default
    home.auto_dispatch = True
    home.save()
    leak.organization.refresh_from_db()
    leak.urgency = "emergency"
    assert dispatch_auto(leak) == ""
    leak.urgency, leak.tenant_unverified = "routine", True
    assert dispatch_auto(leak) == ""  # a number not on record: a person checks who it is first
    leak.tenant_unverified = False
    settings.DISPATCH_AUTO_MAX_OFFERS = 0
    assert dispatch_auto(leak, tell_landlord=True).startswith("Offered 0 times already")
    told = Message.objects.filter(to_address="whatsapp:+447700900555").latest("id").body
    assert told.startswith("[R2611-LEAK01] Not sent to a contractor automatically. Offered 0 times already")
    assert not Job.objects.exists()


def test_closing_a_done_repair_keeps_who_did_it(leak, tenant_says):
    job = job_offer(issue=leak, contractor=Contractor.objects.get(name="Leeds Plumbing"))
    tenant_says("Accept", phone=PLUMBER, extra={"ButtonPayload": f"job:accept:{job.pk}", "ButtonText": "Accept"})
    issue_status_change(issue=leak, status="resolved")
    issue_status_change(issue=leak, status="closed")
    job.refresh_from_db()
    assert job.state == "accepted"
    assert contractors_suggest(issue=leak)[0].open_jobs == 0  # not busy with a closed issue


@pytest.mark.parametrize(
    ("offered", "urgency", "lapses"),
    [
        ("2026-11-25T09:00", "routine", "2026-11-25T13:00"),  # inside the day
        ("2026-11-25T18:00", "routine", "2026-11-26T10:00"),  # 2 h tonight, 2 h tomorrow from 08:00
        ("2026-11-25T21:30", "urgent", "2026-11-26T12:00"),  # at night: from 08:00
        ("2026-11-25T21:30", "emergency", "2026-11-26T01:30"),  # an emergency's in calendar hours
        ("2026-03-28T18:00", "routine", "2026-03-29T10:00"),  # the clocks go forward overnight
    ],
)
def test_an_offers_answer_time_counts_only_the_contractors_day(leak, settings, offered, urgency, lapses):
    settings.DISPATCH_RESPONSE_HOURS, settings.DISPATCH_DAY_STARTS_HOUR, settings.DISPATCH_DAY_ENDS_HOUR = 4, 8, 20
    london = zoneinfo.ZoneInfo("Europe/London")
    leak.urgency = urgency
    leak.organization.timezone = "Europe/London"
    start = datetime.datetime.fromisoformat(offered).replace(tzinfo=london)
    assert respond_by_from(start, issue=leak).astimezone(london) == datetime.datetime.fromisoformat(lapses).replace(
        tzinfo=london
    )
