"""``check_emergency`` and ``measure_emergencies`` as a landlord or developer runs them."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from config.expiring import expiring_clear_all
from emergencies.models import EmergencyRule, SafetyMessage
from properties.tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, no_color=True)
    return out.getvalue()


def test_a_hit_shows_category_rules_and_the_default_reply_without_an_organization():
    out = run("check_emergency", "I can SMELL GAAAS!!")
    assert out.startswith("EMERGENCY: gas")
    assert "'smell gas' (gas, en)" in out
    assert "reply (GB): If you smell gas" in out and "0800 111 999" in out


def test_no_emergency_shows_the_classifiers_score_country_and_sensitivity():
    out = run("check_emergency", "my gasket is leaking")
    assert out.startswith("no emergency (classifier 0.") and out.rstrip().endswith("; GB, standard)")


def test_json_output():
    result = json.loads(run("check_emergency", "Czuję gaz w kuchni", "--json"))
    assert result["emergency"] is True and result["category"] == "gas" and result["country"] == "GB"
    assert result["normalised"] == "czuje gaz w kuchni"
    assert {"rule_id", "phrase", "category", "language"} <= set(result["rules"][0])
    assert result["rules"][0]["language"] == "pl"
    assert "0800 111 999" in result["safety_reply"]


def test_json_output_for_a_miss():
    result = json.loads(run("check_emergency", "when is bin day?", "--json"))
    assert result["emergency"] is False and result["rules"] == [] and "safety_reply" not in result


@pytest.mark.parametrize(
    ("country", "expected", "not_expected"),
    [("GB", "999 (112 works too)", "911"), ("IE", "112 or 999", "911"), ("US", "call 911", "999")],
)
def test_country_chooses_that_countrys_safety_message(country, expected, not_expected):
    result = json.loads(run("check_emergency", "the kitchen is on fire", "--country", country.lower(), "--json"))
    assert result["country"] == country
    assert expected in result["safety_reply"] and not_expected not in result["safety_reply"]


def test_country_chooses_that_countrys_rules():
    text = "the furnace is out and we have a newborn"
    assert json.loads(run("check_emergency", text, "--json"))["rules"] == []
    us = json.loads(run("check_emergency", text, "--country", "US", "--json"))
    assert us["stage"] == "keyword" and us["category"] == "no_heat_vulnerable"


def test_org_uses_its_own_rules_its_country_and_its_own_safety_text():
    org = OrganizationFactory(slug="harbour", country="IE")
    EmergencyRule.objects.create(organization=org, phrase="lift stuck", category="security")
    SafetyMessage.objects.create(organization=org, country="IE", category="security", body="Ring our night line.")
    out = run("check_emergency", "the lift stuck again", "--org", "harbour")
    assert out.startswith("EMERGENCY: security") and "reply (IE): Ring our night line." in out
    # Its own text is for Ireland; asked about the US, the US default answers.
    out = run("check_emergency", "the lift stuck again", "--org", "harbour", "--country", "US")
    assert "reply (US): If you are in danger" in out and "911" in out
    # Another organization does not have the rule.
    assert json.loads(run("check_emergency", "the lift stuck again", "--json"))["rules"] == []


def test_unknown_org_and_bad_country_are_clear_errors():
    with pytest.raises(CommandError, match="no organization 'nobody'"):
        run("check_emergency", "gas leak", "--org", "nobody")
    with pytest.raises(CommandError, match="two-letter country code"):
        run("check_emergency", "gas leak", "--country", "England")


def test_measure_emergencies_reports_the_regression_set_by_kind_and_category():
    out = run("measure_emergencies")
    first = out.splitlines()[0]
    assert first.startswith("regression (standard): recall 69/69 (1.000)") and "false positives" in first
    assert "by category:" in out and "confusion (truth -> decided):" in out
    assert "missed:" not in out


def test_measure_emergencies_lists_a_miss_of_the_rules_alone(settings):
    settings.EMERGENCY_CLASSIFIER = "off"  # the rules decide alone
    report = json.loads(run("measure_emergencies", "--json"))
    assert report["recall"]["hit"] == report["recall"]["n"] >= 60 and report["misses"] == []
    EmergencyRule.objects.filter(organization=None, phrase="czujnik czadu").update(enabled=False)
    expiring_clear_all()  # the command runs as a process of its own, which reads the rules afresh
    report = json.loads(run("measure_emergencies", "--json"))
    assert report["misses"] == ["czujnik czadu piszczy"]
