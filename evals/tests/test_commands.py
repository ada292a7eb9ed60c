import contextlib
import json

import pytest
import yaml
from django.core.management import CommandError, call_command

from conversations.tests.factories import ConversationFactory, MessageFactory
from emergencies.models import EmergencyAlert
from evals.models import EvalRun, JudgeVerdict
from evals.scenarios import scenarios_load
from issues.models import Issue
from orchestration.testing.anthropic_stub import error_reply, tool_use_response


def test_live_golden_run_needs_a_key(settings):
    settings.ANTHROPIC_API_KEY = ""
    with pytest.raises(CommandError, match="needs ANTHROPIC_API_KEY"):
        call_command("run_golden", "--live")


@pytest.mark.django_db
def test_judge_needs_claude(settings):
    settings.LLM_BACKEND = "scripted"
    with pytest.raises(CommandError, match="needs Claude"):
        call_command("judge_conversations")


@pytest.mark.django_db
def test_judge_stores_a_verdict_per_question_and_prints_failure_rates(anthropic_stub, capsys):
    from evals.judge import QUESTIONS

    conversation = ConversationFactory()
    MessageFactory(conversation=conversation, body="No hot water since yesterday")
    MessageFactory(conversation=conversation, direction="outbound", author="assistant", body="Sorry! Which tap?")
    verdicts = {key: {"reasoning": "fine", "failed": False} for key in QUESTIONS}
    verdicts["rude_or_robotic"] = {"reasoning": "Curt reply.", "failed": True}
    anthropic_stub.queue(tool_use_response("verdicts", verdicts))
    call_command("judge_conversations", "--sample", "5", "--json")
    summary = json.loads(capsys.readouterr().out)
    assert summary["conversations"] == 1
    assert summary["failure_rate"]["rude_or_robotic"] == 1.0 and summary["failure_rate"]["wrong_language"] == 0.0
    assert JudgeVerdict.objects.count() == len(QUESTIONS)
    assert EvalRun.objects.get().kind == "judge"
    request = anthropic_stub.requests[0]["json"]
    assert request["tool_choice"] == {"type": "tool", "name": "verdicts"}
    assert "No hot water since yesterday" in request["messages"][0]["content"]


def scenario_path(settings, name: str) -> str:
    return str(settings.BASE_DIR / "evals" / "scenarios" / f"{name}.yaml")


# A test-local scenario: "fire on the news" with the rules alone (the tests set
# EMERGENCY_CLASSIFIER=off), so the keyword alert is raised and the model check
# must dismiss it. The shared false-positive-fire-on-the-news scenario describes
# the product with the classifier on, which stands the bare 'fire' rule down.
FIRE = "fire-on-the-news-rules-alone"


def fire_path(settings) -> str:
    return str(settings.BASE_DIR / "evals" / "tests" / "data" / f"{FIRE}.yaml")


def verdict(is_emergency: bool, category: str) -> dict:
    reasoning = "A real fire at home." if is_emergency else "News, not the tenant's home."
    return tool_use_response(
        "emergency_verdict",
        {"reasoning": reasoning, "is_emergency": is_emergency, "category": category},
        model="claude-haiku-4-5",
    )


def emergency_issue(category: str) -> dict:
    return tool_use_response(
        "create_issue",
        {
            "title": "Emergency",
            "description": "Reported as an emergency",
            "category": category,
            "urgency": "emergency",
            "location": "kitchen",
            "photo": "not_needed",
            "message": "I've raised this as an emergency with your landlord.",
        },
    )


@pytest.fixture
def in_test_database(monkeypatch):
    """run_golden makes a throwaway database; pytest already gives the test one."""
    monkeypatch.setattr("evals.management.commands.run_golden.throwaway_database", contextlib.nullcontext)


@pytest.mark.django_db
def test_live_run_asks_claude_and_reports_every_figure_per_scenario_and_overall(
    anthropic_stub, settings, capsys, in_test_database
):
    """--live through the real anthropic SDK (against the local stub), two runs
    of three scenarios, each scenario right once and wrong once in its own way.
    The rules decide alone, so both the fire and the gas message raise a keyword
    alert, each gets its one code-filed issue at the start of the turn, and the
    model check (one stub answer per alert, after the turn) runs on every one."""
    settings.EMERGENCY_CLASSIFIER = "off"
    names = ["adr-boiler-not-working-asks-details", FIRE, "emergency-gas"]
    paths = [scenario_path(settings, names[0]), fire_path(settings), scenario_path(settings, names[2])]
    anthropic_stub.queue(
        # The boiler: asks (right), then answers without asking (wrong tool). No alert, no check.
        tool_use_response("ask_for_details", {"question": "Is there an error code?"}, cache_read_tokens=1800),
        tool_use_response("respond", {"message": "Okay!"}, cache_read_tokens=1800),
        # Fire on the news: answers and the check dismisses (right), then create_issue (which only adds
        # to the code's issue) and the check confirms.
        tool_use_response("respond", {"message": "Glad you're fine."}),
        verdict(False, "fire_smoke"),
        emergency_issue("other"),
        verdict(True, "fire_smoke"),
        # Gas: create_issue (right), then only words; the check confirms both times.
        emergency_issue("gas"),
        verdict(True, "gas"),
        tool_use_response("respond", {"message": "Please leave the house."}),
        verdict(True, "gas"),
    )
    with pytest.raises(CommandError, match="3 scenario"):
        call_command("run_golden", *paths, "--live", "--runs", "2", "--json")
    report = json.loads(capsys.readouterr().out)
    # 6 turns (one model call each: none of them confirms the property mid-turn) + 4 model checks.
    assert len(anthropic_stub.requests) == 10
    assert "My boiler is not working" in json.dumps(anthropic_stub.requests[0]["json"]["messages"])
    by_id = {r["id"]: r for r in report["results"]}
    boiler, fire, gas = (by_id[n] for n in names)
    for s in (boiler, fire, gas):
        assert (s["runs"], s["passed_runs"], s["pass_all"], s["pass_k"]) == (2, 1, False, 0.0)
        assert s["tool_choice_accuracy"] == 0.5
        assert s["turn_latency_ms"]["p50"] is not None and s["turn_latency_ms"]["p95"] is not None
        assert s["cost_per_conversation_usd"] > 0
    # Only the turns' model calls count (the stub's 1200 in, 60 out each), not the checks'.
    assert boiler["tokens"] == {"input": 2400, "output": 120, "cache_read": 3600, "cache_write": 0}
    assert boiler["cache_read_share"] == pytest.approx(3600 / 6000)
    assert fire["cache_read_share"] == 0.0
    # Issue creations count what the model chose, not the issue the code filed for the alert:
    # the fire's create_issue is wrong (the turn must not call it) although it made no second
    # issue, and the gas run that only answered missed the create_issue the turn expects.
    assert [s["wrong_issue_creations"] for s in (boiler, fire, gas)] == [0, 1, 0]
    assert [s["missed_issue_creations"] for s in (boiler, fire, gas)] == [0, 0, 1]
    # The confirmed fire on the news is a false positive (the dismissed one is not: the check is what
    # decides it in live mode); every gas alert was confirmed: no false negative.
    assert (fire["emergency_false_positives"], fire["emergency_false_negatives"]) == (1, 0)
    assert (gas["emergency_false_positives"], gas["emergency_false_negatives"]) == (0, 0)
    assert fire["failures"] == [
        "turn 1: expected one of ['respond'], the model chose create_issue (calls: ['create_issue'])",
        "turn 1: chose ['create_issue'], which this turn must not",
        "turn 1: the model check of the alert ended ['confirmed'], expected dismissed",
    ]  # and no "end:" failure: the model's create_issue added to the code's one issue
    assert gas["failures"] == [
        "turn 1: expected one of ['create_issue'], the model chose respond (calls: ['respond'])"
    ]  # its one issue was filed by code, so the end count and the state still hold
    # Each fire and gas run filed exactly one issue; the dismissed fire's stays, as a normal report.
    fire_issues = Issue.objects.filter(category="safety", conversation__isnull=False)
    assert sorted(fire_issues.values_list("urgency", flat=True)) == ["emergency", "urgent"]
    assert Issue.objects.filter(category="gas", urgency="emergency").count() == 2
    assert Issue.objects.count() == 4
    # Overall is the sum of the scenarios, computed the same way.
    assert report["mode"] == "live"
    assert (report["scenarios"], report["passed"], report["pass_k"]) == (3, 0, 0.0)
    assert (report["runs"], report["passed_runs"]) == (6, 3)
    assert report["tool_choice_accuracy"] == 0.5
    assert (report["wrong_issue_creations"], report["missed_issue_creations"]) == (1, 1)
    assert (report["emergency_false_positives"], report["emergency_false_negatives"]) == (1, 0)
    assert report["tokens"]["cache_read"] == 3600 and report["tokens"]["input"] == 6 * 1200
    assert report["cache_read_share"] == pytest.approx(3600 / (7200 + 3600))
    assert report["cost_per_conversation_usd"] == pytest.approx(
        sum(s["cost_per_conversation_usd"] for s in (boiler, fire, gas)) / 3
    )


@pytest.mark.django_db
def test_a_failed_model_check_is_recorded_and_the_live_run_goes_on(anthropic_stub, settings, capsys, in_test_database):
    settings.EMERGENCY_CLASSIFIER = "off"  # the rules alone: the fire on the news raises a keyword alert
    anthropic_stub.queue(
        tool_use_response("respond", {"message": "Glad you're fine."}),
        error_reply(400, "invalid_request_error", "the check's request was refused"),
        tool_use_response("ask_for_details", {"question": "Is there an error code?"}),
    )
    trace_dir = settings.MEDIA_ROOT / "traces"
    with pytest.raises(CommandError, match="1 scenario"):
        call_command(
            "run_golden",
            fire_path(settings),
            scenario_path(settings, "adr-boiler-not-working-asks-details"),
            "--live",
            "--json",
            "--trace-dir",
            trace_dir,
        )
    report = json.loads(capsys.readouterr().out)
    assert len(anthropic_stub.requests) == 3  # the boiler's turn still asked Claude after the refusal
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["adr-boiler-not-working-asks-details"]["pass_all"]  # the run carried on
    fire = by_id[FIRE]
    assert fire["failures"] == ["turn 1: the model check of the alert ended ['validation_failed'], expected dismissed"]
    assert fire["emergency_false_positives"] == 1  # fail safe: it stayed an emergency
    trace = json.loads((trace_dir / f"{FIRE}.run1.json").read_text())
    [alert] = trace["turns"][0]["trace"]["emergency"]
    assert alert["source"] == "keyword" and alert["status"] == "validation_failed"
    assert alert["validation_error"].startswith("validation failed:") and "refused" in alert["validation_error"]
    stored = EmergencyAlert.objects.get(category="fire_smoke")
    assert stored.status == "validation_failed"
    # Its code-filed issue is not turned back into a normal report: only a dismissal does that.
    assert stored.issue is not None and stored.issue.urgency == "emergency"


@pytest.mark.django_db
def test_filter_runs_only_tagged_scenarios_and_trace_dir_writes_each_ones_trace(settings, capsys, in_test_database):
    trace_dir = settings.MEDIA_ROOT / "traces"
    call_command("run_golden", "--filter", "false-positive", "--json", "--trace-dir", trace_dir)
    report = json.loads(capsys.readouterr().out)
    tagged = {s.id for s in scenarios_load() if "false-positive" in s.tags}
    assert len(tagged) >= 5 and len(tagged) < len(scenarios_load())
    assert {r["id"] for r in report["results"]} == tagged
    assert report["mode"] == "replay" and report["passed"] == len(tagged)
    assert {p.name for p in trace_dir.iterdir()} == {f"{i}.run1.json" for i in tagged}
    trace = json.loads((trace_dir / "false-positive-fire-on-the-news.run1.json").read_text())
    assert trace["id"] == "false-positive-fire-on-the-news" and trace["passed"] is True
    turn = trace["turns"][0]["trace"]
    assert turn["tenant"].startswith("I read about a fire on the news")
    assert turn["identity"] == ["unidentified", "confirmed"] and turn["gathering"][0] == "idle"
    assert "respond" in turn["tools_offered"] and [c["name"] for c in turn["tool_calls"]] == ["respond"]
    assert turn["gating_rejections"] == 0 and turn["retrieval_hits"] == []
    assert turn["emergency"] == []  # the bare word 'fire' hit a rule; the classifier stood it down
    assert turn["model"].startswith("scripted") and turn["outcome"]
    assert set(turn["latency_ms"]) == {"total", "model", "retrieval"} and set(turn["tokens"]) >= {"input", "cache_read"}
    assert turn["instant_replies"] == [] and turn["outbound"] == [
        "That does sound scary, glad everything is fine at yours. Just message us if anything comes up."
    ]


@pytest.mark.django_db
def test_the_table_lists_failures_first_with_what_was_expected_and_what_happened(tmp_path, capsys, in_test_database):
    turn = {"tenant": "My boiler is not working", "model": {"tool": "ask_for_details", "input": {"question": "Code?"}}}
    scenarios = {
        "a-passes": {**turn, "expect": {"tools": ["ask_for_details"]}},
        "b-fails": {**turn, "expect": {"tools": ["create_issue"], "gathering_state_after": "issue_created"}},
    }
    for name, spec in scenarios.items():
        data = {"id": name, "title": f"{name} title", "tenant": {"phone_known": True}, "turns": [spec]}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(CommandError, match="1 scenario"):
        call_command("run_golden", str(tmp_path))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "FAIL b-fails (0/1 runs passed): b-fails title"
    assert lines[1].strip() == (
        "- turn 1: expected one of ['create_issue'], the model chose ask_for_details (calls: ['ask_for_details'])"
    )
    assert lines[2].strip() == "- turn 1: gathering_state is gathering_details, expected issue_created"
    assert lines[3].startswith("ok   a-passes (1 run")
    summary = "\n".join(lines[4:])
    assert "replay: 1/2 scenarios pass in every run (pass^k 0.50, 1/2 runs)" in summary
    assert "tool choice 50% of 2 turn(s)" in summary
