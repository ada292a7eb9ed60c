"""Voice notes in the channel: downloading audio with its own caps, reading
its length, and the http transcriber against a local OpenAI-compatible stub
(the real ``requests`` client, real audio made with espeak-ng and ffmpeg)."""

from __future__ import annotations

import pytest

from conversations.audio import AMR_NB_MAGIC, audio_duration
from conversations.media import media_download
from conversations.models import Media, Message, TranscriptionState
from conversations.testing.transcription_stub import TranscriptionReply
from conversations.tests.factories import MediaFactory
from conversations.transcription import TranscriptionRetry, media_transcribe

pytestmark = pytest.mark.django_db

PATH = "/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"
URL = "https://api.twilio.com" + PATH


def voice_media(**kwargs) -> Media:
    kwargs.setdefault("content_type", "audio/ogg")
    media: Media = MediaFactory(provider_url=URL, **kwargs)  # type: ignore[assignment]  # factory_boy builds a Media
    Message.objects.filter(pk=media.message_id).update(kind="audio", screened_at="2026-11-25T00:00:00Z")
    return media


def downloaded(twilio_stub, audio: bytes, content_type: str = "audio/ogg") -> Media:
    twilio_stub.serve_file(PATH, audio, content_type=content_type)
    media = media_download(media_id=voice_media(content_type=content_type).pk)
    assert media is not None
    return media


def test_the_length_of_a_real_voice_note_is_read_from_the_file(voice_note):
    audio = voice_note("The radiator in the bedroom is cold")
    assert audio[:4] == b"OggS"
    assert 1.0 < audio_duration(audio, "audio/ogg") < 5.0


def test_the_length_of_an_amr_note_is_counted_from_its_frames():
    frame = bytes([7 << 3]) + b"\0" * 31  # 12.2 kbit/s: one header byte and 31 bytes of speech, 20 ms
    assert audio_duration(AMR_NB_MAGIC + frame * 150, "audio/amr") == pytest.approx(3.0)


def test_a_file_that_is_not_audio_has_no_length():
    assert audio_duration(b"not audio at all", "audio/ogg") is None


def test_a_voice_note_is_downloaded_measured_and_queued_for_transcription(
    twilio_stub, transcription_stub, voice_note, queued, django_capture_on_commit_callbacks
):
    audio = voice_note("My boiler is making a banging noise")
    with django_capture_on_commit_callbacks(execute=True):
        media = downloaded(twilio_stub, audio)
    assert media.download_state == Media.DownloadState.DOWNLOADED and media.file.name.endswith(".ogg")
    assert media.transcription_state == TranscriptionState.PENDING and media.duration_seconds > 1
    assert ("media.transcribe", [media.pk], "transcription") in queued


def test_audio_has_its_own_size_cap(twilio_stub, transcription_stub, voice_note, settings):
    settings.MEDIA_MAX_IMAGE_BYTES = 100  # images' cap does not apply to audio
    audio = voice_note("The front door lock is broken")
    settings.MEDIA_MAX_AUDIO_BYTES = len(audio) + 1
    assert downloaded(twilio_stub, audio).download_state == Media.DownloadState.DOWNLOADED

    settings.MEDIA_MAX_AUDIO_BYTES = len(audio) - 1
    twilio_stub.serve_file(PATH, audio, content_type="audio/ogg")
    media = media_download(media_id=voice_media().pk)
    assert media.download_state == Media.DownloadState.REJECTED and "MEDIA_MAX_AUDIO_BYTES" in media.error


def test_an_over_long_voice_note_is_kept_but_not_transcribed(twilio_stub, transcription_stub, voice_note, settings):
    settings.MEDIA_MAX_AUDIO_SECONDS = 1
    media = downloaded(twilio_stub, voice_note("There is water coming through the ceiling of the bathroom"))
    assert media.download_state == Media.DownloadState.DOWNLOADED and media.file.size > 0  # the audio is kept
    assert media.transcription_state == TranscriptionState.FAILED
    assert "MEDIA_MAX_AUDIO_SECONDS" in media.transcription_error
    assert media_transcribe(media_id=media.pk).transcription_state == TranscriptionState.FAILED
    assert transcription_stub.requests == []  # never sent to the transcriber


def test_with_transcription_off_the_voice_note_is_kept_and_marked_off(twilio_stub, voice_note, settings):
    settings.TRANSCRIPTION_BACKEND = "off"
    media = downloaded(twilio_stub, voice_note("The oven does not work"))
    assert media.download_state == Media.DownloadState.DOWNLOADED
    assert media.transcription_state == TranscriptionState.OFF


def test_the_http_transcriber_uploads_the_file_and_stores_the_transcript(
    twilio_stub, transcription_stub, voice_note, queued, django_capture_on_commit_callbacks
):
    audio = voice_note("The kitchen tap is leaking")
    media = downloaded(twilio_stub, audio)
    transcription_stub.queue(TranscriptionReply(text=" The kitchen tap is leaking. ", language="english"))
    with django_capture_on_commit_callbacks(execute=True):
        media = media_transcribe(media_id=media.pk)

    [upload] = transcription_stub.requests
    assert upload["path"] == "/v1/audio/transcriptions"
    assert upload["authorization"] == "Bearer test-transcription-key"
    assert upload["fields"] == {"model": "whisper-1", "response_format": "verbose_json"}
    assert upload["audio"] == audio and upload["filename"].endswith(".ogg")
    assert upload["file_content_type"] == "audio/ogg"
    assert media.transcription_state == TranscriptionState.DONE
    assert (media.transcript, media.transcript_language) == ("The kitchen tap is leaking.", "en")
    assert media.transcribed_at is not None
    # Screened again on its words, and the waiting turn told to go on.
    assert Message.objects.get(pk=media.message_id).screened_at is None
    assert ("emergency.screen", [media.message_id], "emergency") in queued


def test_a_plain_json_answer_without_language_is_accepted(twilio_stub, transcription_stub, voice_note):
    media = downloaded(twilio_stub, voice_note("Hello"))
    transcription_stub.queue(TranscriptionReply(body=b'{"text": "hello"}'))
    media = media_transcribe(media_id=media.pk)
    assert (media.transcription_state, media.transcript, media.transcript_language) == ("done", "hello", "")


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_transient_error_leaves_the_note_pending_for_a_retry(twilio_stub, transcription_stub, voice_note, status):
    media = downloaded(twilio_stub, voice_note("Hello"))
    transcription_stub.fail(1, status=status)
    with pytest.raises(TranscriptionRetry):
        media_transcribe(media_id=media.pk)
    media.refresh_from_db()
    assert media.transcription_state == TranscriptionState.PENDING


def test_a_retry_renews_the_lease_so_the_sweeper_does_not_start_a_second_chain(
    twilio_stub, transcription_stub, voice_note, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from conversations.tasks import transcribe_media

    media = downloaded(twilio_stub, voice_note("Hello"))
    long_ago = timezone.now() - timedelta(seconds=settings.SWEEP_LEASE_SECONDS * 2)
    Media.objects.filter(pk=media.pk).update(queued_at=long_ago)
    settings.TRANSCRIPTION_MAX_RETRIES = 1
    transcription_stub.fail(1, status=503)  # the first try fails, the retry succeeds
    transcribe_media.apply(args=[media.pk])
    media.refresh_from_db()
    assert media.transcription_state == TranscriptionState.DONE
    assert media.queued_at > long_ago


def test_a_timeout_is_transient(twilio_stub, transcription_stub, voice_note, settings):
    media = downloaded(twilio_stub, voice_note("Hello"))
    settings.TRANSCRIPTION_TIMEOUT_SECONDS = 0.2
    transcription_stub.queue(TranscriptionReply(delay=1.0))
    with pytest.raises(TranscriptionRetry):
        media_transcribe(media_id=media.pk)


@pytest.mark.parametrize("reply", [TranscriptionReply(status=400), TranscriptionReply(body=b"<html>")])
def test_a_permanent_error_marks_the_note_failed_at_once(twilio_stub, transcription_stub, voice_note, reply):
    media = downloaded(twilio_stub, voice_note("Hello"))
    transcription_stub.queue(reply)
    media = media_transcribe(media_id=media.pk)
    assert media.transcription_state == TranscriptionState.FAILED and media.transcription_error
    assert len(transcription_stub.requests) == 1


def test_a_done_transcript_is_not_transcribed_twice(twilio_stub, transcription_stub, voice_note):
    media = downloaded(twilio_stub, voice_note("Hello"))
    media_transcribe(media_id=media.pk)
    media_transcribe(media_id=media.pk)  # a redelivered task
    assert len(transcription_stub.requests) == 1


def test_the_sweeper_queues_a_lost_transcription_again_after_the_lease(
    twilio_stub, transcription_stub, voice_note, queued, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from conversations.sweeper import channel_sweep

    media = downloaded(twilio_stub, voice_note("Hello"))  # its task was never run
    assert media.queued_at is not None
    assert channel_sweep()["transcriptions"] == 0  # within the grace and the lease
    later = timezone.now() + timedelta(seconds=settings.SWEEP_LEASE_SECONDS + settings.OUTBOUND_SWEEP_GRACE_SECONDS + 1)
    assert channel_sweep(now=later)["transcriptions"] == 1
    assert ("media.transcribe", [media.pk], "transcription") in queued
    assert channel_sweep(now=later)["transcriptions"] == 0  # leased again: not doubled


def test_a_transcript_after_the_turn_stopped_waiting_is_answered_unless_the_tenant_wrote_since(
    twilio_stub, transcription_stub, voice_note, queued, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    from conversations.tests.factories import MessageFactory

    def late(text: str, *, then_wrote: bool) -> Message:
        media = downloaded(twilio_stub, voice_note(text))
        message = media.message
        # The turn gave up waiting and asked the tenant to type it.
        Message.objects.filter(pk=message.pk).update(processed_at=timezone.now())
        if then_wrote:
            MessageFactory(conversation=message.conversation, body="its the kitchen tap")
        transcription_stub.queue(TranscriptionReply(text=text, language="english"))
        with django_capture_on_commit_callbacks(execute=True):
            media_transcribe(media_id=media.pk)
        return Message.objects.get(pk=message.pk)

    answered = late("The kitchen tap is leaking", then_wrote=False)
    assert answered.processed_at is None  # goes to a turn again, with its words
    assert ("inbound.process", [answered.pk], "inbound") in queued
    typed = late("The bathroom light flickers", then_wrote=True)
    assert typed.processed_at is not None  # the tenant's typed words are the next turn's
