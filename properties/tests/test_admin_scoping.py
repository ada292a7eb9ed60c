"""The scoping mixin: one class decides what a landlord sees and changes in every admin."""

import pytest
from auditlog.models import LogEntry
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.urls import reverse
from rest_framework.authtoken.models import TokenProxy

from emergencies.models import EmergencyRule
from evals.models import EvalRun, JudgeVerdict
from privacy.models import AuditEvent, DataRequest, ErasureRecord, RetentionPolicy, RetentionRun
from properties.admin_scoping import OrganizationScopedAdminMixin, OrganizationScopedInlineMixin
from properties.models import Membership, Property, Tenancy
from properties.scoping import SCOPES, organization_id_of, scope_for
from properties.tests.factories import (
    MembershipFactory,
    OrganizationFactory,
    PropertyFactory,
    TenantFactory,
    UserFactory,
)
from properties.tests.persona import alice_and_bob

pytestmark = pytest.mark.django_db

# Third-party admins that keep Django's own model permissions: only superusers
# (or users given those permissions explicitly) reach them; members never do.
# django-axes's login attempts and lockouts span organizations the same way.
# django-auditlog's own table (the product's changes, for operators) likewise.
DJANGO_OWN = {User, Group, TokenProxy, AccessAttempt, AccessLog, AccessFailureLog, LogEntry}
# Evaluation results span organizations: superusers only (see evals/admin.py).
SUPERUSER_ONLY = {EvalRun, JudgeVerdict}
# The data-protection pages decide by role (owners and managers), not only by
# organization: privacy/admin.py scopes them (privacy/tests/test_admin_pages.py).
SCOPED_BY_ROLE = {DataRequest, ErasureRecord, RetentionRun, RetentionPolicy, AuditEvent}


def test_every_registered_admin_and_inline_uses_the_scoping_mixin():
    checked = 0
    for model, model_admin in admin.site._registry.items():
        if model in DJANGO_OWN | SUPERUSER_ONLY | SCOPED_BY_ROLE:
            continue
        assert isinstance(model_admin, OrganizationScopedAdminMixin), model
        assert scope_for(model) is not None, f"{model} missing from SCOPES"
        for inline in model_admin.inlines:
            assert issubclass(inline, OrganizationScopedInlineMixin), inline
            assert scope_for(inline.model) is not None, inline.model
        checked += 1
    assert checked >= 15


def test_evaluation_admins_are_closed_to_members(rf):
    member = MembershipFactory().user
    request = rf.get("/admin/")
    request.user = member
    for model in SUPERUSER_ONLY:
        model_admin = admin.site._registry[model]
        assert not model_admin.has_module_permission(request), model
        assert not model_admin.has_view_permission(request), model


def test_every_scope_path_resolves_to_an_organization():
    alice, _ = alice_and_bob()
    for label in SCOPES:
        if label == "auth.user":
            continue
        model = scope_for_model(label)
        obj = model.objects.filter(**{SCOPES[label].path: alice.organization.pk}).first()
        assert obj is not None, f"persona has no {label}"
        assert organization_id_of(obj) == alice.organization.pk, label


def scope_for_model(label):
    from django.apps import apps

    return apps.get_model(label)


@pytest.fixture
def worlds():
    return alice_and_bob()


def test_foreign_key_choices_only_offer_own_rows_and_refuse_forged_ids(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    response = client.get(reverse("admin:issues_issue_change", args=[alice.routine.pk]))
    form = response.context["adminform"].form
    assert set(form.fields["property"].queryset) == {alice.property}
    assert set(form.fields["tenant"].queryset) == {alice.tenant}

    response = client.post(
        reverse("admin:properties_tenancy_add"),
        {"tenant": bob.tenant.pk, "property": bob.property.pk, "start_date": "2026-02-01"},
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "Select a valid choice" in str(errors["tenant"])
    assert "Select a valid choice" in str(errors["property"])
    assert not Tenancy.objects.filter(start_date="2026-02-01").exists()


def test_autocomplete_returns_only_own_rows(client, worlds):
    _alice, bob = worlds
    client.force_login(bob.user)
    for app_label, model, field in [
        ("issues", "issue", "property"),
        ("issues", "issue", "tenant"),
        ("properties", "tenancy", "tenant"),
        ("properties", "tenancy", "property"),
    ]:
        response = client.get(
            reverse("admin:autocomplete"),
            {"app_label": app_label, "model_name": model, "field_name": field, "term": ""},
        )
        assert response.status_code == 200
        ids = {int(r["id"]) for r in response.json()["results"]}
        expected = {bob.property.pk} if field == "property" else {bob.tenant.pk}
        assert ids == expected, (model, field)


def test_single_organization_landlord_cannot_choose_another_organization(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    response = client.post(
        reverse("admin:properties_property_add"),
        {
            "organization": bob.organization.pk,  # forged: the field is disabled and ignores it
            "code": "NEW-1",
            "address": "2 New Street",
            "postcode": "LS2 2BB",
            "tenancies-TOTAL_FORMS": "0",
            "tenancies-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Property.objects.get(code="NEW-1").organization == alice.organization


def test_unique_code_is_checked_within_the_forced_organization(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    response = client.post(
        reverse("admin:properties_property_add"),
        {
            "code": alice.property.code,
            "address": "duplicate",
            "tenancies-TOTAL_FORMS": "0",
            "tenancies-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "already exists" in str(response.context["adminform"].form.errors)


def test_multi_organization_member_sees_both_and_cannot_mix_them(client, worlds):
    alice, _bob = worlds
    carol = OrganizationFactory(name="Carol Homes")
    MembershipFactory(user=alice.user, organization=carol)
    carol_property = PropertyFactory(organization=carol, code="CAROL-1")
    client.force_login(alice.user)

    response = client.get(reverse("admin:properties_property_changelist"))
    codes = {p.code for p in response.context["cl"].result_list}
    assert codes == {alice.property.code, "CAROL-1"}
    assert "organization" in response.context["cl"].list_display

    response = client.post(
        reverse("admin:properties_tenancy_add"),
        {"tenant": alice.tenant.pk, "property": carol_property.pk, "start_date": "2026-03-01"},
    )
    assert response.status_code == 200
    assert "different organizations" in str(response.context["adminform"].form.errors)
    assert not Tenancy.objects.filter(property=carol_property).exists()


def test_related_list_filter_lists_only_own_properties(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    response = client.get(reverse("admin:issues_issue_changelist"))
    html = response.content.decode()
    assert alice.property.code in html
    assert bob.property.code not in html
    # No organization filter or column for a single-organization landlord.
    assert "organization" not in response.context["cl"].list_display


def test_staff_user_without_membership_sees_nothing(client, worlds):
    stranger = UserFactory(is_staff=True)
    client.force_login(stranger)
    response = client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert response.context["app_list"] == []
    assert client.get(reverse("admin:issues_issue_changelist")).status_code == 403


def test_staff_role_may_not_delete_but_owner_may(client, worlds):
    alice, _ = worlds
    helper = UserFactory()
    MembershipFactory(user=helper, organization=alice.organization, role=Membership.Role.STAFF)
    client.force_login(helper)
    assert client.get(reverse("admin:properties_tenant_delete", args=[alice.tenant.pk])).status_code == 403
    client.force_login(alice.user)
    assert client.get(reverse("admin:properties_tenant_delete", args=[alice.tenant.pk])).status_code == 200


def test_shared_default_rules_are_readable_but_not_changeable_by_landlords(client, worlds):
    alice, bob = worlds
    default = EmergencyRule.objects.create(country="GB", language="en", phrase="shared test phrase", category="gas")
    client.force_login(alice.user)
    response = client.get(reverse("admin:emergencies_emergencyrule_changelist") + "?all=")
    phrases = {r.phrase for r in response.context["cl"].queryset}
    assert {"shared test phrase", alice.rule.phrase} <= phrases
    assert bob.rule.phrase not in phrases

    page = client.get(reverse("admin:emergencies_emergencyrule_change", args=[default.pk]))
    assert page.status_code == 200
    assert page.context["has_change_permission"] is False
    response = client.post(
        reverse("admin:emergencies_emergencyrule_change", args=[default.pk]),
        {"country": "GB", "language": "en", "phrase": "hijacked", "category": "gas", "enabled": "on"},
    )
    assert response.status_code == 403
    default.refresh_from_db()
    assert default.phrase == "shared test phrase"


def test_landlord_rule_goes_into_their_organization(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    response = client.post(
        reverse("admin:emergencies_emergencyrule_add"),
        {"country": "GB", "language": "pl", "phrase": "czuję gaz", "category": "gas", "enabled": "on"},
    )
    assert response.status_code == 302
    assert EmergencyRule.objects.get(phrase="czuję gaz").organization == alice.organization


def test_landlord_cannot_change_routing_fields_of_their_organization(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    response = client.get(reverse("admin:properties_organization_change", args=[alice.organization.pk]))
    form = response.context["adminform"].form
    assert "slug" not in form.fields
    assert "messaging_service_sid" not in form.fields
    assert "llm_orchestration_enabled" in form.fields
    assert "emergency_contact_phone" in form.fields
    # WhatsApp numbers are listed, read-only.
    assert alice.number.number in response.content.decode()


def test_superuser_sees_every_organization(client, worlds):
    alice, bob = worlds
    root = UserFactory(is_superuser=True)
    client.force_login(root)
    response = client.get(reverse("admin:issues_issue_changelist"))
    references = {i.reference for i in response.context["cl"].result_list}
    assert {alice.emergency.reference, bob.emergency.reference} <= references
    assert "organization" in response.context["cl"].list_display


def test_tenant_search_finds_own_rows_only(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    response = client.get(reverse("admin:properties_tenant_changelist"), {"q": "tenant"})
    assert {t.pk for t in response.context["cl"].result_list} == {alice.tenant.pk}
    assert TenantFactory(organization=bob.organization, name="tenant three")
    response = client.get(reverse("admin:properties_tenant_changelist"), {"q": "three"})
    assert list(response.context["cl"].result_list) == []


def test_landlord_switches_the_llm_assistant_for_their_organization(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    url = reverse("admin:properties_organization_change", args=[alice.organization.pk])
    page = client.get(url)
    assert "Follow the site-wide setting" in page.content.decode()
    data = {
        "name": alice.organization.name,
        "country": "GB",
        "timezone": "Europe/London",
        "llm_orchestration_enabled": "false",
        # vision_enabled left unticked: photos are not shown to the model.
        "emergency_sensitivity": "low",
        "emergency_contact_phone": "+447700900555",
        "whatsapp_numbers-TOTAL_FORMS": "1",
        "whatsapp_numbers-INITIAL_FORMS": "1",
        "memberships-TOTAL_FORMS": "1",
        "memberships-INITIAL_FORMS": "1",
    }
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    alice.organization.refresh_from_db()
    assert alice.organization.llm_orchestration_enabled is False
    assert alice.organization.vision_enabled is False
    assert alice.organization.emergency_sensitivity == "low"
    assert alice.organization.emergency_contact_phone == "+447700900555"
    assert alice.organization.slug == "alice"


def test_login_attempts_and_lockouts_are_closed_to_members(rf):
    member = MembershipFactory().user
    member.is_staff = True
    request = rf.get("/admin/")
    request.user = member
    for model in (AccessAttempt, AccessLog, AccessFailureLog):
        model_admin = admin.site._registry[model]
        assert not model_admin.has_module_permission(request), model
        assert not model_admin.has_view_permission(request), model


def test_an_inlines_rows_are_deleted_only_with_a_deleting_role_in_the_parents_organization(rf, worlds):
    # Django asks an inline with its parent object, here a property: the
    # staff role in Alice's agency decides, not a manager's role at Bob's.
    alice, bob = worlds
    user = UserFactory()
    MembershipFactory(user=user, organization=alice.organization, role=Membership.Role.STAFF)
    MembershipFactory(user=user, organization=bob.organization, role=Membership.Role.MANAGER)
    request = rf.get("/")
    request.user = user
    property_admin = admin.site._registry[Property]
    [tenancies] = [i for i in property_admin.get_inline_instances(request, alice.property) if i.model is Tenancy]
    assert tenancies.has_change_permission(request, alice.property)
    assert not tenancies.has_delete_permission(request, alice.property)
    assert tenancies.has_delete_permission(request, bob.property)
