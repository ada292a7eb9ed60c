"""The Data protection section of the admin: every page opens for an owner,
shows only the owner's organization, and a staff member may look at requests
but not decide them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from privacy.erasure import tenant_erase
from privacy.models import DataRequest, ErasureRecord, RetentionPolicy
from privacy.retention import retention_apply

pytestmark = pytest.mark.django_db

PAGES = ["datarequest", "erasurerecord", "retentionrun", "retentionpolicy", "auditevent"]


def test_each_page_opens_for_an_owner_and_shows_only_their_rows(worlds, client):
    alice, bob = worlds
    tenant_erase(tenant=bob.tenant, user=bob.user, via="admin")
    RetentionPolicy.objects.create(organization=bob.organization)
    retention_apply()
    DataRequest.objects.create(organization=bob.organization, tenant=bob.tenant)
    client.force_login(alice.user)
    for page in PAGES:
        response = client.get(reverse(f"admin:privacy_{page}_changelist"))
        assert response.status_code == 200, page
        assert response.context["cl"].result_count == 0, page  # all of it is Bob's
    assert (
        client.get(reverse("admin:privacy_erasurerecord_change", args=[ErasureRecord.objects.get().pk])).status_code
        == 404
    )
    assert client.get(reverse("admin:privacy_datarequest_add")).status_code == 200
    assert client.get(reverse("admin:privacy_retentionpolicy_add")).status_code == 200


def test_an_owner_adds_a_request_only_for_their_own_tenants(worlds, client):
    alice, bob = worlds
    client.force_login(alice.user)
    url = reverse("admin:privacy_datarequest_add")
    refused = client.post(url, {"tenant": bob.tenant.pk, "kind": "export"})
    assert refused.status_code == 200 and not DataRequest.objects.exists()  # the form refuses the choice
    client.post(url, {"tenant": alice.tenant.pk, "kind": "erasure"})
    request = DataRequest.objects.get()
    assert (request.organization, request.source, request.status) == (alice.organization, "admin", "pending")


def test_staff_may_look_but_not_decide(worlds, client, alice_staff):
    alice, _ = worlds
    request = DataRequest.objects.create(organization=alice.organization, tenant=alice.tenant, kind="erasure")
    client.force_login(alice_staff)
    page = client.get(reverse("admin:privacy_datarequest_changelist"))
    assert page.status_code == 200 and page.context["cl"].result_count == 1
    assert b"approve_erasure" not in page.content
    client.post(
        reverse("admin:privacy_datarequest_changelist"),
        {"action": "approve_erasure", "_selected_action": [request.pk], "confirm": "yes"},
    )
    assert not ErasureRecord.objects.exists()
    assert client.get(reverse("admin:privacy_auditevent_changelist")).status_code == 403


def test_a_request_from_an_unknown_number_is_linked_to_a_tenant_then_decided(worlds, client):
    alice, bob = worlds
    request = DataRequest.objects.create(organization=alice.organization, kind="export", source="whatsapp")
    client.force_login(alice.user)
    url = reverse("admin:privacy_datarequest_change", args=[request.pk])
    client.post(url, {"tenant": bob.tenant.pk})  # not a choice she has
    request.refresh_from_db()
    assert request.tenant is None
    client.post(url, {"tenant": alice.tenant.pk})
    request.refresh_from_db()
    assert request.tenant == alice.tenant


def test_a_request_added_without_a_tenant_is_a_form_error(worlds, client):
    alice, _ = worlds
    client.force_login(alice.user)
    response = client.post(reverse("admin:privacy_datarequest_add"), {"tenant": "", "kind": "export"})
    assert response.status_code == 200 and "tenant" in response.context["adminform"].form.errors
    assert not DataRequest.objects.exists()


def test_a_request_is_linked_only_to_a_tenant_of_its_own_organization(worlds, client):
    # A manager of two organizations is offered only the request's organization's tenants.
    alice, bob = worlds
    from properties.models import Membership

    Membership.objects.create(user=alice.user, organization=bob.organization, role="manager")
    request = DataRequest.objects.create(organization=alice.organization, kind="export", source="whatsapp")
    client.force_login(alice.user)
    response = client.post(reverse("admin:privacy_datarequest_change", args=[request.pk]), {"tenant": bob.tenant.pk})
    assert response.status_code == 200 and "tenant" in response.context["adminform"].form.errors
    request.refresh_from_db()
    assert request.tenant is None


def test_a_decided_export_is_not_approved_again(worlds, client):
    alice, _ = worlds
    request = DataRequest.objects.create(
        organization=alice.organization, tenant=alice.tenant, kind="export", status="rejected"
    )
    client.force_login(alice.user)
    response = client.post(
        reverse("admin:privacy_datarequest_changelist"),
        {"action": "approve_export", "_selected_action": [request.pk]},
        follow=True,
    )
    assert response["Content-Type"].startswith("text/html")  # no ZIP
    assert "already decided" in response.content.decode()
    request.refresh_from_db()
    assert request.status == "rejected"
