import contextlib
import json

import pytest
from django.core.management import CommandError, call_command

from conversations.tests.factories import ConversationFactory, MessageFactory
from evals.models import EvalRun, JudgeVerdict
from orchestration.testing.anthropic_stub import tool_use_response


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


@pytest.mark.django_db
def test_live_run_asks_claude_and_reports_pass_k_tool_accuracy_and_cache_reads(
    anthropic_stub, settings, capsys, monkeypatch
):
    """--live through the real anthropic SDK (against the local stub): run 1
    chooses right, run 2 answers without asking, so pass^2 fails."""
    # pytest already gives this test a throwaway database.
    monkeypatch.setattr("evals.management.commands.run_golden.throwaway_database", contextlib.nullcontext)
    scenario = str(settings.BASE_DIR / "evals" / "scenarios" / "adr-boiler-not-working-asks-details.yaml")
    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "Is there an error code?"}, cache_read_tokens=1800),
        tool_use_response("respond", {"message": "Okay!"}, cache_read_tokens=1800),
    )
    with pytest.raises(CommandError, match="1 scenario"):
        call_command("run_golden", scenario, "--live", "--runs", "2", "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "live"
    assert report["pass_k"] == 0.0
    assert report["tool_choice_accuracy"] == 0.5
    [result] = report["results"]
    assert result["passed_runs"] == 1 and result["runs"] == 2
    assert report["tokens"]["cache_read"] == 3600 and report["tokens"]["input"] == 2400
    assert report["cache_read_share"] == pytest.approx(3600 / 6000)
    assert report["cost_per_conversation_usd"] > 0
    assert len(anthropic_stub.requests) == 2
    assert "My boiler is not working" in json.dumps(anthropic_stub.requests[0]["json"]["messages"])
