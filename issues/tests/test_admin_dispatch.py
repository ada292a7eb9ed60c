"""The issue page's 'Send to a contractor' and the contractors' admin."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from issues.models import Appointment, Job
from properties.models import Contractor
from properties.tests.persona import alice_and_bob

pytestmark = pytest.mark.django_db


@pytest.fixture
def worlds(client):
    alice, bob = alice_and_bob()
    client.force_login(alice.user)
    return alice, bob


def test_the_dispatch_page_lists_the_suggestions_and_offers_the_chosen_one(client, worlds):
    alice, _ = worlds
    page = client.get(reverse("admin:issues_issue_change", args=[alice.emergency.pk])).content.decode()
    dispatch = reverse("admin:issues_issue_dispatch", args=[alice.emergency.pk])
    assert dispatch in page
    listing = client.get(dispatch).content.decode()
    assert "Alice Plumbing" in listing and "does plumbing and leaks" in listing
    response = client.post(dispatch, {"contractor": alice.contractor.pk}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("admin:issues_issue_change", args=[alice.emergency.pk])
    assert Job.objects.get(issue=alice.emergency).contractor == alice.contractor


def test_the_dispatch_page_withdraws_the_live_job_and_then_offers_the_suggestions_again(client, worlds):
    alice, bob = worlds
    dispatch = reverse("admin:issues_issue_dispatch", args=[alice.emergency.pk])
    client.post(dispatch, {"contractor": alice.contractor.pk})
    job = Job.objects.get(issue=alice.emergency)
    page = client.get(dispatch).content.decode()
    assert "Withdraw the job from Alice Plumbing" in page and 'id="dispatch-form"' not in page
    response = client.post(dispatch, {"withdraw": job.pk, "reason": "Wrong trade."}, follow=True)
    assert "the job is withdrawn from Alice Plumbing" in response.content.decode()
    job.refresh_from_db()
    assert job.state == "cancelled"
    assert 'id="dispatch-form"' in client.get(dispatch).content.decode()  # can be offered again
    # Bob's issue stays out of reach.
    assert (
        client.post(reverse("admin:issues_issue_dispatch", args=[bob.emergency.pk]), {"withdraw": 1}).status_code == 404
    )


def test_another_organizations_contractor_is_refused_and_their_issue_is_not_found(client, worlds):
    alice, bob = worlds
    dispatch = reverse("admin:issues_issue_dispatch", args=[alice.emergency.pk])
    refused = client.post(dispatch, {"contractor": bob.contractor.pk}).content.decode()
    assert "Choose one of the contractors listed." in refused
    assert client.get(reverse("admin:issues_issue_dispatch", args=[bob.emergency.pk])).status_code == 404
    assert not Job.objects.filter(issue__in=[alice.emergency, bob.emergency]).exists()


def test_the_contractor_form_cleans_areas_and_the_number(client, worlds):
    alice, _ = worlds
    response = client.post(
        reverse("admin:properties_contractor_add"),
        {
            "organization": alice.organization.pk,
            "name": "Sparks Ltd",
            "trades": ["electrical"],
            "areas": "ls6 ,LS1",
            "whatsapp": "+44 7700 900 702",
            "working_days": ["0", "1"],
            "work_starts": "08:00",
            "work_ends": "17:00",
            "active": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    sparks = Contractor.objects.get(name="Sparks Ltd")
    assert (sparks.areas, sparks.whatsapp, sparks.working_days) == (["LS6", "LS1"], "+447700900702", [0, 1])


def test_the_issue_page_shows_the_visits_and_another_organizations_issue_is_not_found(client, worlds):
    alice, bob = worlds
    job = Job.objects.create(
        issue=alice.emergency,
        contractor=alice.contractor,
        state="accepted",
        offered_at=timezone.now(),
        respond_by=timezone.now(),
    )
    starts = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.UTC)
    Appointment.objects.create(job=job, starts_at=starts, ends_at=starts + datetime.timedelta(hours=2), state="booked")
    page = client.get(reverse("admin:issues_issue_change", args=[alice.emergency.pk])).content.decode()
    assert "Tue 1 Dec 09:00-11:00 (booked)" in page
    assert client.get(reverse("admin:issues_issue_change", args=[bob.emergency.pk])).status_code in (302, 404)
