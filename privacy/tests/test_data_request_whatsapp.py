"""A tenant asking for their data over WhatsApp: the webhook records a pending
request for the landlord and sends nothing; the detector's figures on the own
set and the frozen held-out set."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from config import tasks
from conversations.models import Message
from privacy.detector import data_request_detect
from privacy.models import AuditEvent, DataRequest

DATA = Path(__file__).parent / "data"
HELD_OUT = DATA / "data_request_heldout.jsonl"
HELD_OUT_SHA256 = "69f563b688f9158c25807ff0a6b1ab1902b8d9233ebcc8b896a8a09a08d5c10b"
# The second batch, written after the first rules (their misses then fixed by class, so now tuned on),
# and the third, written after that fix and never tuned on (docs/data-protection.md reports them).
HELD_OUT_2 = DATA / "data_request_heldout2.jsonl"
HELD_OUT_2_SHA256 = "fed8ada33d51ab7407a4a2e73229be9e90b0abaffab9ece669bb3605e739384a"
HELD_OUT_3 = DATA / "data_request_heldout3.jsonl"
HELD_OUT_3_SHA256 = "b3535e05cfc5feedb7646781dd5da456cc5747c83411330fe70e992da5a2fa24"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        "hi can you send me all the data you have about me please",
        "Proszę o kopię moich danych osobowych",
        "quiero una copia de mis datos personales",
        "vreau o copie a datelor mele personale",
        "quero uma cópia dos meus dados pessoais",
    ],
)
def test_asking_for_my_data_records_a_pending_request_and_sends_nothing(
    worlds, post_inbound, queued, twilio_stub, body
):
    alice, _bob = worlds
    outbound_before = Message.objects.filter(direction="outbound").count()
    response = post_inbound(phone=alice.tenant.phone, to=alice.number.number, body=body)
    assert response.status_code == 200
    request = DataRequest.objects.get()
    assert (request.status, request.kind, request.source) == ("pending", "export", "whatsapp")
    assert request.tenant == alice.tenant and request.organization == alice.organization
    assert request.message.body == body
    # Nothing was sent or queued to send: the landlord decides.
    assert Message.objects.filter(direction="outbound").count() == outbound_before
    assert tasks.OUTBOUND_SEND not in [name for name, _, _ in queued]
    assert "<Message>" not in response.content.decode()
    assert AuditEvent.objects.filter(organization_id=alice.organization.pk, action="request", via="whatsapp").exists()
    # A repeated delivery records no second request.
    post_inbound(response.params)
    assert DataRequest.objects.count() == 1


@pytest.mark.django_db
def test_an_ordinary_repair_message_records_no_request(worlds, post_inbound, queued):
    alice, _ = worlds
    post_inbound(phone=alice.tenant.phone, to=alice.number.number, body="my mobile data is fine but the boiler is off")
    assert not DataRequest.objects.exists()


def _measure(path: Path) -> tuple[int, int, int, int]:
    tp = fp = fn = tn = 0
    for line in path.read_text().splitlines():
        item = json.loads(line)
        said = data_request_detect(item["text"])
        tp += said and item["label"] == 1
        fp += said and item["label"] == 0
        fn += (not said) and item["label"] == 1
        tn += (not said) and item["label"] == 0
    return tp, fp, fn, tn


def test_the_held_out_set_is_frozen_and_covers_five_languages():
    assert hashlib.sha256(HELD_OUT.read_bytes()).hexdigest() == HELD_OUT_SHA256
    assert hashlib.sha256(HELD_OUT_2.read_bytes()).hexdigest() == HELD_OUT_2_SHA256
    assert hashlib.sha256(HELD_OUT_3.read_bytes()).hexdigest() == HELD_OUT_3_SHA256
    items = [json.loads(line) for line in HELD_OUT.read_text().splitlines()]
    assert {item["lang"] for item in items} == {"en", "pl", "es", "ro", "pt"}
    assert len(items) >= 30 and {item["label"] for item in items} == {0, 1}


def test_the_detector_on_its_own_set():
    tp, fp, fn, tn = _measure(DATA / "data_request_own.jsonl")
    assert fp == 0 and fn == 0, (tp, fp, fn, tn)
