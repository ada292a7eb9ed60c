from pathlib import Path

import pytest
import yaml

from evals.runner import scenario_run
from evals.scenarios import ScenarioError, scenario_parse, scenarios_load

GOOD = {
    "id": "x",
    "tenant": {"phone_known": True, "properties": 1},
    "turns": [{"tenant": "hi", "expect": {"tools": ["respond"]}}],
}


def parse(**changes):
    return scenario_parse({**GOOD, **changes}, Path("x.yaml"))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"turns": []}, "x.yaml.turns: a non-empty list"),
        ({"tenant": {"properties": 3}}, "tenant.properties: 0, 1 or 2"),
        ({"turns": [{"tenant": "hi", "expect": {"tools": ["make_tea"]}}]}, "unknown tool(s) make_tea"),
        ({"turns": [{"tenant": "hi", "after": "soon"}]}, "'after' must look like 30s, 10m, 2h or 3d"),
        ({"turns": [{"tenant": "hi", "expect": {"gathering_state_after": "done"}}]}, "gathering_state_after: one of"),
        ({"turns": [{"tenant": "hi", "model": {"tool": "respond", "inpt": {}}}]}, "unknown field(s) inpt"),
        ({"colour": "blue"}, "unknown field(s) colour"),
        ({"turns": [{"body": "hi"}]}, "turns[0]: a mapping with at least 'tenant'"),
        ({"turns": [{"tenant": "", "photos": ["nowhere.jpg"]}]}, "photos: no such file in"),
        ({"turns": [{"tenant": "", "voice": "hi", "voice_failed": True}]}, "either transcribed (voice) or not"),
        ({"turns": [{"tenant": "", "twilio": ["Latitude"]}]}, "twilio: a mapping of Twilio field names"),
        ({"tags": "emergency"}, "x.yaml.tags: a list of strings"),
        ({"turns": [{"tenant": "hi", "expect": {"reply_contains": "gas"}}]}, "reply_contains: a list of strings"),
        ({"turns": [{"tenant": "hi", "expect": {"notes": "anything"}}]}, "turns[0]: no expectation and no 'end'"),
    ],
)
def test_loader_says_which_file_and_field_is_wrong(changes, message):
    with pytest.raises(ScenarioError) as error:
        parse(**changes)
    assert message in str(error.value)


def test_missing_required_field():
    with pytest.raises(ScenarioError, match="'turns' is required"):
        scenario_parse({"id": "x", "tenant": {}}, Path("x.yaml"))


def test_duplicate_ids_are_refused(tmp_path):
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(yaml.safe_dump(GOOD))
    with pytest.raises(ScenarioError, match=r"also used by a\.yaml"):
        scenarios_load([tmp_path])


def test_after_parses_durations():
    turn = parse(turns=[{"tenant": "hi", "after": "3d", "expect": {"tools": ["respond"]}}]).turns[0]
    assert turn.after.days == 3


@pytest.mark.django_db
def test_a_wrong_expectation_fails_with_what_happened():
    scenario = parse(
        turns=[
            {
                "tenant": "My boiler is not working",
                "model": {"tool": "ask_for_details", "input": {"question": "Any error code?"}},
                "expect": {"tools": ["create_issue"], "gathering_state_after": "issue_created"},
            }
        ],
        end={"issues_created": 1},
    )
    result = scenario_run(scenario)
    assert not result.passed
    assert "expected one of ['create_issue'], the model chose ask_for_details" in result.failures[0]
    assert "gathering_state is gathering_details, expected issue_created" in result.failures[1]
    assert "end: 0 issue(s) created, expected 1" in result.failures[2]
    trace = result.turns[0].trace
    assert trace["identity"] == ["unidentified", "confirmed"] and trace["outbound"] == ["Any error code?"]


@pytest.mark.django_db
def test_a_voice_note_reaches_the_turn_as_its_transcript_and_a_pin_as_a_pin(settings):
    settings.EMERGENCY_CLASSIFIER = "off"  # this tests the scenario runner, not the detector
    scenario = parse(
        turns=[
            {
                "tenant": "",
                "voice": "the kitchen tap is dripping all day",
                "model": {
                    "tool": "ask_for_photo",
                    "input": {"message": "A photo?", "problem": "tap dripping all day", "location": "kitchen"},
                },
                "expect": {"tools": ["ask_for_photo"]},
            },
            {
                "tenant": "",
                "twilio": {"MessageType": "location", "Latitude": "53.79598", "Longitude": "-1.54704"},
                "model": {"tool": "respond", "input": {"message": "Thanks."}},
                "expect": {"tools": ["respond"]},
            },
        ]
    )
    result = scenario_run(scenario)
    assert result.passed, result.failures
    from conversations.models import Message

    voice, pin = Message.objects.filter(direction="inbound").order_by("id")
    assert voice.media.get().transcript == "the kitchen tap is dripping all day" and voice.kind == "audio"
    assert pin.kind == "location" and str(pin.latitude) == "53.795980"


def test_a_verdict_expected_live_fails_when_no_model_check_decided():
    from emergencies.models import EmergencyAlert
    from evals.runner import _verdict_check

    def alert(source, status):
        return EmergencyAlert(source=source, status=status, category="gas")

    assert _verdict_check("dismissed", [alert("classifier", "dismissed")]) == []
    assert _verdict_check("dismissed", []) == []  # no false alarm: nothing to dismiss
    assert _verdict_check("confirmed", []) == ["no alert for the model check to confirm"]
    assert "never checked" in _verdict_check("dismissed", [alert("classifier", "pending")])[0]
    assert _verdict_check("dismissed", [alert("keyword", "confirmed")]) == [
        "the model check of the alert ended ['confirmed'], expected dismissed"
    ]
    assert _verdict_check("confirmed", [alert("model", "pending"), alert("keyword", "confirmed")]) == []
    assert _verdict_check("confirmed", [alert("model", "pending")]) == []  # the turn's model raised it itself


def test_the_report_counts_a_turn_right_as_the_pass_check_does():
    from evals.report import Tally
    from evals.runner import TurnResult

    trace = {"emergency": [], "latency_ms": {}, "tokens": {}}
    expect = parse(turns=[{"tenant": "hi", "expect": {"tools": ["respond", "create_issue"]}}]).turns[0].expect
    tally = Tally()
    tally._turn_add(TurnResult(0, "hi", ["respond"], "respond", [], trace), expect)
    tally._turn_add(TurnResult(1, "hi", ["escalate"], "escalate", [], trace), expect)
    assert (tally.tool_turns, tally.tool_correct, tally.missed_issue_creations) == (2, 1, 1)
    confirming = parse(turns=[{"tenant": "hi", "expect": {"tools": ["confirm_property"]}}]).turns[0].expect
    tally = Tally()
    tally._turn_add(TurnResult(0, "hi", ["confirm_property", "respond"], "respond", [], trace), confirming)
    assert tally.tool_correct == 1
