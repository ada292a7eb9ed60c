"""Voice notes end to end with a real Celery worker on real Redis: the signed
webhook, the download from the Twilio stub, the transcription stub (a local
OpenAI-compatible server), the turn (the real anthropic SDK against its stub)
and the reply through the real twilio SDK. The audio is real: espeak-ng
speaks it and ffmpeg encodes it to OGG/Opus, as WhatsApp sends voice notes."""

from __future__ import annotations

import json
import uuid

import pytest

from conftest import wait_for
from conversations.models import Media, Message
from emergencies.models import EmergencyAlert
from emergencies.testing import safety_texts
from orchestration.models import Turn
from orchestration.replies import REPLIES
from orchestration.testing.anthropic_stub import tool_use_response
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

ASK_TO_TYPE_TEXTS = REPLIES["voice_note_type"]

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def serve_voice_note(twilio_stub, audio: bytes) -> tuple[str, str]:
    """Put ``audio`` on the Twilio stub; returns the (MediaUrl, content type) a webhook posts."""
    path = f"/2010-04-01/Accounts/AC{'1' * 32}/Messages/MM{uuid.uuid4().hex}/Media/ME{uuid.uuid4().hex}"
    twilio_stub.serve_file(path, audio, content_type="audio/ogg")
    return "https://api.twilio.com" + path, "audio/ogg"


def say_voice_note(post_inbound, twilio_stub, audio: bytes):
    response = post_inbound(
        phone=PHONE, to=ORG_NUMBER, media=[serve_voice_note(twilio_stub, audio)], extra={"MessageType": "audio"}
    )
    assert response.status_code == 200
    return Message.objects.get(provider_sid=response.params["MessageSid"])


def sent_bodies(twilio_stub) -> list[str]:
    return [form.get("Body", "") for form in twilio_stub.sent]


def start_worker(celery_worker_factory, **env: str):
    settings = {"EMERGENCY_CLASSIFIER": "off", "INBOUND_COALESCE_SECONDS": "1", **env}
    return celery_worker_factory(**settings).start()


def test_a_voice_note_and_the_text_after_it_are_one_turn_that_reads_the_transcript(
    home, post_inbound, twilio_stub, transcription_stub, anthropic_stub, voice_note, celery_worker_factory
):
    audio = voice_note("The kitchen tap is leaking")
    transcription_stub.hear(audio, "The kitchen tap has been leaking since Monday.")
    transcription_stub.delay = 2.0  # longer than the coalescing wait: only the transcription wait keeps them together
    anthropic_stub.queue(tool_use_response("respond", {"message": "Sorry to hear that. Which room is it in?"}))
    start_worker(celery_worker_factory)

    note = say_voice_note(post_inbound, twilio_stub, audio)
    typed = post_inbound(phone=PHONE, to=ORG_NUMBER, body="it is the cold one")
    wait_for(lambda: "Which room is it in?" in " ".join(sent_bodies(twilio_stub)), timeout=60, message="the reply")

    [turn] = Turn.objects.all()
    typed_id = Message.objects.get(provider_sid=typed.params["MessageSid"]).pk
    assert turn.message_ids == [note.pk, typed_id]  # one burst, in order
    [upload] = transcription_stub.requests
    assert upload["audio"] == audio and upload["fields"]["model"] == "whisper-1"
    [request] = anthropic_stub.requests
    words = json.dumps(request["json"])
    assert 'voice note, transcribed: \\"The kitchen tap has been leaking since Monday.\\"' in words
    assert "it is the cold one" in words
    media = Media.objects.get(message=note)
    assert (media.transcription_state, media.transcript_language) == ("done", "en")


def test_a_transcribed_gas_leak_gets_the_safety_text_as_a_whatsapp_message_once(
    home,
    emergency_defaults,
    post_inbound,
    twilio_stub,
    transcription_stub,
    voice_note,
    celery_worker_factory,
    settings,
):
    settings.EMERGENCY_CLASSIFIER = "off"
    audio = voice_note("I can smell gas in the kitchen")
    transcription_stub.hear(audio, "I can smell gas in the kitchen.")
    start_worker(celery_worker_factory, USE_LLM_ORCHESTRATION="false")

    response = post_inbound(
        phone=PHONE, to=ORG_NUMBER, media=[serve_voice_note(twilio_stub, audio)], extra={"MessageType": "audio"}
    )
    assert "<Message>" not in response.content.decode()  # nothing was said yet when the TwiML went back
    alert = wait_for(lambda: EmergencyAlert.objects.first(), timeout=60, message="the alert")
    assert alert.category == "gas"
    wait_for(lambda: alert.safety_reply in sent_bodies(twilio_stub), timeout=30, message="the safety text sent")
    wait_for(lambda: Turn.objects.exists(), timeout=30, message="the turn")
    assert EmergencyAlert.objects.count() == 1
    assert safety_texts(PHONE) == [alert.safety_reply]
    assert sent_bodies(twilio_stub).count(alert.safety_reply) == 1


@pytest.mark.parametrize("case", ["off", "too_long"])
def test_a_voice_note_that_cannot_be_transcribed_is_kept_and_the_tenant_asked_to_type(
    home, post_inbound, twilio_stub, transcription_stub, voice_note, celery_worker_factory, case
):
    """With the assistant switched off no model reads the context, so the product asks itself."""
    env = {"USE_LLM_ORCHESTRATION": "false"}
    env.update({"TRANSCRIPTION_BACKEND": "off"} if case == "off" else {"MEDIA_MAX_AUDIO_SECONDS": "1"})
    start_worker(celery_worker_factory, **env)

    note = say_voice_note(post_inbound, twilio_stub, voice_note("Water is coming through the bathroom ceiling"))
    wait_for(lambda: ASK_TO_TYPE_TEXTS["en"] in sent_bodies(twilio_stub), timeout=60, message="the ask to type")

    media = Media.objects.get(message=note)
    assert media.download_state == "downloaded" and media.file.size > 0  # the audio is kept
    assert media.transcription_state == ("off" if case == "off" else "failed")
    assert transcription_stub.requests == []
    assert sent_bodies(twilio_stub).count(ASK_TO_TYPE_TEXTS["en"]) == 1


def test_the_transcriber_is_retried_after_503s_and_then_the_turn_reads_it(
    home, post_inbound, twilio_stub, transcription_stub, anthropic_stub, voice_note, celery_worker_factory
):
    audio = voice_note("The boiler is broken")
    transcription_stub.hear(audio, "The boiler is broken.")
    transcription_stub.fail(2, status=503)
    anthropic_stub.queue(tool_use_response("respond", {"message": "Is there any hot water at all?"}))
    start_worker(celery_worker_factory)

    note = say_voice_note(post_inbound, twilio_stub, audio)
    wait_for(lambda: "Is there any hot water at all?" in sent_bodies(twilio_stub), timeout=60, message="the reply")
    assert len(transcription_stub.requests) == 3
    assert Media.objects.get(message=note).transcript == "The boiler is broken."
    assert "The boiler is broken." in json.dumps(anthropic_stub.requests[0]["json"])
