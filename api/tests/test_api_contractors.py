"""Contractors and dispatch through the API, inside the caller's organizations."""

import datetime

import pytest
from django.utils import timezone

from issues.models import Appointment, Job
from properties.models import Contractor

pytestmark = pytest.mark.django_db


def test_a_contractor_is_added_with_clean_areas_and_number_and_bad_input_is_refused(alice_api, worlds):
    response = alice_api.post(
        "/api/v1/contractors/",
        {
            "name": "Sparks Ltd",
            "trades": ["electrical"],
            "areas": ["ls6 ", "LS6", "ls1"],
            "whatsapp": "+44 7700 900702",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["areas"], body["whatsapp"], body["working_days"]) == (["LS6", "LS1"], "+447700900702", [0, 1, 2, 3, 4])
    bad = alice_api.post("/api/v1/contractors/", {"name": "X", "trades": ["juggling"]}, format="json")
    assert bad.status_code == 400 and "trades" in bad.json()["error"]["fields"]
    number = alice_api.post("/api/v1/contractors/", {"name": "Y", "whatsapp": "07700"}, format="json")
    assert number.status_code == 400 and "whatsapp" in number.json()["error"]["fields"]
    hours = alice_api.patch(
        f"/api/v1/contractors/{body['id']}/", {"work_starts": "18:00", "work_ends": "08:00"}, format="json"
    )
    assert hours.status_code == 400
    assert Contractor.objects.filter(organization=worlds[0].organization).count() == 2  # the persona's and Sparks


def test_dispatch_lists_suggestions_and_offers_the_job(alice_api, worlds):
    alice, _ = worlds
    suggestions = alice_api.get(f"/api/v1/issues/{alice.emergency.pk}/dispatch/").json()
    assert [s["name"] for s in suggestions] == ["Alice Plumbing"]
    assert suggestions[0]["reasons"][0] == "does plumbing and leaks"
    offered = alice_api.post(
        f"/api/v1/issues/{alice.emergency.pk}/dispatch/", {"contractor": alice.contractor.pk}, format="json"
    )
    assert offered.status_code == 201, offered.content
    assert offered.json()["state"] == "offered"
    detail = alice_api.get(f"/api/v1/issues/{alice.emergency.pk}/").json()
    assert [j["contractor_name"] for j in detail["jobs"]] == ["Alice Plumbing"]
    again = alice_api.post(
        f"/api/v1/issues/{alice.emergency.pk}/dispatch/", {"contractor": alice.contractor.pk}, format="json"
    )
    assert again.status_code == 400 and "already offered" in again.json()["error"]["fields"]["contractor"][0]


def test_the_live_job_is_withdrawn_once_and_another_organization_gets_404(alice_api, bob_api, worlds):
    alice, _ = worlds
    withdraw = f"/api/v1/issues/{alice.emergency.pk}/dispatch/withdraw/"
    nothing = alice_api.post(withdraw, {}, format="json")
    assert nothing.status_code == 400 and "no job offered or accepted" in nothing.json()["error"]["fields"]["job"][0]
    alice_api.post(f"/api/v1/issues/{alice.emergency.pk}/dispatch/", {"contractor": alice.contractor.pk}, format="json")
    assert bob_api.post(withdraw, {}, format="json").status_code == 404
    assert alice_api.post(withdraw, {"reason": "x", "other": 1}, format="json").status_code == 400  # unknown field
    done = alice_api.post(withdraw, {"reason": "Found someone nearer."}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["state"] == "cancelled"
    assert Job.objects.get(issue=alice.emergency).state == "cancelled"
    assert alice_api.post(withdraw, {}, format="json").status_code == 400  # nothing live any more


def test_another_organizations_contractor_cannot_be_offered_a_job(alice_api, worlds):
    alice, bob = worlds
    response = alice_api.post(
        f"/api/v1/issues/{alice.emergency.pk}/dispatch/", {"contractor": bob.contractor.pk}, format="json"
    )
    assert response.status_code == 404
    assert not Job.objects.filter(issue=alice.emergency).exists()


def test_the_issue_shows_its_jobs_visits_and_another_organization_cannot_read_them(alice_api, bob_api, worlds):
    alice, _ = worlds
    job = Job.objects.create(
        issue=alice.emergency,
        contractor=alice.contractor,
        state="accepted",
        offered_at=timezone.now(),
        respond_by=timezone.now(),
    )
    starts = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.UTC)
    Appointment.objects.create(job=job, starts_at=starts, ends_at=starts + datetime.timedelta(hours=2), state="booked")
    [shown] = alice_api.get(f"/api/v1/issues/{alice.emergency.pk}/").json()["jobs"]
    [visit] = shown["appointments"]
    assert (visit["state"], visit["starts_at"]) == ("booked", "2026-12-01T09:00:00Z")
    assert bob_api.get(f"/api/v1/issues/{alice.emergency.pk}/").status_code == 404
