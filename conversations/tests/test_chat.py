"""``manage.py chat``: lines typed on stdin go through a live server's webhook
and a real Celery worker; the replies print as the phone would show them."""

from __future__ import annotations

import datetime
import io
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from conftest import wait_for
from conversations.models import Conversation, Media, Message
from conversations.outbound import Choice, outbound_choice_queue
from emergencies.defaults import defaults_seed
from emergencies.models import EmergencyRule, SafetyMessage
from issues.models import Issue
from llm.scripted import scripted_clear, scripted_queue
from properties.tests.factories import (
    OrganizationFactory,
    PropertyFactory,
    TenancyFactory,
    TenantFactory,
    WhatsAppNumberFactory,
)

PHOTO = Path(__file__).resolve().parents[2] / "stack" / "demo_assets" / "leaking-pipe.jpg"
PHONE = "+447700900555"
ORG_NUMBER = "+14155550077"


def _organization():
    organization = OrganizationFactory(slug="harbour", name="Harbour Lettings")
    WhatsAppNumberFactory(organization=organization, number=ORG_NUMBER)
    flat = PropertyFactory(organization=organization, code="FLAT-1", address="Flat 1, 12 Harbour Street, Leeds")
    tenant = TenantFactory(organization=organization, phone=PHONE, name="Sam Lee")
    TenancyFactory(tenant=tenant, property=flat, start_date=datetime.date(2026, 1, 1))
    return organization


def _chat(monkeypatch, stdin: str, *, stderr: io.StringIO | None = None, **options) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    out = io.StringIO()
    call_command("chat", phone=PHONE, stdout=out, stderr=stderr or io.StringIO(), **options)
    return out.getvalue()


def _call(tool: str, **tool_input) -> dict:
    return {"tool": tool, "input": tool_input}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_chat_sends_each_line_and_photo_through_the_webhook_and_prints_the_replies(
    live_server, celery_worker_factory, monkeypatch, settings, tmp_path
):
    settings.LLM_BACKEND = "scripted"
    # The keyword rules alone, in the request: this tests the chat command, not the classifier
    # (which scores "Water is leaking under my kitchen sink" 0.62, a false alarm: docs/emergencies.md).
    settings.EMERGENCY_CLASSIFIER = "off"
    defaults_seed(EmergencyRule, SafetyMessage)  # transactional tests flush the migration's rules
    _organization()
    celery_worker_factory(
        LLM_BACKEND="scripted",
        MEDIA_ROOT=str(settings.MEDIA_ROOT),
        INBOUND_COALESCE_SECONDS="0",
        EMERGENCY_CLASSIFIER="off",
    ).start()
    scripted_queue(
        phone=PHONE,
        calls=[
            _call(
                "create_issue",
                title="Leak under the kitchen sink",
                description="Water leaking under the kitchen sink.",
                category="plumbing",
                urgency="routine",
                location="kitchen sink",
                photo="provided",
                message="Logged with your photo.",
            ),
            _call("respond", message="Thanks for the second photo."),
            _call("respond", message="Please get outside now."),
        ],
    )
    try:
        output = _chat(
            monkeypatch,
            f"Water is leaking under my kitchen sink\n\n/photo {PHOTO}\nI can smell gas\n",
            org="harbour",
            url=live_server.url,
            media=PHOTO,
            timeout=60,
        )
    finally:
        scripted_clear(phone=PHONE)

    assert "No ANTHROPIC_API_KEY" in output  # the scripted model says so
    lines = output.splitlines()
    replies = [line for line in lines if line.startswith("< ")]
    assert replies[0] == "< Logged with your photo."
    assert replies[1] == "< Thanks for the second photo."
    assert replies[2].startswith("< If you smell gas")  # the webhook's own TwiML (rules alone), printed at once
    assert replies[3] == "< Please get outside now."
    assert len(replies) == 4, output

    inbound = Message.objects.filter(direction="inbound").order_by("id")
    assert [m.body for m in inbound] == ["Water is leaking under my kitchen sink", "", "I can smell gas"]
    assert [m.media.count() for m in inbound] == [1, 1, 0]  # --media with the first line, /photo alone
    wait_for(lambda: not Media.objects.exclude(download_state="downloaded").exists(), message="both photos downloaded")
    assert Issue.objects.get(title="Leak under the kitchen sink").photos.count() >= 1
    assert Issue.objects.get(urgency="emergency").category == "gas"  # the alert's own issue, filed by code


@pytest.mark.django_db
def test_chat_refuses_an_unknown_organization_or_a_missing_photo(monkeypatch, tmp_path):
    _organization()
    with pytest.raises(CommandError, match="no organization 'nowhere'"):
        _chat(monkeypatch, "hello\n", org="nowhere")
    with pytest.raises(CommandError, match="no such file"):
        _chat(monkeypatch, "hello\n", org="harbour", media=tmp_path / "missing.jpg")


@pytest.mark.django_db
def test_chat_says_when_the_server_is_not_running(monkeypatch):
    _organization()
    with pytest.raises(CommandError, match="Is `make run` running"):
        _chat(monkeypatch, "hello\n", org="harbour", url="http://127.0.0.1:9")


@pytest.mark.django_db
def test_chat_talks_to_the_stack_where_bind_says_it_listens(monkeypatch, settings):
    """Not to 127.0.0.1:8000 whatever ``make run`` was started on: on a shared
    machine that is someone else's server."""
    _organization()
    settings.BIND = "0.0.0.0:9"  # nothing listens on port 9 (discard)
    with pytest.raises(CommandError, match=r"could not reach http://127\.0\.0\.1:9: "):
        _chat(monkeypatch, "hello\n", org="harbour")


@pytest.mark.django_db
def test_chat_photo_command_with_a_missing_file_says_so_and_sends_nothing(monkeypatch, tmp_path):
    _organization()
    errors = io.StringIO()
    # Nothing answers on this URL: the command would fail if it tried to send.
    _chat(monkeypatch, f"/photo {tmp_path / 'missing.jpg'}\n", stderr=errors, org="harbour", url="http://127.0.0.1:9")
    assert f"/photo {tmp_path / 'missing.jpg'}: no such file; nothing sent" in errors.getvalue()
    assert not Message.objects.exists()


@pytest.mark.django_db
def test_chat_commands_written_wrong_say_how_and_send_nothing(monkeypatch):
    _organization()
    errors = io.StringIO()
    lines = "/pin north,west\n/pin 95,0\n/tap 1\n/voice /no/such/note.ogg\n"
    # Nothing answers on this URL: the command would fail if it tried to send.
    _chat(monkeypatch, lines, stderr=errors, org="harbour", url="http://127.0.0.1:9")
    said = errors.getvalue()
    assert said.count("/pin LATITUDE,LONGITUDE [label]") == 2
    assert "/tap: the latest message has no buttons to tap; nothing sent" in said
    assert "/voice /no/such/note.ogg: no such file; nothing sent" in said
    assert not Message.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_chat_shares_a_pin_and_taps_the_latest_questions_button(live_server, monkeypatch, settings, queued):
    settings.EMERGENCY_CLASSIFIER = "off"  # this tests the chat command
    organization = _organization()
    conversation = Conversation.objects.create(organization=organization, phone=PHONE, whatsapp_id=f"whatsapp:{PHONE}")
    outbound_choice_queue(
        conversation=conversation,
        body="Is your home Flat 1? Reply 1 for Yes, 2 for No",
        choices=[Choice(payload="confirm_property:yes:FLAT-1", title="Yes"), Choice(payload="no", title="No")],
        purpose="property_confirm",
        content_variables={},
    )
    _chat(monkeypatch, "/pin 53.7960,-1.5470 Flat 1\n/tap 1\n", org="harbour", url=live_server.url, timeout=0.1)

    pin, tap = Message.objects.filter(direction="inbound").order_by("id")
    assert (pin.kind, str(pin.latitude), pin.location_name) == ("location", "53.796000", "Flat 1")
    assert (tap.kind, tap.button_payload, tap.body) == ("button", "confirm_property:yes:FLAT-1", "Yes")
