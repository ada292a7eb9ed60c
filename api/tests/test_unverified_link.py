"""An issue from an unverified number through the API: the flag in the
output and the filter, and ``POST issues/{id}/link-number/``."""

import pytest

from issues.models import Issue, IssueUpdate
from properties.linking import UNNAMED
from properties.models import Tenancy, Tenant
from properties.tests.factories import IssueFactory
from properties.tests.persona import ConversationFactory

pytestmark = pytest.mark.django_db

STRANGER = "+447700910777"


@pytest.fixture
def unverified(worlds):
    alice, _ = worlds
    conversation = ConversationFactory(organization=alice.organization, phone=STRANGER, property=alice.property)
    return IssueFactory(
        organization=alice.organization,
        property=alice.property,
        conversation=conversation,
        tenant_unverified=True,
        reference="ALI-0009",
        title="Bedroom window will not close",
    )


def url(issue) -> str:
    return f"/api/v1/issues/{issue.pk}/link-number/"


def test_the_flag_is_in_the_output_and_filters(alice_api, worlds, unverified):
    alice, _ = worlds
    detail = alice_api.get(f"/api/v1/issues/{unverified.pk}/").json()
    assert detail["tenant_unverified"] is True and detail["tenant"] is None
    assert alice_api.get(f"/api/v1/issues/{alice.routine.pk}/").json()["tenant_unverified"] is False
    listed = alice_api.get("/api/v1/issues/", {"tenant_unverified": "true"}).json()["results"]
    assert [i["reference"] for i in listed] == [unverified.reference]


def test_linking_the_number_verifies_the_issue_once(alice_api, worlds, unverified):
    alice, _ = worlds
    response = alice_api.post(url(unverified), {"name": "Sam Flatmate"}, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    tenant = Tenant.objects.get(phone=STRANGER)
    assert body["linked"] is True and body["phone"] == STRANGER
    assert body["tenant"] == {"id": tenant.pk, "name": "Sam Flatmate", "phone": STRANGER}
    assert body["tenant_created"] is True and body["tenancy_created"] is True
    assert body["tenancy"] == Tenancy.objects.get(tenant=tenant, property=alice.property).pk
    assert body["verified"] == [unverified.reference]
    assert body["issue"]["tenant_unverified"] is False and body["issue"]["tenant"]["id"] == tenant.pk
    [update] = body["issue"]["updates"]
    assert update["author"] == "landlord" and update["user"] == alice.user.pk and STRANGER in update["body"]
    alice.tenant.refresh_from_db()
    assert alice.tenant.phone != STRANGER  # the tenant already there keeps their number

    again = alice_api.post(url(unverified), {}, format="json").json()
    assert again["linked"] is False and again["verified"] == []
    assert IssueUpdate.objects.filter(issue=unverified).count() == 1
    assert Tenancy.objects.filter(tenant=tenant).count() == 1


def test_a_new_number_without_a_name_gets_a_placeholder(alice_api, unverified):
    body = alice_api.post(url(unverified), format="json").json()
    assert body["tenant"]["name"] == UNNAMED.format(phone=STRANGER)


def test_another_agency_gets_404_and_changes_nothing(bob_api, unverified):
    assert bob_api.post(url(unverified), {}, format="json").status_code == 404
    assert Issue.objects.get(pk=unverified.pk).tenant_unverified
    assert not Tenant.objects.filter(phone=STRANGER).exists()


def test_anonymous_callers_and_unknown_fields_are_refused(client, alice_api, unverified):
    assert client.post(url(unverified), {}, content_type="application/json").status_code in (401, 403)
    response = alice_api.post(url(unverified), {"phone": "+447700900001"}, format="json")
    assert response.status_code == 400 and "phone" in response.json()["error"]["fields"]
    assert alice_api.get(url(unverified)).status_code == 405
    assert Issue.objects.get(pk=unverified.pk).tenant_unverified
