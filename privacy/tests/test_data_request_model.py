"""The model's door to a data request (the ``data_request`` tool): it reads
the conversation in any words, so it records what the detector's phrases
miss; either door records one pending request, and nothing is sent but the
reply."""

from __future__ import annotations

import pytest

from conversations.models import GatheringState
from orchestration.testing.fixtures import PHONE, call, conversation_for
from privacy.models import DataRequest

pytestmark = pytest.mark.django_db

# Words the detector's held-out batch showed it misses (docs/data-protection.md).
MISSED_BY_THE_PHRASES = "vreau toate conversatiile si mesajele vocale pe care le aveti cu mine"


@pytest.fixture(autouse=True)
def _rules_only(settings):
    settings.EMERGENCY_CLASSIFIER = "off"  # this tests data requests, not the emergency detector


def test_the_model_records_a_request_the_phrases_missed(home, tenant_says):
    reply = call("data_request", kind="export", message="Am transmis cererea agenției; vă vor răspunde.")
    replies = tenant_says(MISSED_BY_THE_PHRASES, model=[reply])

    request = DataRequest.objects.get()
    assert (request.kind, request.status, request.source) == ("export", "pending", "whatsapp")
    assert request.conversation == conversation_for(PHONE) and request.tenant is not None
    assert replies == ["Am transmis cererea agenției; vă vor răspunde."]  # the reply only: no data goes out


def test_an_erasure_ask_mid_report_leaves_the_report_where_it_was(home, tenant_says):
    tenant_says("The bathroom extractor fan has stopped", model=[call("ask_for_details", question="Since when?")])
    tenant_says(
        "also please delete everything you have on me once this is fixed",
        model=[call("data_request", kind="erasure", message="I've passed that on to the agency.")],
    )
    assert DataRequest.objects.get().kind == "erasure"
    assert conversation_for(PHONE).gathering_state == GatheringState.GATHERING_DETAILS


def test_the_detector_and_the_model_seeing_one_ask_make_one_request(home, tenant_says):
    reply = call("data_request", kind="export", message="Passed to the agency.")
    tenant_says("Please send me a copy of all my data", model=[reply])
    tenant_says("did you get my request for my data?", model=[reply])
    assert DataRequest.objects.count() == 1  # still pending: not asked twice


def test_an_erasure_the_phrases_took_for_an_export_is_still_recorded(home, tenant_says):
    # "my data" + "want" is an export to the phrases; the model reads an erasure.
    tenant_says(
        "I want you to delete my data please",
        model=[call("data_request", kind="erasure", message="I've passed that on to the agency.")],
    )
    assert sorted(DataRequest.objects.values_list("kind", flat=True)) == ["erasure", "export"]
