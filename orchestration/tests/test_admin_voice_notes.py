"""The conversation page plays a voice note and shows what the transcriber
heard; the audio is served to the organization's staff only."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from conversations.models import Media, Message
from properties.tests.persona import MessageFactory, alice_and_bob

pytestmark = pytest.mark.django_db

OGG = b"OggS" + b"\0" * 200


def voice_note(conversation, **fields) -> Media:
    message: Message = MessageFactory(conversation=conversation, body="", kind="audio")  # type: ignore[assignment]
    media = Media(message=message, index=0, provider_url="https://api.twilio.com/x", content_type="audio/ogg", **fields)
    media.file.save("note.ogg", ContentFile(OGG), save=False)
    media.download_state = Media.DownloadState.DOWNLOADED
    media.save()
    return media


def test_the_conversation_page_plays_the_voice_note_and_shows_its_transcript(client):
    alice, _ = alice_and_bob()
    client.force_login(alice.user)
    done = voice_note(
        alice.conversation,
        transcription_state="done",
        transcript="The shower is leaking into the flat below",
        transcript_language="en",
        duration_seconds=7.2,
    )
    failed = voice_note(alice.conversation, transcription_state="failed", transcription_error="HTTP 400 from the stub")
    html = client.get(reverse("admin:conversations_conversation_change", args=[alice.conversation.pk])).content.decode()

    url = reverse("admin:conversations_media_file", args=[done.pk])
    assert f'<audio controls preload="none" src="{url}"></audio>' in html
    assert "“The shower is leaking into the flat below”" in html
    assert "voice note · 7 s · transcribed · en" in html
    assert "could not be transcribed" in html and "HTTP 400 from the stub" in html
    assert reverse("admin:conversations_media_file", args=[failed.pk]) in html  # kept, and still playable

    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "audio/ogg"
    assert b"".join(response.streaming_content) == OGG
    assert response["X-Content-Type-Options"] == "nosniff"

    media_page = client.get(reverse("admin:conversations_media_change", args=[done.pk])).content.decode()
    assert f'id="voice-note-{done.pk}"' in media_page and "The shower is leaking" in media_page


def test_another_organization_cannot_hear_the_voice_note(client):
    alice, bob = alice_and_bob()
    media = voice_note(alice.conversation, transcription_state="done", transcript="private words")
    client.force_login(bob.user)
    assert client.get(reverse("admin:conversations_media_file", args=[media.pk])).status_code == 404
