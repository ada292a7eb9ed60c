"""Who the tenant is, through the whole turn: an unknown number's address as a
model really passes it, to a candidate, a confirmed property and an issue the
landlord sees as unverified; ambiguous addresses asked about, never guessed;
a tenant with two homes who names one up front is not asked again."""

from __future__ import annotations

import datetime

import pytest
from django.core import mail
from django.utils import timezone

from issues.models import Issue
from orchestration.models import Turn
from orchestration.testing.fixtures import PHONE, call, conversation_for, issue_call
from properties.models import Tenancy
from properties.tests.factories import OrganizationFactory, PropertyFactory, TenancyFactory, TenantFactory

pytestmark = pytest.mark.django_db

STRANGER = "+447700900777"
PHOTO = [("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM7/Media/ME1", "image/jpeg")]


def _report_and_file(tenant_says, phone: str) -> Issue:
    tenant_says("the kitchen tap is leaking", phone=phone, model=[call("ask_for_details", question="Since when?")])
    tenant_says("since Monday, cold tap", phone=phone, model=[call("ask_for_photo", message="A photo?")])
    tenant_says("", phone=phone, media=PHOTO, model=[issue_call()])
    return Issue.objects.get()


@pytest.mark.parametrize(
    "address",
    [
        "12 Harbor St",
        "ls14ab",
        "LS1 4AB",
        "I live at Flat 1, 12 harbour street, Leeds",
        "flat-1",
    ],
)
def test_an_unknown_number_goes_from_address_to_an_unverified_issue(
    home, tenant_says, address, django_capture_on_commit_callbacks
):
    tenant_says("hi", phone=STRANGER, model=[call("respond", message="What is your address or postcode?")])
    [reply] = tenant_says(address, phone=STRANGER, model=[call("find_property", address=address)])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified"
    assert conversation.candidate_property.code == "FLAT-1" and "12 Harbour Street" in reply
    tenant_says("yes that's me", phone=STRANGER, model=[call("confirm_property", confirmed=True)])
    assert conversation_for(STRANGER).identity_status == "confirmed"
    with django_capture_on_commit_callbacks(execute=True):
        issue = _report_and_file(tenant_says, STRANGER)
    assert issue.property.code == "FLAT-1" and issue.tenant is None
    assert issue.tenant_unverified  # the landlord sees the number has no tenancy there
    [email] = [m for m in mail.outbox if issue.reference in m.subject]
    assert f"Unverified: reported from {STRANGER}" in email.body


def test_a_tenant_on_record_files_a_verified_issue(home, tenant_says, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        issue = _report_and_file(tenant_says, PHONE)
    assert issue.tenant.phone == PHONE and not issue.tenant_unverified
    assert mail.outbox and "Unverified" not in mail.outbox[-1].body


def test_a_former_tenant_who_gives_the_address_files_an_unverified_issue(home, tenant_says):
    flat = home.properties.get(code="FLAT-1")
    former = TenantFactory(organization=home, phone=STRANGER)
    TenancyFactory(
        tenant=former, property=flat, start_date=datetime.date(2020, 1, 1), end_date=datetime.date(2021, 1, 1)
    )
    tenant_says("12 harbour st", phone=STRANGER, model=[call("find_property", address="12 harbour st")])
    tenant_says("yes", phone=STRANGER, model=[call("confirm_property", confirmed=True)])
    issue = _report_and_file(tenant_says, STRANGER)
    assert issue.tenant == former and issue.tenant_unverified


def test_an_address_that_fits_two_flats_gets_a_question_not_a_guess(home, tenant_says):
    PropertyFactory(organization=home, code="FLAT-2", address="Flat 2, 12 Harbour Street, Leeds", postcode="LS1 4AB")
    [reply] = tenant_says(
        "12 Harbour Street", phone=STRANGER, model=[call("find_property", address="12 Harbour Street")]
    )
    conversation = conversation_for(STRANGER)
    assert "flat number" in reply and "12 Harbour Street" in reply
    assert conversation.candidate_property is None and conversation.identity_status == "unidentified"
    assert Turn.objects.get().tool_calls[-1]["result"].startswith("several properties matched (FLAT-1, FLAT-2)")
    tenant_says("flat 2", phone=STRANGER, model=[call("find_property", address="Flat 2, 12 Harbour Street")])
    conversation = conversation_for(STRANGER)
    assert conversation.candidate_property.code == "FLAT-2" and conversation.identity_status == "identified"


def test_a_new_ambiguous_address_drops_the_earlier_candidate(home, tenant_says):
    PropertyFactory(organization=home, code="HS-14", address="14 Harbour Street, Leeds", postcode="LS1 4AB")
    tenant_says("14 harbour st", phone=STRANGER, model=[call("find_property", address="14 harbour st")])
    assert conversation_for(STRANGER).identity_status == "identified"
    [reply] = tenant_says("no sorry, LS1 4AB", phone=STRANGER, model=[call("find_property", address="LS1 4AB")])
    conversation = conversation_for(STRANGER)
    assert "postcode" in reply
    assert conversation.candidate_property is None and conversation.identity_status == "unidentified"


@pytest.mark.parametrize("address", ["16 Harbour Street", "Flat 3, 12 Harbour Street", "12 Harbour Road, Leeds"])
def test_another_house_flat_or_street_is_not_proposed(home, tenant_says, address):
    [reply] = tenant_says(address, phone=STRANGER, model=[call("find_property", address=address)])
    conversation = conversation_for(STRANGER)
    assert conversation.candidate_property is None and conversation.identity_status == "unidentified"
    assert "couldn't find" in reply


def test_another_organizations_home_is_never_proposed(home, tenant_says):
    other = OrganizationFactory()
    PropertyFactory(organization=other, code="B-3", address="Flat 3, 12 Harbour Street, Leeds", postcode="LS1 4AB")
    tenant_says("flat 3 12 harbour st", phone=STRANGER, model=[call("find_property", address="flat 3 12 harbour st")])
    assert conversation_for(STRANGER).candidate_property is None


def test_a_tenant_who_moved_to_another_of_the_agencys_homes_reports_at_the_new_one(home, tenant_says):
    tenant_says("hello", model=[call("respond", message="Hi Amira, how can I help?")])
    assert conversation_for().property.code == "FLAT-1"
    amira = home.tenants.get(phone=PHONE)
    Tenancy.objects.filter(tenant=amira).update(end_date=timezone.localdate() - datetime.timedelta(days=1))
    house = PropertyFactory(organization=home, code="HOUSE-7", address="7 Orchard Lane, Leeds", postcode="LS6 3HN")
    TenancyFactory(tenant=amira, property=house, start_date=timezone.localdate())

    tenant_says("the boiler is not working", model=[call("ask_for_details", question="Since when?")])
    conversation = conversation_for()
    assert (conversation.property.code, conversation.identity_status) == ("HOUSE-7", "confirmed")
    tenant_says("since this morning", model=[call("ask_for_photo", message="A photo?")])
    tenant_says("", media=PHOTO, model=[issue_call(title="Boiler not working")])
    issue = Issue.objects.get()
    assert issue.property.code == "HOUSE-7" and not issue.tenant_unverified


@pytest.mark.parametrize("assistant", ["on", "off"])
def test_a_tenant_who_moved_and_smells_gas_gets_the_emergency_filed_at_the_new_home(
    home, tenant_says, settings, assistant
):
    settings.EMERGENCY_CLASSIFIER = "off"  # the rules alone raise the alert, in the webhook
    tenant_says("hello", model=[call("respond", message="Hi Amira, how can I help?")])
    amira = home.tenants.get(phone=PHONE)
    Tenancy.objects.filter(tenant=amira).update(end_date=timezone.localdate() - datetime.timedelta(days=1))
    house = PropertyFactory(organization=home, code="HOUSE-7", address="7 Orchard Lane, Leeds", postcode="LS6 3HN")
    TenancyFactory(tenant=amira, property=house, start_date=timezone.localdate())
    home.llm_orchestration_enabled = assistant == "on"
    home.save()

    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Please leave now.")])
    issue = Issue.objects.get()
    assert (issue.urgency, issue.property.code) == ("emergency", "HOUSE-7")


def test_an_emergency_filed_keeps_its_home_while_it_stands(home, tenant_says, settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    tenant_says("I can smell gas in the kitchen", model=[call("respond", message="Please leave now.")])
    amira = home.tenants.get(phone=PHONE)
    Tenancy.objects.filter(tenant=amira).update(end_date=timezone.localdate() - datetime.timedelta(days=1))
    house = PropertyFactory(organization=home, code="HOUSE-7", address="7 Orchard Lane, Leeds", postcode="LS6 3HN")
    TenancyFactory(tenant=amira, property=house, start_date=timezone.localdate())
    tenant_says("it is getting stronger", model=[call("respond", message="Leave now.")])
    assert conversation_for().property.code == "FLAT-1"
    assert Issue.objects.get().property.code == "FLAT-1"


def test_a_confirmed_turn_reads_the_tenants_homes_once(home, tenant_says):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    tenant_says("hello", model=[call("respond", message="Hi Amira, how can I help?")])
    with CaptureQueriesContext(connection) as queries:
        tenant_says("is the bin day tuesday?", model=[call("respond", message="Yes.")])
    assert sum('FROM "properties_tenancy"' in q["sql"] for q in queries.captured_queries) == 1


def test_a_tenant_whose_tenancy_ended_keeps_the_home_they_confirmed(home, tenant_says):
    tenant_says("hello", model=[call("respond", message="Hi Amira, how can I help?")])
    Tenancy.objects.filter(tenant__phone=PHONE).update(end_date=timezone.localdate() - datetime.timedelta(days=1))
    tenant_says("is my deposit back yet?", model=[call("respond", message="I'll ask your landlord.")])
    conversation = conversation_for()
    assert (conversation.property.code, conversation.identity_status) == ("FLAT-1", "confirmed")


@pytest.fixture
def two_homes(home):
    house = PropertyFactory(
        organization=home, code="HOUSE-7", address="7 Orchard Lane, Headingley, Leeds", postcode="LS6 3HN"
    )
    TenancyFactory(tenant=home.tenants.get(phone=PHONE), property=house, start_date=datetime.date(2026, 1, 1))
    return home


def test_a_tenant_with_two_homes_who_names_one_up_front_is_not_asked_again(two_homes, tenant_says):
    [reply] = tenant_says(
        "the Orchard Lane house has a slow drip under the kitchen sink",
        model=[call("ask_for_details", question="Sorry to hear that! Since when has it been leaking?")],
    )
    conversation = conversation_for()
    assert conversation.identity_status == "confirmed" and conversation.property.code == "HOUSE-7"
    assert reply.startswith("Sorry to hear that")  # straight on with the report
    turn = Turn.objects.get()
    assert (turn.identity_before, turn.identity_after) == ("unidentified", "confirmed")
    tenant_says("since this morning", model=[call("ask_for_photo", message="A photo?")])
    tenant_says("", media=PHOTO, model=[issue_call()])
    issue = Issue.objects.get()
    assert issue.property.code == "HOUSE-7" and not issue.tenant_unverified


@pytest.mark.parametrize("first", ["hi the heating is off", "the boiler at orchard lane and the tap at harbour street"])
def test_a_tenant_with_two_homes_who_does_not_say_which_is_asked(two_homes, tenant_says, first):
    tenant_says(first, model=[call("respond", message="Is this at 12 Harbour Street or 7 Orchard Lane?")])
    conversation = conversation_for()
    assert conversation.identity_status == "identified" and conversation.property is None
    tenant_says("orchard lane", model=[call("confirm_property", confirmed=True, property_code="HOUSE-7")])
    assert conversation_for().property.code == "HOUSE-7"


def test_a_home_named_later_is_left_to_the_model(two_homes, tenant_says):
    """Only the first turn is read by code: after that, naming a home is the
    model's confirm_property, so a later message never moves identity by itself."""
    tenant_says("hello", model=[call("respond", message="Hello! Which home is this about?")])
    tenant_says("7 Orchard Lane", model=[call("respond", message="Thanks, and what is the problem?")])
    assert conversation_for().identity_status == "identified"


def test_a_confirmed_tenant_moves_to_another_of_their_homes_through_the_model(two_homes, tenant_says):
    """After an issue at one home, a problem at the other: the model's
    confirm_property with that home's code moves the conversation, and the
    new issue is filed there. Never to a home that is not theirs."""
    tenant_says("the Orchard Lane house has a slow drip under the kitchen sink", model=[call("ask_for_details")])
    tenant_says("since this morning", model=[call("ask_for_photo", message="A photo?")])
    tenant_says("", media=PHOTO, model=[issue_call()])
    assert conversation_for().identity_status == "active"
    PropertyFactory(organization=two_homes, code="FLAT-9", address="Flat 9, 1 Other Road, Leeds")
    tenant_says(
        "and at the harbour street flat the bathroom light is dead",
        model=[
            call("confirm_property", confirmed=True, property_code="FLAT-9"),  # not theirs: refused
            call("confirm_property", confirmed=True, property_code="HOUSE-7"),  # where it is already: refused
            call("confirm_property", confirmed=True, property_code="FLAT-1"),
            call("ask_for_details", question="Which light, and since when?"),
        ],
    )
    conversation = conversation_for()
    assert (conversation.identity_status, conversation.property.code) == ("active", "FLAT-1")
    rejected = [c for c in Turn.objects.latest("id").tool_calls if c.get("is_error")]
    tenant_says("the ceiling one, since yesterday", model=[call("ask_for_photo", message="A photo?")])
    tenant_says("", media=PHOTO, model=[issue_call(title="Bathroom light not working")])
    assert [c["input"]["property_code"] for c in rejected] == ["FLAT-9", "HOUSE-7"]
    assert sorted(Issue.objects.values_list("property__code", flat=True)) == ["FLAT-1", "HOUSE-7"]


def test_a_tenant_who_wrote_before_their_tenancy_began_is_known_once_it_has(home, tenant_says):
    """First contact before the tenancy starts links the tenant but confirms no
    home; once it has started, the next turn's lookup confirms it, rather than
    leaving them unable to report (their own code is not a stranger's address)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from orchestration import services

    flat = home.properties.get(code="FLAT-1")
    newcomer = TenantFactory(organization=home, phone=STRANGER)
    tenancy = TenancyFactory(
        tenant=newcomer, property=flat, start_date=timezone.localdate() + datetime.timedelta(days=3)
    )
    tenant_says("hi, where do I collect the keys?", phone=STRANGER, model=[call("respond", message="From the office.")])
    conversation = conversation_for(STRANGER)
    assert (conversation.tenant, conversation.identity_status) == (newcomer, "unidentified")
    with CaptureQueriesContext(connection) as captured:  # looked up again: nothing new, nothing written
        assert services.conversation_identify_by_phone(conversation=conversation) == "no_current_tenancy"
    assert not [q for q in captured.captured_queries if q["sql"].startswith("UPDATE")]

    tenancy.start_date = timezone.localdate() - datetime.timedelta(days=2)
    tenancy.save()
    issue = _report_and_file(tenant_says, STRANGER)
    assert issue.property == flat and issue.tenant == newcomer and not issue.tenant_unverified
