"""Replaying a turn without a ``model`` block: the input a model would pass,
derived from the conversation, and the next acceptable tool after a refusal."""

from pathlib import Path

import pytest

from evals import replay_inputs
from evals.replay_inputs import (
    ReplayView,
    address_in,
    category_of,
    home_named,
    location_in,
    problem_texts,
    replay_input,
    replay_script,
    title_of,
)
from evals.report import report_build, report_text
from evals.runner import scenario_run
from evals.scenarios import scenario_parse
from orchestration.tool_definitions import SCHEMAS, TOOL_NAMES, tool_input_errors

HOMES = [
    ("FLAT-1", "Flat 1, 12 Harbour Street, Leeds", "LS1 4AB"),
    ("HOUSE-7", "7 Orchard Lane, Headingley, Leeds", "LS6 3HN"),
]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("12 Harbour Street", "12 Harbour Street"),
        ("hi its flat 1, 12 harbour st LS1 4AB, my boiler is broken", "flat 1, 12 harbour st LS1 4AB"),
        ("I live at 7 orchard lane", "7 orchard lane"),
        ("ls14ab", "ls14ab"),
        ("12 Harbor Stret, Leeds LS1 4AB please", "12 Harbor Stret, Leeds LS1 4AB"),
        ("the house on Orchard Lane", "Orchard Lane"),
        ("my boiler is broken since 3 days", ""),
    ],
)
def test_the_address_is_the_tenants_words_without_the_rest(text, address):
    assert address_in(text) == address


def test_find_property_takes_the_latest_message_with_an_address():
    view = ReplayView(latest="is that ok?", earlier=["my boiler is broken", "7 Orchard Lane LS6 3HN"])
    assert replay_input("find_property", view) == {"address": "7 Orchard Lane LS6 3HN"}
    assert replay_input("find_property", ReplayView(latest="hello"))["address"] == "hello"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("the house on Orchard Lane", "HOUSE-7"),
        ("harbour street", "FLAT-1"),
        ("LS6 3HN", "HOUSE-7"),
        ("the second one", "HOUSE-7"),
        ("Leeds", ""),  # both homes are in Leeds: not a choice
    ],
)
def test_a_tenant_with_several_homes_names_one(text, code):
    assert home_named(text, HOMES) == code


def test_confirm_property_uses_the_candidate_and_hears_no():
    view = ReplayView(identity="identified", candidate_code="FLAT-1", latest="yes that's it")
    assert replay_input("confirm_property", view) == {"confirmed": True, "property_code": "FLAT-1"}
    view.latest = "no, that's not my flat"
    assert replay_input("confirm_property", view) == {"confirmed": False}
    several = ReplayView(identity="identified", homes=HOMES, latest="the Orchard Lane one")
    assert replay_input("confirm_property", several) == {"confirmed": True, "property_code": "HOUSE-7"}


def test_the_issue_is_written_from_the_reports_messages():
    view = ReplayView(
        identity="confirmed",
        gathering="awaiting_photo",
        report=["Hi", "The kitchen tap is leaking", "the cold one, since monday", "no sorry can't take a photo"],
        latest="no sorry can't take a photo",
    )
    assert problem_texts(view) == ["The kitchen tap is leaking", "the cold one, since monday"]
    issue = replay_input("create_issue", view)
    assert issue["title"] == "Kitchen tap leaking"
    assert issue["description"] == "The kitchen tap is leaking\nthe cold one, since monday"
    assert (issue["location"], issue["category"], issue["urgency"]) == ("kitchen", "plumbing", "routine")
    assert issue["photo"] == "declined"
    assert tool_input_errors("create_issue", issue) == []


def test_the_photo_field_follows_what_happened():
    base = {"identity": "confirmed", "report": ["Water drips from the bathroom ceiling"], "latest": ""}
    assert replay_input("create_issue", ReplayView(**base, photo_received=True))["photo"] == "provided"
    emergency = replay_input("create_issue", ReplayView(**base, emergency=True))
    assert (emergency["photo"], emergency["urgency"]) == ("not_needed", "emergency")
    # "no" to something other than a photo request is not a refusal of a photo
    said_no = ReplayView(**{**base, "latest": "no"}, emergency=True, gathering="gathering_details")
    assert replay_input("create_issue", said_no)["photo"] == "not_needed"


@pytest.mark.parametrize(
    ("text", "location", "category"),
    [
        ("water coming through the bathroom ceiling", "bathroom ceiling", "plumbing"),
        ("there's black mould on the wall in the bedroom", "bedroom wall", "damp_mould"),
        ("I can smell gas in the kitchen", "kitchen", "gas"),
        ("my boiler is not working", "", "heating"),
        ("the front door lock is jammed", "front door", "security"),
        # a room's name is not a fixture: "bathroom" does not make this plumbing
        ("the extractor fan in the bathroom has stopped", "bathroom", "electrical"),
    ],
)
def test_location_and_category_come_from_the_words(text, location, category):
    assert location_in(text) == location
    assert category_of(text) == category


def test_a_title_is_short_and_names_the_problem():
    assert title_of("My boiler is not working") == "Boiler not working"
    assert title_of("the fan in the bathroom is still dead, any news?") == "Bathroom fan not working"
    assert title_of("bathroom ceiling is leaking") == "Bathroom ceiling leaking"
    assert title_of("there's mould on the wall in the bedroom") == "Damp and mould in bedroom wall"
    long = "something odd is going on with the thing in the corner that hums all night and keeps me awake"
    assert len(title_of(long)) <= 60 and long.startswith(title_of(long).lower())


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_every_derived_input_passes_the_schema(tool):
    for view in (
        ReplayView(),
        ReplayView(identity="confirmed", report=["My boiler is broken"], latest="My boiler is broken"),
        ReplayView(identity="confirmed", report=[""], latest="", photo_received=True),
    ):
        assert tool_input_errors(tool, replay_input(tool, view)) == [], tool


def test_optional_fields_are_derived_only_when_the_schema_has_them(monkeypatch):
    view = ReplayView(identity="confirmed", report=["The kitchen tap is leaking"], latest="The kitchen tap is leaking")
    assert set(replay_input("ask_for_photo", view)) == set(SCHEMAS["ask_for_photo"]["properties"])
    schemas = {
        **SCHEMAS,
        "ask_for_photo": {
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "problem": {"type": "string"},
                "location": {"type": "string"},
            },
            "required": ["message"],
        },
    }
    monkeypatch.setattr(replay_inputs, "SCHEMAS", schemas)
    photo = replay_input("ask_for_photo", view)
    assert (photo["problem"], photo["location"]) == ("Kitchen tap leaking", "kitchen")
    # No room named: no location is made up (gating decides on what the call carries).
    bare = ReplayView(identity="confirmed", report=["My boiler is broken"], latest="My boiler is broken")
    assert "location" not in replay_input("ask_for_photo", bare)


def test_the_script_has_one_answer_per_acceptable_tool_in_order():
    view = ReplayView(identity="confirmed", report=["The kitchen tap is leaking"], latest="The kitchen tap is leaking")
    script = replay_script(["ask_for_photo", "fallback", "ask_for_details"], view)
    assert [c["tool"] for c in script] == ["ask_for_photo", "ask_for_details"]
    assert replay_script(["fallback"], view) == [{"error": "unavailable"}]
    assert replay_script(["flag_off"], view) == []
    assert [c["tool"] for c in replay_script([], view)] == ["respond"]


def test_a_home_just_named_is_confirmed_before_the_report_goes_on():
    named = ReplayView(identity="identified", homes=HOMES, latest="the Orchard Lane one", report=["heating is off"])
    script = replay_script(["ask_for_details"], named)
    assert [c["tool"] for c in script] == ["confirm_property", "ask_for_details"]
    assert script[0]["input"] == {"confirmed": True, "property_code": "HOUSE-7"}
    unsure = ReplayView(identity="identified", homes=HOMES, latest="the heating is off")
    assert [c["tool"] for c in replay_script(["ask_for_details"], unsure)] == ["ask_for_details"]
    settled = ReplayView(identity="confirmed", homes=HOMES[:1], latest="flat 1, the heating is off")
    assert [c["tool"] for c in replay_script(["ask_for_details"], settled)] == ["ask_for_details"]


def test_a_question_is_looked_up_and_nothing_is_queued_behind_the_lookup():
    view = ReplayView(identity="confirmed", latest="where is the stopcock?", documents=True)
    assert replay_script(["respond"], view) == [
        {"tool": "search_documents", "input": {"query": "where is the stopcock?"}}
    ]
    code = ReplayView(identity="confirmed", latest="boiler says F22", documents=True)
    assert replay_script(["respond"], code) == [{"tool": "search_documents", "input": {"query": "boiler says F22"}}]
    # Nothing to look up in: the answer is the reply itself.
    assert [c["tool"] for c in replay_script(["respond"], ReplayView(identity="confirmed", latest="where?"))] == [
        "respond"
    ]


def parse(turns, **extra):
    data = {"id": "derived", "tenant": {"phone_known": True, "properties": 1}, "turns": turns, **extra}
    return scenario_parse(data, Path("derived.yaml"))


@pytest.mark.django_db
def test_an_unknown_number_is_identified_and_reports_without_any_model_block():
    scenario = parse(
        [
            {"tenant": "hi my kitchen tap is leaking", "expect": {"tools": ["respond"]}},
            {
                "tenant": "it's flat 1, 12 harbour street, LS1 4AB",
                "expect": {"tools": ["find_property"], "identity_status_after": "identified"},
            },
            # After confirm_property the turn goes on with the report: the next acceptable tools follow it.
            {
                "tenant": "yes",
                "expect": {"tools": ["confirm_property", "ask_for_photo", "ask_for_details"]},
            },
            {
                "tenant": "it drips from the spout all the time",
                "expect": {"tools": ["ask_for_photo", "ask_for_details"]},
            },
            {"tenant": "", "media": ["image/jpeg"], "expect": {"tools": ["create_issue"]}},
        ],
        tenant={"phone_known": False},
        end={"issues_created": 1},
    )
    result = scenario_run(scenario)
    assert [t.trace["script"][0]["input"] for t in result.turns[1:3]] == [
        {"address": "flat 1, 12 harbour street, LS1 4AB"},
        {"confirmed": True, "property_code": "FLAT-1"},
    ]
    assert result.passed, result.failures
    from issues.models import Issue

    issue = Issue.objects.get(title="Kitchen tap leaking")
    assert (issue.location, issue.category, issue.photo) == ("kitchen", "plumbing", "provided")
    assert "it drips from the spout all the time" in issue.description


@pytest.mark.django_db
def test_a_refused_tool_is_followed_by_the_next_and_counted():
    scenario = parse(
        [
            # create_issue is refused at once (no details yet); ask_for_details is what a model does next.
            {"tenant": "My boiler is not working", "expect": {"tools": ["create_issue", "ask_for_details"]}},
        ]
    )
    result = scenario_run(scenario)
    assert result.passed, result.failures
    turn = result.turns[0]
    assert turn.chosen == ["ask_for_details"]
    assert [r["tool"] for r in turn.refused] == ["create_issue"]
    assert turn.refused[0]["rejection"]  # gating's reason, as the model read it
    report = report_build([scenario], {scenario.id: [result]}, live=False)
    assert report["expected_calls_refused"] == 1
    assert report["results"][0]["refused"][0]["turn"] == 1
    assert "turns where gating refused an expected tool 1" in report_text(report)


@pytest.mark.django_db
def test_a_refusal_the_scenario_scripts_on_purpose_is_not_counted():
    scenario = parse(
        [
            {
                "tenant": "My boiler is not working",
                "model": [
                    {"tool": "ask_for_photo", "input": {"message": "Photo?"}},
                    {"tool": "ask_for_details", "input": {"question": "Any error code?"}},
                ],
                "expect": {"tools": ["ask_for_details"]},
            }
        ]
    )
    result = scenario_run(scenario)
    assert result.passed and result.turns[0].refused == []
