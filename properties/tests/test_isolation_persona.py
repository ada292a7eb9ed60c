"""Tenant isolation persona: Bob's staff user and Bob's token get nothing of
Alice's, in any admin page, search, filter, autocomplete, action or custom
view, and in any API list, detail, filter or write."""

import datetime

import pytest
from django.contrib import admin
from django.contrib.admin import helpers
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from api.tests.conftest import token_client
from conversations.models import Conversation, Message
from issues.models import Issue, IssueUpdate
from properties.admin_scoping import OrganizationScopedAdminMixin
from properties.models import Tenant
from properties.tests.factories import IssueFactory, PropertyFactory
from properties.tests.persona import alice_and_bob
from retrieval.models import Document

pytestmark = pytest.mark.django_db

# Every persona object that has its own admin pages.
ADMIN_OBJECTS = [
    "organization",
    "membership",
    "property",
    "tenant",
    "tenancy",
    "conversation",
    "inbound",
    "outbound",
    "media",
    "turn",
    "alert",
    "emergency",
    "routine",
    "document",
    "chunk",
    "rule",
    "safety",
    "policy",
    "contractor",
]


@pytest.fixture
def worlds():
    return alice_and_bob()


@pytest.fixture
def bob_admin(client, worlds):
    client.force_login(worlds[1].user)
    return client


def alices_objects(alice):
    return [getattr(alice, name) for name in ADMIN_OBJECTS]


def admin_url(obj, view):
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=[obj.pk])


def scoped_admins():
    return [ma for ma in admin.site._registry.values() if isinstance(ma, OrganizationScopedAdminMixin)]


def mentions_alice(html: str) -> bool:
    lowered = html.lower()
    return "alice" in lowered or "ali-0" in lowered


# --- admin ------------------------------------------------------------------------


def test_every_object_page_of_alice_is_404_for_bob(bob_admin, worlds):
    alice, _ = worlds
    checked = 0
    for obj in alices_objects(alice):
        for view in ("change", "delete", "history"):
            response = bob_admin.get(admin_url(obj, view))
            assert response.status_code == 404, (obj, view, response.status_code)
            assert not mentions_alice(response.content.decode())
            checked += 1
        response = bob_admin.post(admin_url(obj, "change"), {})
        assert response.status_code == 404, obj
        response = bob_admin.post(admin_url(obj, "delete"), {"post": "yes"})
        assert response.status_code == 404, obj
    assert checked == 3 * len(ADMIN_OBJECTS)
    # Nothing was deleted or changed.
    for obj in alices_objects(alice):
        assert type(obj).objects.filter(pk=obj.pk).exists(), obj


def test_the_same_objects_are_reachable_by_alice(client, worlds):
    """The 404s above are isolation, not broken pages."""
    alice, _ = worlds
    client.force_login(alice.user)
    for obj in alices_objects(alice):
        assert client.get(admin_url(obj, "change")).status_code == 200, obj


def test_custom_admin_views_are_404_for_bob(bob_admin, worlds):
    alice, _ = worlds
    conversation = alice.conversation
    assert bob_admin.get(reverse("admin:issues_issue_status", args=[alice.routine.pk])).status_code == 404
    response = bob_admin.post(reverse("admin:issues_issue_status", args=[alice.routine.pk]), {"status": "resolved"})
    assert response.status_code == 404
    for name in ("takeover", "handback", "send"):
        url = reverse(f"admin:conversations_conversation_{name}", args=[conversation.pk])
        assert bob_admin.post(url, {"body": "hijack"}).status_code == 404, name
    assert bob_admin.get(reverse("admin:conversations_media_file", args=[alice.media.pk])).status_code == 404
    conversation.refresh_from_db()
    alice.routine.refresh_from_db()
    assert conversation.bot_paused is False
    assert alice.routine.status == "open"
    assert not Message.objects.filter(body="hijack").exists()


def test_every_change_list_search_and_filter_hides_alice(bob_admin, worlds):
    alice, bob = worlds
    checked = 0
    for model_admin in scoped_admins():
        opts = model_admin.model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        response = bob_admin.get(url)
        assert response.status_code == 200, url
        assert not mentions_alice(response.content.decode()), url
        if model_admin.search_fields:
            response = bob_admin.get(url, {"q": "alice"})
            assert list(response.context["cl"].result_list) == [], url
        checked += 1
    assert checked >= 15
    # Filtering by Alice's property id finds none of her issues.
    # Two properties with issues, so the property filter is active.
    IssueFactory(organization=bob.organization, property=PropertyFactory(organization=bob.organization))
    response = bob_admin.get(reverse("admin:issues_issue_changelist"), {"property__id__exact": alice.property.pk})
    assert list(response.context["cl"].result_list) == []
    assert not mentions_alice(response.content.decode())


def test_autocomplete_never_offers_alice(bob_admin, worlds):
    checked = 0
    for model_admin in scoped_admins():
        opts = model_admin.model._meta
        for field in model_admin.autocomplete_fields:
            response = bob_admin.get(
                reverse("admin:autocomplete"),
                {"app_label": opts.app_label, "model_name": opts.model_name, "field_name": field, "term": "a"},
            )
            if field == "user":  # Django's own user admin: members lack its permission
                assert response.status_code == 403
            else:
                assert response.status_code == 200
                assert not mentions_alice(response.content.decode()), (opts.model_name, field)
            checked += 1
    assert checked >= 5


def test_actions_with_alices_ids_do_nothing(bob_admin, worlds):
    alice, _ = worlds
    tomorrow = (timezone.now().date() + datetime.timedelta(days=1)).isoformat()
    issue_ids = [alice.emergency.pk, alice.routine.pk]
    url = reverse("admin:issues_issue_changelist")
    for action, extra in [
        ("acknowledge", {}),
        ("resolve", {}),
        ("schedule", {"apply": "1", "scheduled_for": tomorrow}),
    ]:
        bob_admin.post(url, {"action": action, helpers.ACTION_CHECKBOX_NAME: issue_ids, **extra})
    bob_admin.post(
        reverse("admin:conversations_conversation_changelist"),
        {"action": "take_over", helpers.ACTION_CHECKBOX_NAME: [alice.conversation.pk]},
    )
    bob_admin.post(
        reverse("admin:properties_tenant_changelist"),
        {"action": "delete_selected", "post": "yes", helpers.ACTION_CHECKBOX_NAME: [alice.tenant.pk]},
    )
    assert set(Issue.objects.filter(pk__in=issue_ids).values_list("status", flat=True)) == {"open"}
    assert not IssueUpdate.objects.filter(issue_id__in=issue_ids, author="landlord").exists()
    assert not Message.objects.filter(conversation=alice.conversation, author="landlord").exists()
    assert Conversation.objects.get(pk=alice.conversation.pk).bot_paused is False
    assert Tenant.objects.filter(pk=alice.tenant.pk).exists()


def test_reingest_action_ignores_alices_documents(bob_admin, worlds, django_capture_on_commit_callbacks):
    alice, _ = worlds
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        bob_admin.post(
            reverse("admin:retrieval_document_changelist"),
            {"action": "reingest", helpers.ACTION_CHECKBOX_NAME: [alice.document.pk]},
        )
    assert callbacks == []
    assert Document.objects.get(pk=alice.document.pk).status == Document.Status.READY


def test_admin_urls_cover_every_scoped_admin(worlds):
    """Each scoped admin with object pages has an Alice object in ADMIN_OBJECTS."""
    alice, _ = worlds
    covered = {type(obj) for obj in alices_objects(alice)}
    for model_admin in scoped_admins():
        try:
            reverse(f"admin:{model_admin.opts.app_label}_{model_admin.opts.model_name}_change", args=[1])
        except NoReverseMatch:
            continue
        assert model_admin.model in covered, model_admin.model


# --- API --------------------------------------------------------------------------

API_LISTS = [
    ("/api/v1/issues/", ["emergency", "routine"]),
    ("/api/v1/properties/", ["property"]),
    ("/api/v1/contractors/", ["contractor"]),
    ("/api/v1/tenants/", ["tenant"]),
    ("/api/v1/tenancies/", ["tenancy"]),
    ("/api/v1/conversations/", ["conversation"]),
    ("/api/v1/documents/", ["document"]),
]
API_DETAILS = [
    ("/api/v1/issues/{}/", "emergency"),
    ("/api/v1/issues/{}/", "routine"),
    ("/api/v1/properties/{}/", "property"),
    ("/api/v1/contractors/{}/", "contractor"),
    ("/api/v1/issues/{}/dispatch/", "emergency"),
    ("/api/v1/tenants/{}/", "tenant"),
    ("/api/v1/tenancies/{}/", "tenancy"),
    ("/api/v1/conversations/{}/", "conversation"),
    ("/api/v1/conversations/{}/messages/", "conversation"),
    ("/api/v1/documents/{}/", "document"),
]
MISSING_ID = 987654321


def test_api_lists_show_bob_only_his_own(worlds):
    _alice, bob = worlds
    api = token_client(bob.user)
    for url, names in API_LISTS:
        body = api.get(url).json()
        ids = {item["id"] for item in body["results"]}
        assert ids == {getattr(bob, name).pk for name in names}, url
        assert not mentions_alice(str(body)), url


def test_api_details_of_alice_are_the_same_404_as_missing_objects(worlds):
    alice, bob = worlds
    api = token_client(bob.user)
    for template, name in API_DETAILS:
        missing = api.get(template.format(MISSING_ID))
        response = api.get(template.format(getattr(alice, name).pk))
        assert response.status_code == 404, template
        assert response.content == missing.content
        assert response.json() == {"error": {"status": 404, "code": "not_found", "message": "Not found."}}
        # and Alice's own token reaches it
        assert token_client(alice.user).get(template.format(getattr(alice, name).pk)).status_code == 200


def test_api_writes_to_alices_objects_are_404_and_change_nothing(worlds):
    alice, bob = worlds
    api = token_client(bob.user)
    patches = [
        (f"/api/v1/issues/{alice.emergency.pk}/", {"status": "resolved"}),
        (f"/api/v1/properties/{alice.property.pk}/", {"address": "hijacked"}),
        (f"/api/v1/tenants/{alice.tenant.pk}/", {"name": "hijacked"}),
        (f"/api/v1/tenancies/{alice.tenancy.pk}/", {"end_date": "2026-02-01"}),
    ]
    for url, payload in patches:
        assert api.patch(url, payload, format="json").status_code == 404, url
    alice.emergency.refresh_from_db()
    alice.property.refresh_from_db()
    alice.tenant.refresh_from_db()
    alice.tenancy.refresh_from_db()
    assert alice.emergency.status == "open"
    assert alice.property.address != "hijacked"
    assert alice.tenant.name != "hijacked"
    assert alice.tenancy.end_date is None
    assert not Message.objects.filter(conversation=alice.conversation, author="landlord").exists()


def test_api_filters_and_references_to_alices_ids_reveal_nothing(worlds):
    alice, bob = worlds
    api = token_client(bob.user)
    assert api.get("/api/v1/issues/", {"property": alice.property.pk}).json()["results"] == []
    assert api.get("/api/v1/issues/", {"tenant": alice.tenant.pk}).json()["results"] == []
    assert api.get("/api/v1/conversations/", {"tenant": alice.tenant.pk}).json()["results"] == []

    def tenancy_error(tenant_id):
        payload = {"tenant": tenant_id, "property": bob.property.pk, "start_date": "2026-06-01"}
        response = api.post("/api/v1/tenancies/", payload, format="json")
        assert response.status_code == 400
        return response.json()["error"]["fields"]["tenant"][0].replace(str(tenant_id), "ID")

    assert tenancy_error(alice.tenant.pk) == tenancy_error(MISSING_ID) == "No tenant with id ID."

    from django.core.files.uploadedfile import SimpleUploadedFile

    response = api.post(
        "/api/v1/documents/", {"file": SimpleUploadedFile("x.md", b"hello"), "property": alice.property.pk}
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["property"] == [f"No property with id {alice.property.pk}."]
    response = api.post(
        "/api/v1/properties/", {"organization": alice.organization.pk, "code": "X", "address": "x"}, format="json"
    )
    assert response.status_code == 400
    assert not alice.organization.properties.filter(code="X").exists()
