"""Location pins, tap-to-answer buttons, and the WhatsApp messages we cannot
read, through the signed webhook, the turn engine and (where it matters) the
real twilio SDK against the local stub."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal

import pytest

from conversations.delivery import message_send
from conversations.models import Message
from llm.scripted import scripted_clear, scripted_queue
from orchestration.models import Turn
from orchestration.pipeline import inbound_process
from orchestration.testing.fixtures import ORG_NUMBER, PHONE, call, conversation_for
from properties.tests.factories import PropertyFactory, TenancyFactory, TenantFactory

STRANGER = "+447700900999"
# 12 Harbour Street, Leeds (the ``home`` fixture's FLAT-1 is placed here).
HARBOUR = (Decimal("53.796000"), Decimal("-1.547000"))


@pytest.fixture(autouse=True)
def _classifier_off(settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    settings.INBOUND_COALESCE_SECONDS = 0


@pytest.fixture
def placed(home):
    flat = home.properties.get(code="FLAT-1")
    flat.latitude, flat.longitude = HARBOUR
    flat.save()
    # 600 m away: never the match for a pin at Harbour Street.
    PropertyFactory(
        organization=home,
        code="HOUSE-9",
        address="9 Park Row, Leeds",
        postcode="LS1 5HD",
        latitude=Decimal("53.801000"),
        longitude=Decimal("-1.550000"),
    )
    return home


@pytest.fixture
def send(post_inbound):
    """Post one signed WhatsApp message with extra Twilio fields, run the
    turn, and return the outbound messages it queued."""
    phones = set()

    def say(body: str = "", *, phone: str = STRANGER, extra: dict | None = None, model=None, media=None):
        phones.add(phone)
        if model is not None:
            scripted_queue(phone=phone, calls=model)
        before = max(Message.objects.filter(direction="outbound").values_list("id", flat=True), default=0)
        response = post_inbound(
            phone=phone, to=ORG_NUMBER, body=body, extra={"ProfileName": "Ana Lopez", **(extra or {})}, media=media
        )
        assert response.status_code == 200, response.content
        message = Message.objects.get(provider_sid=response.params["MessageSid"])
        inbound_process(message_id=message.pk)
        return list(Message.objects.filter(direction="outbound", id__gt=before).order_by("id"))

    yield say
    for phone in phones:
        scripted_clear(phone=phone)


def pin(latitude, longitude, **more) -> dict:
    return {"MessageType": "location", "Latitude": str(latitude), "Longitude": str(longitude), **more}


def tap(payload: str, text: str) -> dict:
    return {"MessageType": "button", "ButtonPayload": payload, "ButtonText": text}


# --- location pins ---------------------------------------------------------------------------


def test_a_pin_from_an_unknown_number_proposes_the_nearest_home_with_yes_no_choices(placed, send):
    # ~40 m north-east of the flat: within LOCATION_MATCH_MAX_METRES (150).
    [question] = send(extra=pin("53.796300", "-1.546700", Label="Home"))

    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified" and conversation.candidate_property.code == "FLAT-1"
    assert conversation.property is None  # a pin never confirms by itself
    assert question.body.startswith("Hi Ana! Thanks for the location. Is your home Flat 1, 12 Harbour Street")
    assert "Reply 1 for Yes, 2 for No." in question.body
    assert [c["payload"] for c in question.raw_payload["choices"]] == [
        "confirm_property:yes:FLAT-1",
        "confirm_property:no:FLAT-1",
    ]
    turn = Turn.objects.get(conversation=conversation)
    assert turn.outcome == "location_pin" and turn.input_tokens == 0
    assert turn.tool_calls[0]["via"] == "location pin" and turn.tool_calls[0]["result"].startswith("candidate FLAT-1")


def test_a_pin_with_nothing_near_asks_for_the_address(placed, send):
    [reply] = send(extra=pin("53.900000", "-1.547000"))
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "unidentified" and conversation.candidate_property is None
    assert "couldn't match it to a home we manage" in reply.body and "address or postcode" in reply.body


def test_a_pin_at_a_building_of_several_flats_asks_which_flat(placed, send):
    PropertyFactory(
        organization=placed,
        code="FLAT-2",
        address="Flat 2, 12 Harbour Street, Leeds",
        postcode="LS1 4AB",
        latitude=HARBOUR[0],
        longitude=HARBOUR[1],
    )
    [reply] = send(extra=pin(*HARBOUR))
    conversation = conversation_for(STRANGER)
    assert conversation.candidate_property is None and conversation.identity_status == "unidentified"
    assert "more than one flat at 12 Harbour Street" in reply.body


def test_another_organizations_home_is_never_proposed_by_a_pin(placed, send):
    from properties.tests.factories import OrganizationFactory

    other = OrganizationFactory(name="Bob Lets")
    PropertyFactory(organization=other, code="BOB-1", address="1 Pin Street", latitude=Decimal("53.900000"))
    PropertyFactory(
        organization=other, code="BOB-2", address="2 Pin Street", latitude=Decimal("53.9"), longitude=Decimal("-1.547")
    )
    send(extra=pin("53.900000", "-1.547000"))
    assert conversation_for(STRANGER).candidate_property is None


def test_a_pin_from_a_tenant_on_record_is_left_to_the_model(placed, send):
    replies = send(phone=PHONE, extra=pin(*HARBOUR), model=[call("respond", message="Thanks, noted.")])
    assert [m.body for m in replies] == ["Thanks, noted."]
    assert conversation_for(PHONE).identity_status == "confirmed"


# --- buttons -------------------------------------------------------------------------------


def test_tapping_yes_confirms_the_candidate_and_the_model_goes_on(placed, send):
    send("my kitchen tap is leaking")  # the scripted policy asks for the address
    send(extra=pin("53.796300", "-1.546700"))
    replies = send(
        "Yes",
        extra=tap("confirm_property:yes:FLAT-1", "Yes"),
        model=[call("ask_for_details", question="Could you send a photo of the tap?")],
    )
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "FLAT-1"
    assert [m.body for m in replies] == [
        "Thanks, that's Flat 1, 12 Harbour Street, Leeds.\nCould you send a photo of the tap?"
    ]
    turn = Turn.objects.filter(conversation=conversation).latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["confirm_property", "ask_for_details"]
    assert turn.tool_calls[0]["via"] == "button" and turn.tool_calls[0]["result"] == "property FLAT-1 confirmed"


def test_tapping_no_rejects_the_candidate_without_asking_the_model(placed, send):
    send(extra=pin("53.796300", "-1.546700"))
    [reply] = send("No", extra=tap("confirm_property:no:FLAT-1", "No"))
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "unidentified" and conversation.candidate_property is None
    assert reply.body == "No problem. What is your address or postcode?"
    turn = Turn.objects.filter(conversation=conversation).latest("id")
    assert turn.input_tokens == 0 and turn.tool_calls[0]["via"] == "button"


def test_typing_1_answers_the_numbered_question(placed, send):
    send(extra=pin("53.796300", "-1.546700"))
    send("1", model=[call("respond", message="What can I help you with?")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "FLAT-1"
    turn = Turn.objects.filter(conversation=conversation).latest("id")
    assert turn.tool_calls[0]["via"] == "typed"


@pytest.mark.parametrize("typed", ["no", "No.", "NO 👎"])
def test_typing_a_choices_title_answers_the_numbered_question(placed, send, typed):
    send(extra=pin("53.796300", "-1.546700"))
    [reply] = send(typed)
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "unidentified" and conversation.candidate_property is None
    assert reply.body == "No problem. What is your address or postcode?"


def test_a_button_of_the_phones_own_with_a_choices_title_answers_the_question(placed, send):
    # Our numbered text shown as buttons by the client: the payload is not ours, its text is the choice's title.
    send(extra=pin("53.796300", "-1.546700"))
    send("No", extra=tap("no", "No"))
    assert conversation_for(STRANGER).identity_status == "unidentified"


def test_words_that_only_contain_a_title_are_left_to_the_model(placed, send):
    send(extra=pin("53.796300", "-1.546700"))
    send("no idea, I just moved in", model=[call("respond", message="Is it Flat 1?")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified"
    turn = Turn.objects.filter(conversation=conversation).latest("id")
    assert "via" not in turn.tool_calls[0]


def test_a_button_from_an_earlier_question_is_refused_and_the_model_is_told(placed, send):
    PropertyFactory(
        organization=placed, code="HOUSE-5", address="5 Mill Lane, Leeds", latitude=Decimal("53.7"), longitude=0
    )
    send(extra=pin("53.796300", "-1.546700"))  # FLAT-1 proposed
    send("No", extra=tap("confirm_property:no:FLAT-1", "No"))
    send(extra=pin("53.700000", "0"))  # HOUSE-5 proposed now
    # The old question's "Yes" is tapped: it must not confirm FLAT-1 (or HOUSE-5).
    send("Yes", extra=tap("confirm_property:yes:FLAT-1", "Yes"), model=[call("respond", message="Sorry?")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified" and conversation.candidate_property.code == "HOUSE-5"
    assert conversation.property is None


def test_a_payload_we_never_sent_changes_nothing(placed, send):
    send(extra=pin("53.796300", "-1.546700"))
    send("Yes", extra=tap("confirm_property:yes:HOUSE-9", "Yes"), model=[call("respond", message="Sorry?")])
    send("ok", extra=tap("something_else:1", "ok"), model=[call("respond", message="Sorry?")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified" and conversation.property is None


def test_a_number_that_answers_no_question_is_plain_text(placed, send):
    replies = send("2", phone=PHONE, model=[call("respond", message="Two what?")])
    assert [m.body for m in replies] == ["Two what?"]


@pytest.fixture
def two_homes(placed):
    tenant = TenantFactory(organization=placed, phone=STRANGER, name="Ana Lopez")
    for code in ("FLAT-1", "HOUSE-9"):
        TenancyFactory(tenant=tenant, property=placed.properties.get(code=code), start_date=datetime.date(2026, 1, 1))
    return tenant


def test_a_turns_reply_and_the_question_after_it_go_to_the_sender_as_one_task_in_order(
    two_homes, send, queued, django_capture_on_commit_callbacks
):
    """Two tasks could be sent by two outbound threads in either order: the
    tenant would see the list of homes before the answer it follows."""
    with django_capture_on_commit_callbacks(execute=True):
        reply, question = send("the heating is off", model=[call("respond", message="Sorry to hear that.")])
    assert question.raw_payload["purpose"] == "property_choice"
    sends = [args for name, args, _ in queued if name == "outbound.send"]
    assert sends == [[[reply.pk, question.pk]]]


def test_a_tenant_with_two_homes_chooses_by_tapping(two_homes, send):
    first = send("the heating is off", model=[call("respond", message="Sorry to hear that.")])
    assert first[0].body == "Sorry to hear that."
    question = first[1]
    assert question.raw_payload["purpose"] == "property_choice"
    assert question.body.startswith("Which home is your message about?\n1. Flat 1, 12 Harbour Street, Leeds\n2. 9 Park")
    assert question.raw_payload["content_variables"] == {
        "1": "Flat 1, 12 Harbour Street, Leeds",
        "2": "9 Park Row, Leeds",
        "3": "FLAT-1",
        "4": "HOUSE-9",
    }
    send("2", extra=tap("choose_property:pick:HOUSE-9", "2"), model=[call("ask_for_details", question="Which room?")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "HOUSE-9"


def test_a_tenant_cannot_choose_a_home_that_is_not_theirs(two_homes, placed, send):
    PropertyFactory(organization=placed, code="OTHER-1", address="1 Other Road")
    send("the heating is off", model=[call("respond", message="Sorry to hear that.")])
    send("1", extra=tap("choose_property:pick:OTHER-1", "1"), model=[call("respond", message="Which one?")])
    assert conversation_for(STRANGER).property is None


# --- sending the choices ---------------------------------------------------------------------


def test_the_question_goes_out_as_a_quick_reply_template_when_one_is_configured(placed, send, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"property_confirm": "HX" + "a" * 32, "generic": "HX" + "g" * 32}
    [question] = send(extra=pin("53.796300", "-1.546700"))
    message_send(message_id=question.pk)
    [sent] = twilio_stub.sent
    assert sent["ContentSid"] == "HX" + "a" * 32 and "Body" not in sent
    assert json.loads(sent["ContentVariables"]) == {"1": "Flat 1, 12 Harbour Street, Leeds, LS1 4AB", "2": "FLAT-1"}


def test_without_a_template_the_question_goes_out_as_numbered_text(placed, send, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "g" * 32}
    [question] = send(extra=pin("53.796300", "-1.546700"))
    message_send(message_id=question.pk)
    [sent] = twilio_stub.sent
    assert "ContentSid" not in sent and sent["Body"].endswith("Reply 1 for Yes, 2 for No.")


def test_outside_the_window_only_a_template_goes_out(placed, send, twilio_stub, settings):
    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "g" * 32}
    [question] = send(extra=pin("53.796300", "-1.546700"))
    conversation = conversation_for(STRANGER)
    conversation.last_inbound_at -= datetime.timedelta(hours=30)
    conversation.save()
    message_send(message_id=question.pk)
    [sent] = twilio_stub.sent
    assert sent["ContentSid"] == "HX" + "g" * 32
    assert json.loads(sent["ContentVariables"]) == {"1": " ".join(question.body.split())}  # on one line
    settings.WHATSAPP_TEMPLATES = {"property_confirm.en": "HX" + "e" * 32, "generic": "HX" + "g" * 32}
    Message.objects.filter(pk=question.pk).update(status="pending")
    message_send(message_id=question.pk)
    assert twilio_stub.sent[1]["ContentSid"] == "HX" + "e" * 32
    assert json.loads(twilio_stub.sent[1]["ContentVariables"])["2"] == "FLAT-1"


# --- everything else WhatsApp can send ------------------------------------------------------

STICKER = {"MessageType": "sticker", "NumMedia": "1"}


def test_a_sticker_alone_gets_no_repair_conversation(placed, send):
    send(phone=PHONE, model=[call("respond", message="Hello!")], body="hello")
    replies = send(
        phone=PHONE,
        extra=STICKER,
        media=[("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", "image/webp")],
    )
    assert replies == []
    message = Message.objects.filter(direction="inbound", conversation=conversation_for(PHONE)).latest("id")
    assert message.kind == "sticker" and message.processed_at is not None
    assert Turn.objects.filter(conversation=message.conversation).latest("id").outcome == "no_reply"


def test_a_sticker_as_the_first_message_gets_a_greeting(placed, send):
    [reply] = send(extra={"MessageType": "sticker"})
    assert reply.body == "Hi Ana! How can I help? Tell me what needs repairing and where."


def test_a_reaction_alone_gets_no_reply(placed, send):
    send(phone=PHONE, model=[call("respond", message="Hello!")], body="hello")
    assert send("👍", phone=PHONE, extra={"MessageType": "reaction"}) == []


@pytest.mark.parametrize(
    "extra",
    [
        {"MessageType": "unsupported"},
        {"MessageType": "poll_creation"},
        {"MessageType": "contacts"},
        {"MediaContentType0": "text/vcard", "MediaUrl0": "https://api.twilio.com/2010-04-01/x", "NumMedia": "1"},
    ],
)
def test_a_message_we_cannot_read_gets_told_what_we_can_read(placed, send, extra):
    [reply] = send(phone=PHONE, extra=extra)
    assert reply.body.endswith(
        "I can read text, photos and voice notes, but not this kind of message. Could you type it instead?"
    )
    assert Message.objects.filter(direction="inbound").latest("id").processed_at is not None


def test_the_unsupported_reply_is_in_the_tenants_language(placed, send):
    send("Hola, tengo una fuga en la cocina", phone=PHONE, model=[call("respond", message="¿Desde cuándo?")])
    [reply] = send(phone=PHONE, extra={"MessageType": "unsupported"})
    assert reply.body.startswith("Lo siento, puedo leer texto, fotos y notas de voz")


def test_a_video_goes_to_the_model(placed, send):
    replies = send(
        phone=PHONE,
        extra={"MessageType": "video"},
        media=[("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM2/Media/ME2", "video/mp4")],
        model=[call("respond", message="Thanks for the video.")],
    )
    assert [m.body for m in replies] == ["Thanks for the video."]


def test_an_unreadable_greeting_does_not_use_a_name_that_is_not_one(placed, send):
    [reply] = send(extra={"MessageType": "sticker", "ProfileName": "🔥 Plumbing Co 24/7"})
    assert reply.body == "How can I help? Tell me what needs repairing and where."


def test_the_stub_refuses_content_variables_twilio_would_refuse(placed, send, twilio_stub, settings):
    """The stub checks what Twilio checks, so a broken send would fail here."""
    from twilio.base.exceptions import TwilioRestException

    from conversations.twilio_client import twilio_client

    client = twilio_client()
    with pytest.raises(TwilioRestException) as refused:
        client.messages.create(to="whatsapp:+1", from_="whatsapp:+2", content_variables='{"1": "x"}')
    assert refused.value.code == 92005
    with pytest.raises(TwilioRestException) as refused:
        client.messages.create(to="whatsapp:+1", from_="whatsapp:+2", content_sid="HX1", content_variables="[1]")
    assert refused.value.code == 21656


def test_a_number_beyond_the_choices_is_refused(placed, send):
    send(extra=pin("53.796300", "-1.546700"))
    send("3", model=[call("respond", message="Please reply 1 or 2.")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified" and conversation.property is None
    turn = Turn.objects.filter(conversation=conversation).latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["respond"]


def test_the_assistant_off_acknowledgement_greets_by_name(placed, send, settings):
    settings.USE_LLM_ORCHESTRATION = False
    [reply] = send("hello, my sink is blocked")
    assert reply.body.startswith("Hi Ana! Thanks for your message. It has been passed to")


def test_numbered_text_refused_with_63016_goes_again_as_a_template(placed, send, twilio_stub, settings):
    """Twilio says the window is closed although we thought it open: the
    question goes once more as a template. A Polish tenant with only an
    English quick-reply template gets numbered text first, then ``generic``."""
    from conversations.testing.twilio_stub import TwilioReply

    settings.WHATSAPP_TEMPLATES = {"generic": "HX" + "g" * 32, "property_confirm.en": "HX" + "e" * 32}
    [question] = send(extra=pin("53.796300", "-1.546700"))
    Message.objects.filter(pk=question.pk).update(raw_payload={**question.raw_payload, "language": "pl"})
    twilio_stub.queue(TwilioReply(400, 63016, "Outside the allowed window"))
    message = message_send(message_id=question.pk)
    first, second = twilio_stub.sent
    assert "Body" in first and "ContentSid" not in first
    assert second["ContentSid"] == "HX" + "g" * 32
    assert json.loads(second["ContentVariables"]) == {"1": " ".join(question.body.split())}  # on one line
    assert message.status == "queued" and message.raw_payload["attempts"][0]["error_code"] == "63016"


def test_a_tenant_with_two_homes_can_pin_one_and_confirm_it(two_homes, send):
    send("the heating is off", model=[call("respond", message="Sorry to hear that.")])
    [question] = send(extra=pin("53.801100", "-1.550000"))  # ~11 m from 9 Park Row (HOUSE-9)
    assert "9 Park Row" in question.body and question.raw_payload["purpose"] == "property_confirm"
    conversation = conversation_for(STRANGER)
    assert conversation.candidate_property.code == "HOUSE-9" and conversation.property is None
    send(
        "Yes", extra=tap("confirm_property:yes:HOUSE-9", "Yes"), model=[call("ask_for_details", question="Which room?")]
    )
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "HOUSE-9"


def test_a_tenant_with_two_homes_who_says_no_to_the_pinned_one_chooses_the_other(two_homes, send):
    """Saying no must not make them a stranger: find_property is closed to a
    number with tenancies, so an address would lead nowhere."""
    send("the heating is off", model=[call("respond", message="Sorry to hear that.")])
    send(extra=pin("53.801100", "-1.550000"))  # near 9 Park Row (HOUSE-9), but the heating is off at the flat
    replies = send("No", extra=tap("confirm_property:no:HOUSE-9", "No"))
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "identified" and conversation.candidate_property is None
    assert replies[0].body == "No problem."
    assert replies[1].raw_payload["purpose"] == "property_choice" and "1. Flat 1, 12 Harbour Street" in replies[1].body
    send("1", extra=tap("choose_property:pick:FLAT-1", "1"), model=[call("ask_for_details", question="Which room?")])
    conversation = conversation_for(STRANGER)
    assert conversation.identity_status == "confirmed" and conversation.property.code == "FLAT-1"


def test_a_tenants_pin_never_proposes_a_home_that_is_not_theirs(two_homes, placed, send):
    PropertyFactory(organization=placed, code="NEXT-DOOR", latitude=Decimal("53.700000"), longitude=Decimal("0"))
    send("the heating is off", model=[call("respond", message="Sorry to hear that.")])
    replies = send(extra=pin("53.700000", "0"), model=[call("respond", message="Which home is it?")])
    assert replies[0].body == "Which home is it?"
    assert conversation_for(STRANGER).candidate_property is None
