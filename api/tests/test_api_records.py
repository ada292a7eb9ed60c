"""Properties, tenants and tenancies through the API."""

import datetime

import pytest
from django.utils import timezone

from api.tests.conftest import token_client
from properties.models import Property, Tenancy, Tenant
from properties.tests.factories import MembershipFactory, OrganizationFactory, PropertyFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_property_list_create_and_change(alice_api, worlds):
    alice, _ = worlds
    body = alice_api.get("/api/v1/properties/").json()
    assert [p["code"] for p in body["results"]] == [alice.property.code]
    assert body["results"][0]["open_issue_count"] == 2

    response = alice_api.post("/api/v1/properties/", {"code": "FLAT-9", "address": "9 Mill Lane"}, format="json")
    assert response.status_code == 201, response.json()
    created = Property.objects.get(code="FLAT-9")
    assert created.organization == alice.organization
    assert response.json()["open_issue_count"] == 0

    response = alice_api.patch(f"/api/v1/properties/{created.pk}/", {"postcode": "LS9 9ZZ"}, format="json")
    assert response.status_code == 200
    assert response.json()["postcode"] == "LS9 9ZZ"

    assert alice_api.get("/api/v1/properties/", {"q": "mill"}).json()["count"] == 1


def test_duplicate_code_and_unknown_fields_are_400(alice_api, worlds):
    alice, _ = worlds
    response = alice_api.post("/api/v1/properties/", {"code": alice.property.code, "address": "x"}, format="json")
    assert response.status_code == 400
    assert "already exists" in str(response.json()["error"]["fields"])
    response = alice_api.post("/api/v1/properties/", {"code": "A", "address": "x", "colour": "red"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"colour": ["Unknown field."]}


def test_member_of_several_organizations_must_say_which(worlds):
    alice, _ = worlds
    carol = OrganizationFactory(name="Carol")
    MembershipFactory(user=alice.user, organization=carol)
    api = token_client(alice.user)
    response = api.post("/api/v1/properties/", {"code": "C-1", "address": "x"}, format="json")
    assert response.status_code == 400
    assert "several organizations" in response.json()["error"]["fields"]["organization"][0]
    response = api.post("/api/v1/properties/", {"organization": carol.pk, "code": "C-1", "address": "x"}, format="json")
    assert response.status_code == 201
    assert Property.objects.get(code="C-1").organization == carol


def test_tenant_create_validates_the_phone_number(alice_api, worlds):
    response = alice_api.post("/api/v1/tenants/", {"name": "Zed", "phone": "07700 900000"}, format="json")
    assert response.status_code == 400
    assert "international format" in response.json()["error"]["fields"]["phone"][0]
    response = alice_api.post("/api/v1/tenants/", {"name": "Zed", "phone": "+44 7700 900999"}, format="json")
    assert response.status_code == 201
    assert Tenant.objects.get(phone="+447700900999").organization == worlds[0].organization
    tenant_id = response.json()["id"]
    response = alice_api.patch(f"/api/v1/tenants/{tenant_id}/", {"email": "zed@example.com"}, format="json")
    assert response.json()["email"] == "zed@example.com"


def test_two_creates_of_the_same_tenant_at_once_give_a_409_not_a_500(alice_api, worlds, monkeypatch):
    """Both requests pass validation before either commits (as two at once
    do); the database keeps one and the other is told why."""
    payload = {"name": "Zed", "phone": "+447700900999"}
    assert alice_api.post("/api/v1/tenants/", payload, format="json").status_code == 201
    monkeypatch.setattr(Tenant, "validate_unique", lambda self, exclude=None: None)  # the race's second request
    monkeypatch.setattr(Tenant, "validate_constraints", lambda self, exclude=None: None)
    response = alice_api.post("/api/v1/tenants/", payload, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict" and "sent twice" in response.json()["error"]["message"]
    assert Tenant.objects.filter(phone="+447700900999").count() == 1


def test_tenancy_create_checks_dates_and_lists_with_filters(alice_api, worlds):
    alice, _ = worlds
    tenant = alice_api.post("/api/v1/tenants/", {"name": "New", "phone": "+447700900777"}, format="json").json()
    payload = {
        "tenant": tenant["id"],
        "property": alice.property.pk,
        "start_date": "2026-05-01",
        "end_date": "2026-04-01",
    }
    response = alice_api.post("/api/v1/tenancies/", payload, format="json")
    assert response.status_code == 400
    assert "cannot end before it starts" in response.json()["error"]["fields"]["end_date"][0]
    payload["end_date"] = None
    response = alice_api.post("/api/v1/tenancies/", payload, format="json")
    assert response.status_code == 201
    assert response.json()["tenant"] == {"id": tenant["id"], "name": "New"}
    assert Tenancy.objects.filter(tenant_id=tenant["id"]).count() == 1
    listed = alice_api.get("/api/v1/tenancies/", {"tenant": tenant["id"], "current": "true"}).json()
    assert listed["count"] == 1
    tenancy_id = listed["results"][0]["id"]
    response = alice_api.patch(f"/api/v1/tenancies/{tenancy_id}/", {"end_date": "2026-12-31"}, format="json")
    assert response.json()["end_date"] == "2026-12-31"
    assert (
        alice_api.get(f"/api/v1/tenants/{tenant['id']}/").json()["tenancies"][0]["property_code"] == alice.property.code
    )
    next_month = (timezone.localdate() + datetime.timedelta(days=31)).isoformat()
    payload.update(end_date=None, property=PropertyFactory(organization=alice.organization).pk, start_date=next_month)
    assert alice_api.post("/api/v1/tenancies/", payload, format="json").status_code == 201
    current = alice_api.get("/api/v1/tenancies/", {"tenant": tenant["id"], "current": "true"}).json()
    assert current["count"] == 1  # one not started yet is not current
    assert alice_api.get("/api/v1/tenancies/", {"tenant": tenant["id"], "current": "false"}).json()["count"] == 1


def test_user_without_membership_is_forbidden():
    api = token_client(UserFactory())
    response = api.get("/api/v1/properties/")
    assert response.status_code == 403
    assert response.json()["error"] == {
        "status": 403,
        "code": "permission_denied",
        "message": "Your account is not a member of any organization.",
    }
