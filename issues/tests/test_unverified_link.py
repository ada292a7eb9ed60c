"""An issue from an unverified number (no tenancy at the property it named):
the landlord links the number to the tenancy in one click (service, admin
button, admin action), and until then nothing sent to that number reveals
more than the tenant gave (through the turn engine)."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.admin import helpers
from django.contrib.admin.models import LogEntry
from django.urls import reverse
from django.utils import timezone

from conversations.models import Message
from issues.models import Issue, IssueUpdate
from issues.services import issue_create, issue_number_link
from orchestration.context import turn_context_load, turn_context_render
from orchestration.testing.fixtures import PHONE, call, conversation_for, issue_call
from properties.linking import UNNAMED
from properties.models import Membership, Tenancy, Tenant
from properties.tests.factories import (
    IssueFactory,
    MembershipFactory,
    PropertyFactory,
    TenancyFactory,
    TenantFactory,
    UserFactory,
)
from properties.tests.persona import ConversationFactory

pytestmark = pytest.mark.django_db

STRANGER = "+447700900777"
CHANGELIST = "admin:issues_issue_changelist"


@pytest.fixture
def flat(home):
    return home.properties.get(code="FLAT-1")


@pytest.fixture
def landlord(home):
    user = UserFactory(username="harbour-landlord")
    MembershipFactory(user=user, organization=home, role=Membership.Role.STAFF)
    return user


def stranger_conversation(home, flat, phone=STRANGER, tenant=None):
    return ConversationFactory(organization=home, phone=phone, property=flat, tenant=tenant)


def unverified_issue(conversation, title="Leaking kitchen tap", **fields):
    return IssueFactory(
        organization=conversation.organization,
        property=conversation.property,
        conversation=conversation,
        tenant=conversation.tenant,
        tenant_unverified=True,
        title=title,
        **fields,
    )


# --- the service -------------------------------------------------------------------


def test_linking_adds_the_number_beside_the_tenant_and_verifies_its_open_issues(home, flat, landlord):
    amira = Tenant.objects.get(phone=PHONE)
    conversation = stranger_conversation(home, flat)
    first = unverified_issue(conversation)
    second = unverified_issue(conversation, title="Bedroom window will not close")
    closed = unverified_issue(conversation, title="Old report", status=Issue.Status.CLOSED)
    other = unverified_issue(stranger_conversation(home, flat, phone="+447700900555"), title="Another number")

    result = issue_number_link(issue=first, actor=landlord)

    assert result.changed and result.link.tenant_created and result.link.tenancy_created
    tenant = result.link.tenant
    assert (tenant.phone, tenant.name, tenant.organization) == (STRANGER, UNNAMED.format(phone=STRANGER), home)
    tenancy = Tenancy.objects.get(tenant=tenant)
    assert tenancy.property == flat and tenancy.end_date is None and tenancy.start_date <= timezone.localdate()
    # The tenant already on the tenancy is untouched: their phone still finds them.
    amira.refresh_from_db()
    assert amira.phone == PHONE and Tenancy.objects.filter(tenant=amira, property=flat).count() == 1
    assert sorted(result.verified) == sorted([first.reference, second.reference])
    for issue in (first, second):
        issue.refresh_from_db()
        assert not issue.tenant_unverified and issue.tenant == tenant
        [update] = issue.updates.all()
        assert update.author == IssueUpdate.Author.LANDLORD and update.user == landlord
        assert STRANGER in update.body and "harbour-landlord" in update.body and "FLAT-1" in update.body
    # A closed report of that number and another number's report stay as they were.
    for issue in (closed, other):
        issue.refresh_from_db()
        assert issue.tenant_unverified and not issue.updates.exists()
    conversation.refresh_from_db()
    assert conversation.tenant == tenant


def test_a_second_click_changes_nothing(home, flat, landlord):
    issue = unverified_issue(stranger_conversation(home, flat))
    issue_number_link(issue=issue, actor=landlord)
    before = (Tenant.objects.count(), Tenancy.objects.count(), IssueUpdate.objects.count())

    again = issue_number_link(issue=issue, actor=landlord)

    assert not again.changed and again.link is None and again.verified == []
    assert (Tenant.objects.count(), Tenancy.objects.count(), IssueUpdate.objects.count()) == before


def test_a_verified_issue_is_never_linked(home, flat, landlord):
    """Only an unverified report links a number: a click on a verified one
    does not give its tenant a tenancy that has since ended back."""
    amira = Tenant.objects.get(phone=PHONE)
    Tenancy.objects.filter(tenant=amira).update(end_date=datetime.date(2026, 2, 1))
    issue = IssueFactory(organization=home, property=flat, tenant=amira, conversation=conversation_or_new(home, flat))
    result = issue_number_link(issue=issue, actor=landlord)
    assert not result.changed
    assert Tenancy.objects.filter(tenant=amira).count() == 1


def conversation_or_new(home, flat):
    return ConversationFactory(organization=home, phone=PHONE, property=flat, tenant=Tenant.objects.get(phone=PHONE))


def test_a_known_number_without_a_tenancy_there_keeps_its_tenant_and_name(home, flat, landlord):
    former = TenantFactory(organization=home, phone=STRANGER, name="Olu Former")
    elsewhere = PropertyFactory(organization=home, code="HOUSE-9")
    TenancyFactory(tenant=former, property=elsewhere, start_date=datetime.date(2025, 1, 1))
    issue = unverified_issue(stranger_conversation(home, flat, tenant=former))

    result = issue_number_link(issue=issue, actor=landlord, name="Ignored, they have a name")

    assert not result.link.tenant_created and result.link.tenant == former
    former.refresh_from_db()
    assert former.name == "Olu Former"
    assert set(Tenancy.objects.filter(tenant=former).values_list("property__code", flat=True)) == {"HOUSE-9", "FLAT-1"}


def test_after_linking_the_numbers_next_report_is_verified(home, flat, landlord):
    conversation = stranger_conversation(home, flat)
    issue_number_link(issue=unverified_issue(conversation), actor=landlord)
    conversation.refresh_from_db()
    issue, created = issue_create(
        conversation=conversation,
        title="Front door lock sticks",
        description="The key turns only halfway.",
        category="security",
        urgency="routine",
        location="front door",
        photo="declined",
    )
    assert created and not issue.tenant_unverified


# --- the admin ------------------------------------------------------------------


def test_the_issue_page_offers_the_link_and_one_click_links(client, home, flat, landlord):
    issue = unverified_issue(stranger_conversation(home, flat))
    client.force_login(landlord)
    page = client.get(reverse("admin:issues_issue_change", args=[issue.pk]))
    url = reverse("admin:issues_issue_link_number", args=[issue.pk])
    assert f'action="{url}"' in page.content.decode()

    assert client.get(url).status_code == 403  # a link is not a click: POST only
    response = client.post(url, follow=True)

    assert response.redirect_chain[-1][0] == reverse("admin:issues_issue_change", args=[issue.pk])
    issue.refresh_from_db()
    assert not issue.tenant_unverified
    assert f"{STRANGER} linked to" in response.content.decode()
    assert f'action="{url}"' not in response.content.decode()  # verified: no button any more
    assert LogEntry.objects.filter(object_id=str(issue.pk), user=landlord).exists()
    assert client.post(url, follow=True).status_code == 200  # a second click: nothing twice
    assert IssueUpdate.objects.filter(issue=issue).count() == 1


def test_the_list_marks_unverified_issues_and_its_action_links_them(client, home, flat, landlord):
    conversation = stranger_conversation(home, flat)
    first = unverified_issue(conversation)
    second = unverified_issue(conversation, title="Bedroom window will not close")
    verified = IssueFactory(organization=home, property=flat, tenant=Tenant.objects.get(phone=PHONE))
    client.force_login(landlord)
    html = client.get(reverse(CHANGELIST)).content.decode()
    assert html.count(">unverified<") == 2

    response = client.post(
        reverse(CHANGELIST),
        {"action": "link_number", helpers.ACTION_CHECKBOX_NAME: [first.pk, second.pk, verified.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert not Issue.objects.filter(tenant_unverified=True).exists()
    assert Tenant.objects.filter(phone=STRANGER).count() == 1
    assert IssueUpdate.objects.filter(issue__in=[first, second]).count() == 2
    assert not verified.updates.exists()


def test_another_agency_cannot_link_the_number(client, home, flat):
    from properties.tests.persona import alice_and_bob

    issue = unverified_issue(stranger_conversation(home, flat))
    alice, _ = alice_and_bob()
    client.force_login(alice.user)
    response = client.post(reverse("admin:issues_issue_link_number", args=[issue.pk]))
    assert response.status_code == 404
    client.post(reverse(CHANGELIST), {"action": "link_number", helpers.ACTION_CHECKBOX_NAME: [issue.pk]})
    issue.refresh_from_db()
    assert issue.tenant_unverified and not Tenant.objects.filter(phone=STRANGER).exists()


# --- what an unverified number is told, through the turn engine ---------------------

NEIGHBOUR_ADDRESS = "Flat 2, 40 Quay Road, Leeds"


@pytest.fixture
def lived_in(home, flat):
    """FLAT-1 has its tenant (Amira Khan) with open issues; another home has another tenant."""
    amira = Tenant.objects.get(phone=PHONE)
    quay = PropertyFactory(organization=home, code="QUAY-2", address=NEIGHBOUR_ADDRESS, postcode="LS2 9QQ")
    TenancyFactory(tenant=TenantFactory(organization=home, name="Bartholomew Quill"), property=quay)
    IssueFactory(organization=home, property=quay, reference="R-QUAY01", title="Cracked bathroom tiles")
    boiler = IssueFactory(
        organization=home,
        property=flat,
        tenant=amira,
        reference="R-FL1001",
        title="Boiler losing pressure",
        description="The boiler pressure drops below 1 bar every night.",
        category="heating",
        location="airing cupboard",
    )
    tap = IssueFactory(
        organization=home,
        property=flat,
        tenant=amira,
        reference="R-FL1002",
        title="Leaking kitchen tap",
        description="The cold tap in the kitchen drips constantly since Monday.",
        location="kitchen sink",
    )
    secrets = ["Amira", "Khan", "Bartholomew", "Quill", "Quay Road", "LS2 9QQ", "QUAY"]
    return {"secrets": secrets, "issues": [boiler, tap]}


def told(phone: str = STRANGER) -> list[str]:
    return list(
        Message.objects.filter(conversation__phone=phone, direction="outbound")
        .order_by("id")
        .values_list("body", flat=True)
    )


def assert_reveals_nothing(texts: list[str], lived_in) -> None:
    forbidden = [*lived_in["secrets"]]
    for issue in lived_in["issues"]:
        forbidden += [issue.reference, issue.title, issue.location]
    leaks = [(word, text) for text in texts for word in forbidden if word and word.lower() in text.lower()]
    assert not leaks, leaks


def confirm_address(tenant_says, address="Flat 1, 12 Harbour Street, Leeds LS1 4AB"):
    tenant_says("hi", phone=STRANGER, model=[call("respond", message="What is your address or postcode?")])
    tenant_says(address, phone=STRANGER, model=[call("find_property", address=address)])
    tenant_says("yes", phone=STRANGER, model=[call("confirm_property", confirmed=True)])
    assert conversation_for(STRANGER).property.code == "FLAT-1"


def test_an_unverified_number_is_told_only_what_it_gave(home, lived_in, tenant_says):
    """A new problem, then an emergency: the product's own texts (candidate,
    confirmation, reference, safety advice, emergency recorded) echo the
    address and give references of the number's own issues, nothing more."""
    confirm_address(tenant_says)
    tenant_says(
        "the bedroom window will not close",
        phone=STRANGER,
        model=[call("ask_for_photo", message="Photo?", problem="window will not close", location="bedroom")],
    )
    tenant_says(
        "no photo sorry",
        phone=STRANGER,
        model=[
            issue_call(
                title="Bedroom window will not close",
                description="The bedroom window will not close.",
                category="structural",
                location="bedroom window",
                photo="declined",
                message="Thanks, logged.",
            )
        ],
    )
    tenant_says("I can smell gas in the hall", phone=STRANGER, model=[call("respond", message="Please leave now.")])

    mine = Issue.objects.filter(conversation__phone=STRANGER)
    assert mine.count() == 2 and all(i.tenant_unverified for i in mine)
    texts = told()
    assert all(any(i.reference in t for t in texts) for i in mine)  # they hear their own references
    assert any("12 Harbour Street" in t for t in texts)
    assert_reveals_nothing(texts, lived_in)


def test_an_unverified_report_like_an_open_one_does_not_hear_of_it(home, lived_in, tenant_says):
    confirm_address(tenant_says)
    tenant_says(
        "the cold tap in the kitchen drips",
        phone=STRANGER,
        model=[call("ask_for_photo", message="Photo?", problem="tap drips", location="kitchen")],
    )
    tenant_says("no photo sorry", phone=STRANGER, model=[issue_call(photo="declined", message="Thanks.")])
    # Its own issue: the tenants' open "Leaking kitchen tap" is neither named nor written into.
    assert Issue.objects.filter(property__code="FLAT-1", conversation__phone=STRANGER).count() == 1
    assert_reveals_nothing(told(), lived_in)


def test_the_model_is_not_shown_other_tenants_issues_for_an_unverified_number(home, lived_in, tenant_says):
    confirm_address(tenant_says)
    conversation = conversation_for(STRANGER)
    message = Message.objects.filter(conversation=conversation, direction="inbound").latest("id")
    rendered = turn_context_render(turn_context_load(conversation=conversation, message_ids=[message.pk]))
    assert_reveals_nothing([rendered], lived_in)


def test_an_unverified_emergency_like_an_open_one_does_not_hear_of_it(home, flat, lived_in, tenant_says):
    gas = IssueFactory(
        organization=home,
        property=flat,
        tenant=Tenant.objects.get(phone=PHONE),
        reference="R-FL1003",
        title="Gas smell in the hall",
        description="I can smell gas in the hall",
        category="gas",
        urgency="emergency",
    )
    lived_in["issues"].append(gas)
    confirm_address(tenant_says)
    tenant_says("I can smell gas in the hall", phone=STRANGER, model=[call("respond", message="Please leave now.")])
    # Its own emergency issue, not Amira's open gas issue.
    assert Issue.objects.filter(property=flat, conversation__phone=STRANGER, urgency="emergency").count() == 1
    assert_reveals_nothing(told(), lived_in)
