"""The admin's first screen: the agency's day, each item linking to where it
is handled, and only the user's own organization in it."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from conversations.models import Conversation
from dashboard.selectors import agency_day
from issues.deadlines import issue_clocks_sync
from issues.models import Issue, Job
from properties.tests.persona import alice_and_bob

pytestmark = pytest.mark.django_db


@pytest.fixture
def worlds(client):
    alice, bob = alice_and_bob()
    client.force_login(alice.user)
    return alice, bob


def sections(organization):
    return {s.title: s for s in agency_day(organization_ids=[organization.pk])}


def test_the_home_page_shows_the_agencys_day_with_links(client, worlds):
    alice, _ = worlds
    page = client.get(reverse("admin:index")).content.decode()
    assert "Open emergencies" in page and "Today&#x27;s appointments" in page
    assert reverse("admin:issues_issue_change", args=[alice.emergency.pk]) in page


def test_each_section_lists_what_needs_the_landlord(worlds):
    alice, bob = worlds
    alice.emergency.created_at = timezone.now() - datetime.timedelta(hours=30)
    alice.emergency.save(update_fields=["created_at"])
    issue_clocks_sync(issue=alice.emergency)  # made safe within 24 h: overdue
    Conversation.objects.filter(pk=alice.conversation.pk).update(
        bot_paused=True, escalation_reason="Asked for a person"
    )
    Issue.objects.filter(pk=alice.routine.pk).update(status="scheduled", scheduled_for=timezone.localdate())
    day = sections(alice.organization)

    assert [i.text for i in day["Open emergencies"].items] == [
        f"{alice.emergency.reference} {alice.emergency.title}",
        f"Flooding alert from {alice.conversation.phone} (no issue yet)",  # the persona's alert is on no issue
    ]
    [clock] = day["Deadlines due or overdue"].items
    assert clock.note.startswith("overdue 6 h") and clock.urgent
    [waiting] = day["Conversations waiting for a person"].items
    assert waiting.note == "Asked for a person"
    # The persona's routine issue had its offer declined: back with the landlord.
    [back] = day["Issues waiting for a contractor"].items
    assert back.note == "declined or lapsed: choose another contractor"
    assert [i.text for i in day["Today's appointments"].items] == [f"{alice.routine.reference} {alice.routine.title}"]

    Job.objects.create(
        issue=alice.routine, contractor=alice.contractor, offered_at=timezone.now(), respond_by=timezone.now()
    )
    [offered] = sections(alice.organization)["Issues waiting for a contractor"].items
    assert offered.note == "offer awaiting an answer"

    bobs = sections(bob.organization)
    shown_to_bob = " ".join(f"{i.text} {i.url}" for s in bobs.values() for i in s.items)
    assert bobs["Open emergencies"].items  # Bob has his own
    for issue in (alice.emergency, alice.routine):
        assert issue.reference not in shown_to_bob and f"/{issue.pk}/" not in shown_to_bob
    assert not bobs["Conversations waiting for a person"].items

    # The number changed hands: the paused conversation is retired, nobody can answer there.
    Conversation.objects.filter(pk=alice.conversation.pk).update(retired_at=timezone.now())
    assert not sections(alice.organization)["Conversations waiting for a person"].items


def test_the_home_page_costs_the_same_queries_with_more_issues(client, worlds, django_assert_max_num_queries):
    alice, _ = worlds
    client.get(reverse("admin:index"))
    for n in range(30):
        Issue.objects.create(
            organization=alice.organization,
            property=alice.property,
            reference=f"EXTRA-{n}",
            title="Extra",
            description="x",
            urgency="emergency",
        )
    with django_assert_max_num_queries(HOME_QUERY_BUDGET):
        client.get(reverse("admin:index"))


HOME_QUERY_BUDGET = 20
