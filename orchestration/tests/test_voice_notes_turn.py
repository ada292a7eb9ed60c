"""The turn and voice notes, in process: it waits for a transcript (returning
the wait, as the coalescing wait does), goes on past TRANSCRIPTION_WAIT_SECONDS,
and, when no model is called, asks the tenant to type in their language."""

from __future__ import annotations

import pytest
from django.utils import timezone

from conversations.models import Conversation, Media, Message
from llm.scripted import scripted_clear, scripted_queue
from orchestration.models import Turn
from orchestration.pipeline import inbound_process
from orchestration.replies import REPLIES
from orchestration.testing.fixtures import ORG_NUMBER, PHONE, call
from orchestration.voice_notes import voice_notes_wait

ASK_TO_TYPE_TEXTS = REPLIES["voice_note_type"]

pytestmark = pytest.mark.django_db

AUDIO_URL = "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"


@pytest.fixture(autouse=True)
def quick(settings):
    settings.INBOUND_COALESCE_SECONDS = 0
    settings.EMERGENCY_CLASSIFIER = "off"
    settings.TRANSCRIPTION_WAIT_SECONDS = 30
    yield
    scripted_clear(phone=PHONE)


def voice_note(post_inbound, *, state: str = "", **fields) -> Message:
    response = post_inbound(
        phone=PHONE, to=ORG_NUMBER, media=[(AUDIO_URL, "audio/ogg")], extra={"MessageType": "audio"}
    )
    message = Message.objects.get(provider_sid=response.params["MessageSid"])
    if state:
        Media.objects.filter(message=message).update(download_state="downloaded", transcription_state=state, **fields)
    return message


def outbound() -> list[str]:
    return list(Message.objects.filter(direction="outbound").order_by("id").values_list("body", flat=True))


def test_the_turn_waits_for_a_voice_note_still_downloading_or_transcribing(home, post_inbound, queued):
    note = voice_note(post_inbound)  # its download is queued, not done
    typed = post_inbound(phone=PHONE, to=ORG_NUMBER, body="and the cupboard is wet")
    typed_id = Message.objects.get(provider_sid=typed.params["MessageSid"]).pk

    wait = inbound_process(message_id=typed_id)
    assert wait is not None and 0 < wait <= 30  # the wait goes back to the task; nothing sleeps
    assert not Turn.objects.exists()

    Media.objects.filter(message=note).update(download_state="downloaded", transcription_state="pending")
    assert voice_notes_wait(message_ids=[note.pk, typed_id]) > 0  # transcribing: still waiting

    Media.objects.filter(message=note).update(transcription_state="done", transcript="The kitchen tap is leaking")
    scripted_queue(phone=PHONE, calls=[call("respond", message="Which tap is it?")])
    assert inbound_process(message_id=typed_id) is None
    [turn] = Turn.objects.all()
    assert turn.message_ids == [note.pk, typed_id]  # one burst


def test_past_the_wait_the_turn_goes_on_without_the_transcript(home, post_inbound, queued, settings):
    note = voice_note(post_inbound, state="pending")
    Message.objects.filter(pk=note.pk).update(created_at=timezone.now() - timezone.timedelta(seconds=31))
    scripted_queue(phone=PHONE, calls=[call("respond", message="Could you type that for me?")])
    assert inbound_process(message_id=note.pk) is None
    assert Turn.objects.get().message_ids == [note.pk]
    assert Media.objects.get(message=note).transcription_state == "pending"  # a late transcript still lands


@pytest.mark.parametrize(("language", "expected"), [("", "en"), ("pl", "pl"), ("es", "es")])
def test_with_the_assistant_off_the_product_asks_to_type_in_the_tenants_language(
    home, post_inbound, queued, language, expected
):
    home.llm_orchestration_enabled = False
    home.save()
    note = voice_note(post_inbound, state="failed", transcription_error="HTTP 400")
    if language:
        Conversation.objects.filter(pk=note.conversation_id).update(language=language)
    inbound_process(message_id=note.pk)
    assert Turn.objects.get().outcome == "flag_off"
    assert outbound()[-1] == ASK_TO_TYPE_TEXTS[expected]
    assert outbound().count(ASK_TO_TYPE_TEXTS[expected]) == 1


def test_when_the_model_is_unavailable_the_product_asks_to_type(home, post_inbound, queued):
    note = voice_note(post_inbound, state="off")
    scripted_queue(phone=PHONE, calls=[{"error": "unavailable"}] * 5)
    inbound_process(message_id=note.pk)
    assert Turn.objects.get().outcome == "fallback"
    assert outbound()[-1] == ASK_TO_TYPE_TEXTS["en"]


def test_with_the_model_on_the_model_asks_and_the_product_does_not(home, post_inbound, queued):
    note = voice_note(post_inbound, state="failed", transcription_error="too long")
    scripted_queue(phone=PHONE, calls=[call("respond", message="Sorry, could you type that?")])
    inbound_process(message_id=note.pk)
    assert outbound() == ["Sorry, could you type that?"]


def test_a_transcribed_voice_note_needs_no_ask(home, post_inbound, queued):
    home.llm_orchestration_enabled = False
    home.save()
    note = voice_note(post_inbound, state="done", transcript="The boiler is broken")
    inbound_process(message_id=note.pk)
    assert all(body not in ASK_TO_TYPE_TEXTS.values() for body in outbound())


def test_a_transcript_after_the_turn_gave_up_is_answered_in_a_turn_of_its_own(home, post_inbound, queued, settings):
    """The turn asked the tenant to type (past the wait); the transcript lands
    later. The voice note is answered after all, although the same burst
    held a text after it; once the tenant writes again, their next turn reads
    the transcript in the history instead."""
    from conversations.signals import transcript_done

    note = voice_note(post_inbound, state="pending")
    typed = post_inbound(phone=PHONE, to=ORG_NUMBER, body="see above")
    typed_id = Message.objects.get(provider_sid=typed.params["MessageSid"]).pk
    past_the_wait = timezone.now() - timezone.timedelta(seconds=31)
    Message.objects.filter(pk__in=[note.pk, typed_id]).update(created_at=past_the_wait)
    scripted_queue(phone=PHONE, calls=[call("respond", message="Could you type that for me?")])
    assert inbound_process(message_id=typed_id) is None
    assert Turn.objects.get().message_ids == [note.pk, typed_id]

    Media.objects.filter(message=note).update(transcription_state="done", transcript="The kitchen tap is leaking")
    transcript_done.send(sender=Media, message_id=note.pk)
    scripted_queue(phone=PHONE, calls=[call("respond", message="Thanks, which tap?")])
    assert inbound_process(message_id=note.pk) is None
    assert Turn.objects.order_by("id").last().message_ids == [note.pk]
    assert outbound()[-1] == "Thanks, which tap?"

    post_inbound(phone=PHONE, to=ORG_NUMBER, body="the cold one")
    transcript_done.send(sender=Media, message_id=note.pk)  # a second transcript event changes nothing now
    assert Message.objects.get(pk=note.pk).processed_at is not None


def test_a_transcript_that_lands_while_the_model_decides_is_answered_in_a_turn_of_its_own(
    home, post_inbound, queued, monkeypatch
):
    import orchestration.engine as engine

    note = voice_note(post_inbound, state="pending")
    Message.objects.filter(pk=note.pk).update(created_at=timezone.now() - timezone.timedelta(seconds=31))
    run = engine.turn_run

    def transcribed_while_deciding(**kwargs):
        turn = run(**kwargs)  # read the voice note untranscribed ...
        Media.objects.filter(message=note).update(transcription_state="done", transcript="The tap is leaking")
        return turn  # ... and its transcript landed before the turn came back

    monkeypatch.setattr(engine, "turn_run", transcribed_while_deciding)
    scripted_queue(
        phone=PHONE,
        calls=[call("respond", message="Could you type that for me?"), call("respond", message="Which tap?")],
    )
    assert inbound_process(message_id=note.pk) is None
    # The pipeline's next round answered the voice note with its words.
    assert [t.message_ids for t in Turn.objects.order_by("id")] == [[note.pk], [note.pk]]
    assert outbound()[-2:] == ["Could you type that for me?", "Which tap?"]
    assert Message.objects.get(pk=note.pk).processed_at is not None


def test_a_contractors_late_transcript_is_not_passed_on_twice(home, post_inbound, queued):
    from orchestration.voice_notes import late_transcript_reopen
    from properties.models import Contractor

    Contractor.objects.create(organization=home, name="Pat", whatsapp=PHONE)
    note = voice_note(post_inbound, state="done", transcript="I'll come on Tuesday")
    Message.objects.filter(pk=note.pk).update(processed_at=timezone.now())
    assert late_transcript_reopen(note.pk) is False
