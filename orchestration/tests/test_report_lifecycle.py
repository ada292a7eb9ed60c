"""A report's life in the turn engine (issue 17, items 2, 3 and 7): a clear
first message goes straight to the photo, a report the tenant drops is closed
without an issue and leaves nothing behind, and confirming the property does
not make the tenant say their problem again."""

from __future__ import annotations

import pytest

from issues.models import Issue
from orchestration.gating import Snapshot, places_named, rejection
from orchestration.models import Turn
from orchestration.testing.anthropic_stub import tool_use_response
from orchestration.testing.fixtures import call, conversation_for, issue_call
from properties.tests.factories import PropertyFactory, TenancyFactory, TenantFactory

PHOTO = [("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", "image/jpeg")]
PHOTO_2 = [("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM2/Media/ME2", "image/jpeg")]
CLEAR = {"message": "Could you send a photo?", "problem": "cold tap drips", "location": "kitchen"}


# --- gating: ask_for_photo from idle checks the call's content ------------------------------------


@pytest.mark.parametrize(
    ("text", "places"),
    [
        ("kitchen", {"kitchen"}),
        ("bathroom ceiling", {"bathroom"}),
        ("the boiler in the kitchen", {"kitchen"}),
        ("boiler", set()),
        ("tap", set()),
        ("under the sink", set()),
        ("ceiling", set()),  # a surface needs its room
        ("w łazience", {"bathroom"}),  # Polish inflects: "in the bathroom"
        ("pod zlewem w kuchni", {"kitchen"}),  # "pod" is Polish "under", not the Romanian attic
        ("în bucătărie", {"kitchen"}),
        ("el baño de arriba", {"bathroom"}),
        ("casa de banho", {"bathroom"}),
        ("living room", {"living", "room"}),
        ("boiler cupboard", {"utility"}),
        ("my boiler has stopped, no heating or hot water", set()),
    ],
)
def test_places_in_the_home_in_five_languages(text, places):
    assert places_named(text) == places


def _idle(report_text: str, **kwargs) -> Snapshot:
    return Snapshot(identity="confirmed", gathering="idle", property_code="FLAT-1", report_text=report_text, **kwargs)


@pytest.mark.parametrize(
    ("tool_input", "report_text", "allowed"),
    [
        (CLEAR, "The cold tap in the kitchen drips all the time", True),
        ({"message": "Photo?"}, "The cold tap in the kitchen drips all the time", False),  # old-style call
        ({**CLEAR, "location": ""}, "The cold tap in the kitchen drips all the time", False),
        ({**CLEAR, "problem": " "}, "The cold tap in the kitchen drips all the time", False),
        ({**CLEAR, "problem": "boiler broken", "location": "boiler"}, "my boiler is broken", False),
        # The model may not invent the room: the tenant never said where.
        ({**CLEAR, "problem": "boiler broken", "location": "kitchen"}, "my boiler is broken", False),
        # The tenant's Polish, the model's English: the same room.
        ({**CLEAR, "problem": "leaking tap", "location": "kitchen"}, "Cieknie kran w kuchni od wczoraj", True),
        ({**CLEAR, "problem": "shower leaks", "location": "bathroom"}, "Mi ducha gotea en el baño", True),
    ],
)
def test_ask_for_photo_from_idle_needs_the_problem_and_a_room_the_tenant_named(tool_input, report_text, allowed):
    assert (rejection("ask_for_photo", tool_input, _idle(report_text)) is None) == allowed
    # After an issue a new problem may open the same way.
    after_issue = Snapshot(identity="active", gathering="issue_created", property_code="F-1", report_text=report_text)
    assert (rejection("ask_for_photo", tool_input, after_issue) is None) == allowed


def test_ask_for_photo_during_a_report_needs_no_fields_and_never_in_an_emergency():
    for gathering in ("gathering_details", "awaiting_photo"):
        assert None is rejection(
            "ask_for_photo", {"message": "Photo?"}, Snapshot(identity="confirmed", gathering=gathering)
        )
    text = "there is a gas smell in the kitchen"
    assert "emergency" in rejection("ask_for_photo", CLEAR, _idle(text, emergency=True))


@pytest.mark.parametrize(
    ("gathering", "emergency", "allowed"),
    [
        ("gathering_details", False, True),
        ("awaiting_photo", False, True),
        ("idle", False, False),
        ("issue_created", False, False),
        ("gathering_details", True, False),  # an emergency is not dropped by the model
    ],
)
def test_close_report_only_for_a_report_in_progress(gathering, emergency, allowed):
    snapshot = Snapshot(identity="confirmed", gathering=gathering, emergency=emergency)
    tool_input = {"reason": "tenant fixed it", "message": "Glad it's sorted!"}
    assert (rejection("close_report", tool_input, snapshot) is None) == allowed


# --- item 2: a clear first message goes straight to the photo -------------------------------------


def test_a_clear_first_message_gets_the_photo_request_and_its_photo_counts(home, tenant_says):
    replies = tenant_says(
        "The cold tap in the kitchen drips all the time",
        media=PHOTO,
        model=[call("ask_for_photo", **CLEAR)],
    )
    assert replies == ["Could you send a photo?"]
    conversation = conversation_for()
    assert conversation.gathering_state == "awaiting_photo"
    turn = Turn.objects.get()
    assert (turn.gathering_before, turn.gathering_after) == ("idle", "awaiting_photo")
    assert turn.gating_rejections == 0 and "kitchen" in turn.tool_calls[0]["result"]
    # The report started with that message: the photo sent with it is the report's.
    tenant_says("that's the one", model=[issue_call(photo="provided")])
    assert Issue.objects.get().photos.count() == 1


def test_a_bare_boiler_message_still_gets_a_question(home, tenant_says):
    replies = tenant_says(
        "my boiler is broken",
        model=[
            call("ask_for_photo", message="Photo?", problem="boiler broken", location="boiler"),
            call("ask_for_photo", message="Photo?", problem="boiler broken", location="kitchen"),
            call("ask_for_details", question="Is there an error code on the display?"),
        ],
    )
    assert replies == ["Is there an error code on the display?"]
    turn = Turn.objects.get()
    assert turn.gating_rejections == 2
    assert "not a place in the home" in turn.tool_calls[0]["rejection"]
    assert "has not said" in turn.tool_calls[1]["rejection"]
    assert conversation_for().gathering_state == "gathering_details"


# --- item 3: a report the tenant drops --------------------------------------------------------------


def test_a_dropped_report_closes_without_an_issue_and_the_next_starts_afresh(home, tenant_says):
    tenant_says("the bathroom extractor fan is rattling", model=[call("ask_for_details", question="Since when?")])
    tenant_says("", media=PHOTO, model=[call("respond", message="Thanks for the photo. Since when?")])
    replies = tenant_says(
        "actually it stopped, I think it was a loose cover, all good now",
        model=[call("close_report", reason="tenant fixed it: a loose cover", message="Glad it's sorted!")],
    )
    assert replies == ["Glad it's sorted!"]
    conversation = conversation_for()
    assert conversation.gathering_state == "idle" and not Issue.objects.exists()
    turn = Turn.objects.latest("id")
    assert (turn.gathering_before, turn.gathering_after) == ("gathering_details", "idle")
    assert turn.outcome == "tool"
    assert turn.tool_calls[-1]["result"] == "report closed without an issue: tenant fixed it: a loose cover"

    # A later message: the closed report's photo and words are not the new report's.
    tenant_says(
        "hi the bedroom window won't close",
        model=[
            issue_call(title="Bedroom window", location="bedroom", photo="provided"),  # the old photo: refused
            call("ask_for_photo", message="Photo?", problem="fan rattles", location="bathroom"),  # old words
            call("ask_for_details", question="Is it the latch or the frame?"),
        ],
    )
    turn = Turn.objects.latest("id")
    assert turn.gating_rejections == 2
    assert "no photo has arrived" in turn.tool_calls[0]["rejection"]
    assert "has not said" in turn.tool_calls[1]["rejection"]
    conversation = conversation_for()
    assert conversation.gathering_state == "gathering_details"
    tenant_says("", media=PHOTO_2, model=[call("respond", message="Thanks!")])
    tenant_says("no more", model=[issue_call(title="Bedroom window", location="bedroom", photo="provided")])
    issue = Issue.objects.get()
    assert [p.media.provider_url for p in issue.photos.all()] == [PHOTO_2[0][0]]


def test_the_model_reads_where_the_closed_report_ends(home, tenant_says, anthropic_stub):
    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "Since when?"}),
        tool_use_response("close_report", {"reason": "it went away", "message": "Glad it's sorted!"}),
        tool_use_response("ask_for_details", {"question": "Is it the latch or the frame?"}),
    )
    tenant_says("the bathroom extractor fan is rattling")
    tenant_says("oh it stopped, all good now")
    tenant_says("hi the bedroom window won't close")
    text = anthropic_stub.requests[-1]["json"]["messages"][0]["content"]
    assert "gathering_state: idle" in text and "previous report was closed without an issue" in text
    divider = text.index("---- The report above was closed")
    assert text.index("rattling") < text.index("Glad it's sorted!") < divider < text.index("bedroom window")


def test_nothing_to_close_when_no_report_is_in_progress(home, tenant_says):
    replies = tenant_says(
        "never mind",
        model=[call("close_report", reason="nothing", message="OK!"), call("respond", message="No problem!")],
    )
    assert replies == ["No problem!"]
    assert "nothing to close" in Turn.objects.get().tool_calls[0]["rejection"]


# --- item 7: confirming the property goes on with the problem already stated -----------------------

BOILER = "Hi, my boiler has stopped, no heating or hot water"


def _unknown_tenant_at_the_candidate(tenant_says, phone: str) -> None:
    tenant_says(BOILER, phone=phone, model=[call("respond", message="Sorry! What is your address or postcode?")])
    tenant_says("12 Harbour Street, LS1 4AB", phone=phone, model=[call("find_property", address="12 Harbour Street")])
    assert conversation_for(phone).identity_status == "identified"


def test_after_confirming_the_address_the_tenant_is_not_asked_what_they_need(home, tenant_says, anthropic_stub):
    phone = "+447700900555"
    anthropic_stub.queue(
        tool_use_response("respond", {"message": "Sorry to hear that! What is your address or postcode?"}),
        tool_use_response("find_property", {"address": "12 Harbour Street, LS1 4AB"}),
        # "yes" is the title of the question's first choice: the product confirms, the model goes on.
        tool_use_response("ask_for_details", {"question": "Is there an error code on the boiler's display?"}),
    )
    tenant_says(BOILER, phone=phone)
    tenant_says("12 Harbour Street, LS1 4AB", phone=phone)
    [reply] = tenant_says("yes", phone=phone)
    assert reply == "Thanks, that's Flat 1, 12 Harbour Street, Leeds.\nIs there an error code on the boiler's display?"
    assert "What can I help you with" not in reply
    # The model was asked again in the same turn, with the identity confirmed and the boiler in view.
    again = anthropic_stub.requests[-1]["json"]["messages"][0]["content"]
    assert "identity_status: confirmed" in again and "Property: FLAT-1" in again
    assert "has just confirmed" in again and "no heating or hot water" in again
    conversation = conversation_for(phone)
    assert (conversation.identity_status, conversation.gathering_state) == ("confirmed", "gathering_details")
    turn = Turn.objects.latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["confirm_property", "ask_for_details"]
    assert turn.tool_calls[0]["result"] == "property FLAT-1 confirmed" and turn.tool_calls[0]["via"] == "typed"
    assert turn.tool_calls[1]["result"] == "question sent"
    assert (turn.identity_before, turn.identity_after) == ("identified", "confirmed")


def test_a_tenant_with_two_homes_goes_on_with_the_heating_once_they_say_which(home, tenant_says):
    tenant = TenantFactory(organization=home, phone="+447700900789")
    for code in ("FLAT-2", "HOUSE-7"):
        TenancyFactory(tenant=tenant, property=PropertyFactory(organization=home, code=code, address=f"{code} Road"))
    tenant_says("hi the heating is off", phone=tenant.phone, model=[call("respond", message="FLAT-2 or HOUSE-7?")])
    [reply] = tenant_says(
        "the house",
        phone=tenant.phone,
        model=[
            call("confirm_property", confirmed=True, property_code="HOUSE-7"),
            call("confirm_property", confirmed=True, property_code="HOUSE-7"),  # already done: refused
            call("ask_for_details", question="Is it every radiator, and is there hot water?"),
        ],
    )
    assert reply == "Thanks, that's HOUSE-7 Road.\nIs it every radiator, and is there hot water?"
    conversation = conversation_for(tenant.phone)
    assert conversation.property.code == "HOUSE-7" and conversation.gathering_state == "gathering_details"
    assert Turn.objects.latest("id").gating_rejections == 1


def test_a_confirmation_stands_on_its_own_when_the_model_cannot_go_on(home, tenant_says):
    phone = "+447700900556"
    _unknown_tenant_at_the_candidate(tenant_says, phone)
    [reply] = tenant_says(
        "yes", phone=phone, model=[call("confirm_property", confirmed=True), {"error": "unavailable"}]
    )
    assert reply == "Thanks, that's Flat 1, 12 Harbour Street, Leeds. What can I help you with?"
    conversation = conversation_for(phone)
    assert conversation.identity_status == "confirmed" and conversation.escalated_at is None
    turn = Turn.objects.latest("id")
    assert turn.outcome == "tool" and turn.tool_calls[0]["result"] == "property FLAT-1 confirmed"
    assert "unavailable" in turn.error


def test_a_rejected_candidate_asks_for_the_address_without_going_on(home, tenant_says):
    phone = "+447700900557"
    _unknown_tenant_at_the_candidate(tenant_says, phone)
    [reply] = tenant_says("no", phone=phone, model=[call("confirm_property", confirmed=False)])
    assert reply == "No problem. What is your address or postcode?"
    assert len(Turn.objects.latest("id").tool_calls) == 1
