"""No admin list grows its query count with its rows (no N+1 in any column)."""

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from properties.admin_scoping import OrganizationScopedAdminMixin
from properties.tests.factories import UserFactory
from properties.tests.persona import alice_and_bob, world_build

pytestmark = pytest.mark.django_db


def changelist_query_counts(client) -> dict[str, int]:
    counts = {}
    for model_admin in admin.site._registry.values():
        if not isinstance(model_admin, OrganizationScopedAdminMixin):
            continue
        opts = model_admin.model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url)
        assert response.status_code == 200, url
        counts[opts.label] = len(captured)
    return counts


@pytest.mark.parametrize("who", ["superuser", "landlord"])
def test_every_change_list_has_a_flat_query_count(client, who):
    alice, _ = alice_and_bob()
    client.force_login(UserFactory(is_superuser=True) if who == "superuser" else alice.user)

    def more(name):
        world = world_build(name, phone_prefix=f"+4477009{ord(name[0])}")
        if who == "landlord":  # Alice sees the new agency's rows too
            alice.user.memberships.create(organization=world.organization)

    # A landlord of one agency has no organization filter; start from two.
    more("Carol")
    before = changelist_query_counts(client)
    for name in ("Dave", "Erin", "Fred"):
        more(name)
    after = changelist_query_counts(client)
    grown = {label: (before[label], after[label]) for label in before if after[label] != before[label]}
    assert grown == {}, f"query counts grew with rows: {grown}"
