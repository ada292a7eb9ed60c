"""Deadlines through the API: the clocks on an issue, the deadline filter,
and recording a step."""

import datetime
import zoneinfo

import pytest
from django.utils import timezone

from issues.deadlines import issue_clocks_sync
from issues.models import IssueClock

pytestmark = pytest.mark.django_db


def overdue(issue, hours=30):
    issue.created_at = timezone.now() - datetime.timedelta(hours=hours)
    issue.save(update_fields=["created_at"])
    issue_clocks_sync(issue=issue)


def test_an_issue_shows_its_clocks_and_the_list_filters_by_deadline(alice_api, worlds):
    alice, _ = worlds
    overdue(alice.emergency)
    issue_clocks_sync(issue=alice.routine)
    body = alice_api.get(f"/api/v1/issues/{alice.emergency.pk}/").json()
    clocks = {c["kind"]: c for c in body["clocks"]}
    assert set(clocks) == {"made_safe", "resolved"}
    assert clocks["made_safe"]["state"] == "overdue"
    assert clocks["resolved"]["state"] == "running"
    assert body["next_due"] == clocks["made_safe"]["due_at"]

    def refs(**params):
        return [i["reference"] for i in alice_api.get("/api/v1/issues/", params).json()["results"]]

    assert refs(deadline="overdue") == [alice.emergency.reference]
    assert refs(deadline="running", ordering="next_due") == [alice.emergency.reference, alice.routine.reference]
    assert alice_api.get("/api/v1/issues/", {"deadline": "someday"}).status_code == 400


def test_recording_a_step_stops_its_clock_and_a_second_time_or_an_unknown_step_is_refused(alice_api, worlds):
    alice, _ = worlds
    overdue(alice.emergency)
    url = f"/api/v1/issues/{alice.emergency.pk}/clocks/made_safe/met/"
    response = alice_api.post(url, {"note": "Supply capped"}, format="json")
    assert response.status_code == 200, response.content
    made_safe = next(c for c in response.json()["clocks"] if c["kind"] == "made_safe")
    assert made_safe["state"] == "met late"
    assert "6 h late" in response.json()["updates"][-1]["body"]

    again = alice_api.post(url, {}, format="json")
    assert again.status_code == 400 and "recorded already" in again.json()["error"]["fields"]["kind"][0]
    unknown = alice_api.post(f"/api/v1/issues/{alice.emergency.pk}/clocks/painted/met/", {}, format="json")
    assert unknown.status_code == 400
    extra = alice_api.post(f"/api/v1/issues/{alice.emergency.pk}/clocks/resolved/met/", {"by": "x"}, format="json")
    assert extra.status_code == 400


def test_another_organizations_issue_is_not_found(bob_api, worlds):
    alice, _ = worlds
    overdue(alice.emergency)
    response = bob_api.post(f"/api/v1/issues/{alice.emergency.pk}/clocks/made_safe/met/", {}, format="json")
    assert response.status_code == 404
    assert IssueClock.objects.get(issue=alice.emergency, kind="made_safe").met_at is None


def test_a_time_without_an_offset_is_the_organizations_local_time(alice_api, worlds):
    alice, _ = worlds
    organization = alice.emergency.organization
    organization.timezone = "America/New_York"
    organization.save()
    overdue(alice.emergency)
    local = (timezone.now() - datetime.timedelta(hours=2)).astimezone(zoneinfo.ZoneInfo("America/New_York"))
    url = f"/api/v1/issues/{alice.emergency.pk}/clocks/made_safe/met/"
    response = alice_api.post(url, {"at": local.replace(tzinfo=None).isoformat(timespec="seconds")}, format="json")
    assert response.status_code == 200, response.content
    met = IssueClock.objects.get(issue=alice.emergency, kind="made_safe").met_at
    assert abs(met - local) < datetime.timedelta(seconds=1)  # read as UTC it would be 4 or 5 hours off
