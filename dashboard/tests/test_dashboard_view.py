"""The dashboard page in the admin: only the user's own organizations'
figures, the login in front of it, a link from the home page, and the same
number of queries however many issues there are."""

from __future__ import annotations

import datetime

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from dashboard.tests.builders import DAY, HOUR, clock_at, issue_at
from properties.models import Membership
from properties.tests.factories import MembershipFactory, OrganizationFactory, PropertyFactory, UserFactory
from properties.tests.persona import alice_and_bob

pytestmark = pytest.mark.django_db

URL = "/admin/dashboard/"


@pytest.fixture
def worlds():
    """Alice's and Bob's agencies, each with a resolved, rated issue at a
    property of its own and a clock met in time."""
    alice, bob = alice_and_bob()
    now = timezone.now()
    for world, rating in ((alice, 5), (bob, 1)):
        home = PropertyFactory.create(organization=world.organization, code=f"{world.organization.slug.upper()}-HOME")
        issue = issue_at(
            world.organization,
            property=home,
            created=now - 2 * DAY,
            status="closed",
            acknowledged=now - 2 * DAY + HOUR,
            resolved=now - DAY,
            rating=rating,
        )
        clock_at(issue, started=now - 2 * DAY, due=now, met=now - DAY)
        world.objects["home"] = home
    return alice, bob


def test_the_url_is_the_admins_own():
    assert reverse("admin:dashboard") == URL


def test_anonymous_is_sent_to_the_login(client):
    response = client.get(URL)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('admin:login')}?next={URL}"


def test_a_user_who_is_not_staff_is_sent_to_the_login(client):
    user = UserFactory.create(is_staff=False)
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 302 and response["Location"].startswith(reverse("admin:login"))


def test_a_landlord_sees_only_their_own_organizations_figures(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    response = client.get(URL)
    assert response.status_code == 200
    page = response.content.decode()
    assert alice.home.code in page and bob.home.code not in page
    assert bob.property.code not in page and bob.contractor.name not in page
    figures = response.context["figures"]
    assert figures.ratings.counts == {1: 0, 2: 0, 3: 0, 4: 0, 5: 1}  # Alice's 5, never Bob's 1
    assert {row.label.split(" · ")[0] for row in figures.by_property.rows} == {alice.home.code, alice.property.code}
    assert figures.open_by_age.total == 2  # the persona's emergency and routine issue
    # The charts are inline SVG, with the numbers in tables beside them.
    assert page.count('class="chart" role="img"') == 9
    assert 'id="chart-open-by-age"' in page and "The numbers" in page


def test_asking_for_another_organization_shows_nothing_of_it(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    page = client.get(URL, {"organization": bob.organization.pk}).content.decode()
    assert bob.home.code not in page and alice.home.code in page


def test_a_member_of_two_organizations_chooses_one(client, worlds):
    alice, bob = worlds
    MembershipFactory.create(user=alice.user, organization=bob.organization, role=Membership.Role.OWNER)
    client.force_login(alice.user)
    both = client.get(URL).content.decode()
    assert alice.home.code in both and bob.home.code in both
    assert 'name="organization"' in both
    only_bob = client.get(URL, {"organization": bob.organization.pk}).content.decode()
    assert bob.home.code in only_bob and alice.home.code not in only_bob


def test_a_superuser_sees_every_organization_and_may_choose_one(client, worlds):
    alice, bob = worlds
    client.force_login(UserFactory.create(is_superuser=True))
    everyone = client.get(URL)
    assert everyone.context["figures"].ratings.total == 2
    assert len(everyone.context["organizations"]) == 2
    alices = client.get(URL, {"organization": alice.organization.pk}).context["figures"]
    assert (alices.ratings.counts[5], alices.ratings.total) == (1, 1)
    bobs = client.get(URL, {"organization": bob.organization.pk}).context["figures"]
    assert (bobs.ratings.counts[1], bobs.ratings.total) == (1, 1)


def test_a_user_with_no_organization_sees_an_empty_dashboard(client, worlds):
    client.force_login(UserFactory.create())
    response = client.get(URL)
    assert response.status_code == 200
    page = response.content.decode()
    assert "not a member of any organization" in page
    figures = response.context["figures"]
    assert figures.open_by_age.total == 0 and figures.ratings.total == 0 and not figures.by_property.rows
    assert page.count(">No data yet<") == 9


def test_weeks_are_counted_in_the_organizations_time_zone(client, worlds):
    alice, _ = worlds
    alice.organization.timezone = "Pacific/Auckland"
    alice.organization.save(update_fields=["timezone"])
    client.force_login(alice.user)
    # Monday 00:30 in Auckland, still Sunday in UTC: the week shown last starts that Monday.
    with time_machine.travel(datetime.datetime(2026, 11, 22, 11, 30, tzinfo=datetime.UTC), tick=False):
        figures = client.get(URL).context["figures"]
    assert figures.durations[0].weeks[-1].start == datetime.date(2026, 11, 23)
    # A member of two agencies in that zone sees both in it; in two zones, in the project's.
    second = OrganizationFactory(timezone="Pacific/Auckland")
    MembershipFactory(user=alice.user, organization=second)
    with time_machine.travel(datetime.datetime(2026, 11, 22, 11, 30, tzinfo=datetime.UTC), tick=False):
        figures = client.get(URL).context["figures"]
    assert figures.durations[0].weeks[-1].start == datetime.date(2026, 11, 23)
    second.timezone = "Europe/London"
    second.save(update_fields=["timezone"])
    with time_machine.travel(datetime.datetime(2026, 11, 22, 11, 30, tzinfo=datetime.UTC), tick=False):
        figures = client.get(URL).context["figures"]
    assert figures.durations[0].weeks[-1].start == datetime.date(2026, 11, 16)


def test_the_home_page_links_to_the_dashboard(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    assert f'href="{URL}"' in client.get(reverse("admin:index")).content.decode()


def test_the_dashboard_costs_the_same_queries_with_more_data(client, worlds, django_assert_max_num_queries):
    alice, _ = worlds
    client.force_login(alice.user)
    client.get(URL)
    now = timezone.now()
    for n in range(20):
        home = PropertyFactory.create(organization=alice.organization)
        issue = issue_at(
            alice.organization, property=home, created=now - n * DAY, status="closed", resolved=now, rating=n % 5 + 1
        )
        clock_at(issue, started=now - n * DAY, due=now - HOUR, met=now - 2 * HOUR)
    with django_assert_max_num_queries(DASHBOARD_QUERY_BUDGET):
        client.get(URL)


DASHBOARD_QUERY_BUDGET = 22
