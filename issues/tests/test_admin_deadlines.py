"""Deadlines where the landlord works: the list's badges and filter, the
issue page's clocks and their Record page, and the policies' admin."""

import datetime

import pytest
import time_machine
from django.contrib.admin import helpers
from django.urls import reverse
from django.utils import timezone

from issues.deadlines import AGENCY_POLICY, AWAAB_POLICY, issue_clocks_sync
from issues.models import DeadlinePolicy, IssueClock, IssueUpdate
from properties.tests.persona import alice_and_bob

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:issues_issue_changelist"


@pytest.fixture
def worlds(client):
    alice, bob = alice_and_bob()
    client.force_login(alice.user)
    return alice, bob


def test_the_list_badges_an_overdue_emergency_and_filters_by_deadline(client, worlds):
    alice, _ = worlds
    alice.emergency.created_at = timezone.now() - datetime.timedelta(hours=30)  # agency: made safe within 24 h
    alice.emergency.save(update_fields=["created_at"])
    issue_clocks_sync(issue=alice.emergency)
    issue_clocks_sync(issue=alice.routine)

    page = client.get(reverse(CHANGELIST)).content.decode()
    assert "overdue 6 h" in page

    overdue = client.get(reverse(CHANGELIST), {"deadline": "overdue"}).context["cl"].result_list
    assert [i.reference for i in overdue] == [alice.emergency.reference]
    running = client.get(reverse(CHANGELIST), {"deadline": "running"}).context["cl"].result_list
    assert {i.reference for i in running} == {alice.emergency.reference, alice.routine.reference}


def test_the_issue_page_shows_its_clocks_and_records_one_with_the_landlords_name(client, worlds):
    alice, _ = worlds
    issue_clocks_sync(issue=alice.emergency)
    change = reverse("admin:issues_issue_change", args=[alice.emergency.pk])
    page = client.get(change).content.decode()
    record = reverse("admin:issues_issue_clock", args=[alice.emergency.pk, "made_safe"])
    assert "Made safe" in page and record in page

    response = client.post(record, {"note": "Gas engineer capped the supply."}, follow=True)
    assert response.redirect_chain[-1][0] == change
    clock = IssueClock.objects.get(issue=alice.emergency, kind="made_safe")
    assert clock.met_at is not None and clock.met_by == alice.user
    line = IssueUpdate.objects.filter(issue=alice.emergency).latest("id").body
    assert "Made safe recorded by" in line and "Gas engineer capped the supply." in line

    again = client.post(record, {}).content.decode()
    assert "recorded already" in again


def test_a_time_given_is_read_in_the_organizations_zone_and_a_future_one_refused(client, worlds):
    alice, _ = worlds
    with time_machine.travel(datetime.datetime(2026, 7, 1, 12, 0, tzinfo=datetime.UTC), tick=False):
        alice.emergency.created_at = datetime.datetime(2026, 7, 1, 10, 0, tzinfo=datetime.UTC)
        alice.emergency.save(update_fields=["created_at"])
        issue_clocks_sync(issue=alice.emergency)
        record = reverse("admin:issues_issue_clock", args=[alice.emergency.pk, "made_safe"])
        refused = client.post(record, {"at": "2026-07-01T13:30"}).content.decode()  # 12:30 UTC
        assert "in the future" in refused
        client.post(record, {"at": "2026-07-01T12:30"})  # London, BST: 11:30 UTC
    clock = IssueClock.objects.get(issue=alice.emergency, kind="made_safe")
    assert clock.met_at == datetime.datetime(2026, 7, 1, 11, 30, tzinfo=datetime.UTC)


def test_another_organizations_clock_page_is_not_found(client, worlds):
    _, bob = worlds
    issue_clocks_sync(issue=bob.emergency)
    assert client.get(reverse("admin:issues_issue_clock", args=[bob.emergency.pk, "made_safe"])).status_code == 404
    assert client.post(reverse("admin:issues_issue_clock", args=[bob.emergency.pk, "made_safe"])).status_code == 404
    assert IssueClock.objects.get(issue=bob.emergency, kind="made_safe").met_at is None


def test_policies_are_the_organizations_own_and_one_action_switches_the_active_one(client, worlds):
    alice, bob = worlds
    listed = client.get(reverse("admin:issues_deadlinepolicy_changelist")).context["cl"].result_list
    assert {p.organization_id for p in listed} == {alice.organization.pk}
    awaab = DeadlinePolicy.objects.get(organization=alice.organization, name=AWAAB_POLICY)
    client.post(
        reverse("admin:issues_deadlinepolicy_changelist"),
        {"action": "make_active", helpers.ACTION_CHECKBOX_NAME: [awaab.pk]},
    )
    active = DeadlinePolicy.objects.filter(active=True)
    assert set(active.values_list("organization_id", "name")) == {
        (alice.organization.pk, AWAAB_POLICY),
        (bob.organization.pk, AGENCY_POLICY),
    }
    issue_clocks_sync(issue=alice.emergency)
    assert set(IssueClock.objects.filter(issue=alice.emergency).values_list("kind", flat=True)) == {
        "made_safe",
        "investigated",
    }
