"""The scripted model with nothing queued (what ``make demo`` and ``manage.py
chat`` run without ANTHROPIC_API_KEY), through the real turn engine: the
issue it files reads like the tenant's problem, and it says when it has not
understood instead of answering with whatever passage came up."""

from __future__ import annotations

import pytest

from conversations.models import Message
from issues.models import Issue
from orchestration.models import Turn
from orchestration.testing.fixtures import conversation_for

pytestmark = pytest.mark.django_db

STRANGER = "+447700900555"  # a number with no tenancy: the tenant gives their address
NOT_UNDERSTOOD = "Sorry, I didn't understand — could you tell me what needs repairing and where?"


def _chat(tenant_says, lines: list[str], *, phone: str) -> list[str]:
    transcript = []
    for line in lines:
        transcript.append(f"> {line}")
        transcript += [f"< {reply}" for reply in tenant_says(line, phone=phone)]
    return transcript


def test_unknown_tenant_with_no_heating_gets_an_issue_that_says_so(home, tenant_says):
    transcript = _chat(
        tenant_says,
        [
            "Hi, my boiler has stopped working, no heating or hot water",
            "12 Harbour Street, LS1 4AB",
            "yes",
            "It's in the kitchen cupboard, since this morning",
        ],
        phone=STRANGER,
    )
    if conversation_for(STRANGER).gathering_state != "awaiting_photo":  # ask_for_photo not allowed from idle here
        transcript += _chat(tenant_says, ["since this morning"], phone=STRANGER)
    assert conversation_for(STRANGER).gathering_state == "awaiting_photo", transcript
    transcript += _chat(tenant_says, ["sorry I can't take a photo"], phone=STRANGER)
    issue = Issue.objects.get()
    assert issue.title.startswith("Boiler not working"), transcript
    assert "no heating or hot water" in issue.title
    assert (issue.category, issue.urgency, issue.location) == ("heating", "urgent", "kitchen")
    assert issue.description.startswith("Hi, my boiler has stopped working, no heating or hot water")
    assert "kitchen cupboard" in issue.description
    # The address, the yes and the photo decline are not the problem.
    assert "Harbour" not in issue.description and "photo" not in issue.description
    assert " yes" not in issue.description
    assert issue.photo == "declined"
    assert issue.reference in transcript[-1]


def test_a_bare_boiler_report_is_asked_where_not_filed(home, tenant_says):
    [reply] = tenant_says("my boiler is broken")
    assert "Where" in reply and "?" in reply
    assert conversation_for().gathering_state == "gathering_details"
    assert not Issue.objects.exists()


def test_gibberish_gets_a_plain_sorry_and_changes_nothing(home, tenant_says):
    assert tenant_says("asdkjh qwpoeiru zzxv") == [NOT_UNDERSTOOD]
    assert conversation_for().gathering_state == "idle"
    assert not Issue.objects.exists()


def test_off_topic_spanish_gets_the_sorry_in_spanish(home, tenant_says):
    [reply] = tenant_says("¿Quién ganó el partido de fútbol ayer?")
    assert reply.startswith("Lo siento, no te he entendido")


@pytest.fixture
def house_guide(home):
    from retrieval.services import document_ingest

    return document_ingest(
        organization=home,
        title="Flat 1 home guide",
        source_name="home-guide.md",
        content="# Heating\n\n## Repressurising the boiler\n\nIf the pressure gauge shows below 1 bar, open the "
        "silver filling loop under the boiler until the needle reaches 1.5 bar, then close it.\n\n"
        "# Keys\n\n## Spare keys\n\nSpare keys can be cut at the hardware shop on the corner; tell the office.",
        embed_now=True,
    )


def test_a_question_the_guide_answers_gets_the_passage(home, tenant_says, house_guide):
    tenant_says("hello")
    [reply] = tenant_says("how do I repressurise the boiler?")
    assert "filling loop" in reply
    turn = Turn.objects.latest("id")
    assert [c["name"] for c in turn.tool_calls] == ["search_documents", "respond"]


def test_a_gibberish_question_gets_no_passage_from_the_guide(home, tenant_says, house_guide):
    tenant_says("hello")
    [reply] = tenant_says("qwzx plokij vbnm?")
    assert reply == NOT_UNDERSTOOD
    assert "keys" not in reply.lower() and "filling loop" not in reply
    assert Turn.objects.latest("id").retrieval_hits  # the search did return passages; none fitted


def test_a_report_that_went_away_is_not_left_open(home, tenant_says):
    tenant_says("the kitchen tap is dripping")
    assert conversation_for().gathering_state in ("gathering_details", "awaiting_photo")
    [reply] = tenant_says("never mind, it's stopped dripping now")
    assert "sorted" in reply.lower() or "glad" in reply.lower()
    assert not Issue.objects.exists()
    assert Message.objects.filter(direction="outbound").count() == 2


def test_a_clear_first_message_goes_straight_to_the_photo_when_the_tool_takes_problem_and_place(home, tenant_says):
    from orchestration.tool_definitions import SCHEMAS

    [reply] = tenant_says("Buenos días, el grifo de la cocina gotea")
    turn = Turn.objects.latest("id")
    if {"problem", "location"} <= set(SCHEMAS["ask_for_photo"]["properties"]):
        assert turn.tool_calls[-1]["name"] == "ask_for_photo" and not turn.gating_rejections
        assert turn.tool_calls[-1]["input"]["location"] == "kitchen"
        assert conversation_for().gathering_state == "awaiting_photo"
    else:
        assert turn.tool_calls[-1]["name"] == "ask_for_details"
    assert reply.startswith(("Gracias", "Siento"))  # in Spanish
    if conversation_for().gathering_state == "awaiting_photo":
        tenant_says("no puedo hacer una foto")
        issue = Issue.objects.get()
        assert (issue.title, issue.category, issue.location) == ("Tap leaking in kitchen", "plumbing", "kitchen")
        assert issue.description == "Buenos días, el grifo de la cocina gotea"


def test_a_report_that_went_away_is_closed_when_the_engine_offers_close_report(home, tenant_says):
    from orchestration.tool_definitions import TOOL_NAMES

    tenant_says("the kitchen tap is dripping")
    tenant_says("ya funciona, gracias")
    turn = Turn.objects.latest("id")
    if "close_report" in TOOL_NAMES:
        assert turn.tool_calls[-1]["name"] == "close_report"
        assert conversation_for().gathering_state == "idle"
    else:
        assert turn.tool_calls[-1]["name"] == "respond"
    assert not Issue.objects.exists()
