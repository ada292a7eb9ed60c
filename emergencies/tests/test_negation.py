"""A rule's words right after a negation ("no smell of gas now", "nu scoate
scântei") do not raise an alert by themselves: the classifier decides that
message alone. Without the classifier they still do."""

from __future__ import annotations

import pytest

from emergencies.detector import emergency_detect
from emergencies.matching import emergency_match
from emergencies.negation import clauses, denied

pytestmark = pytest.mark.django_db


def denied_phrases(text: str) -> list[str]:
    match = emergency_match(text, organization_id=None, country="GB")
    return sorted(hit.phrase for hit in match.hits if hit.rule_id in match.denied)


def found_phrases(text: str) -> list[str]:
    return sorted(hit.phrase for hit in emergency_match(text, organization_id=None, country="GB").hits)


@pytest.mark.parametrize(
    "text",
    [
        "no sparks now, the switch is just loose",
        "it is not sparking any more",
        "não há fumo nenhum, só o alarme a apitar",
        "no sale humo, solo huele un poco raro el horno",
        "there is no gas leak, I only have a question about the bill",
    ],
)
def test_a_hazard_named_only_as_absent_is_denied(text):
    assert found_phrases(text) and denied_phrases(text) == found_phrases(text)


@pytest.mark.parametrize(
    "text",
    [
        "the socket is sparking",
        "it doesn't stop sparking",  # "doesn't stop": the hazard goes on
        "no para de salir humo del enchufe",
        "I don't know if it's gas but it smells like rotten eggs",  # a doubt is not a denial
        "no heating and my baby is 2 weeks old",  # the absence is the hazard
        "I can't turn the gas off, it's hissing",
    ],
)
def test_a_hazard_that_is_there_is_not_denied(text):
    assert found_phrases(text) and denied_phrases(text) == []


def test_only_the_denied_clause_loses_its_hit():
    # "no smoke", but a burning smell in the next clause: the smell still counts.
    assert denied_phrases("there's no smoke, but the socket smells of burning plastic") == ["smoke"]
    # The same word once denied and once not: not denied.
    assert denied_phrases("no smoke in the hall but smoke in the kitchen") == []


def test_clauses_end_at_punctuation_and_but():
    assert clauses("No smoke. But the plug is hot, and it smells") == ["no smoke", "the plug is hot", "and it smels"]
    words = ["nu", "scoate", "scantei"]
    assert denied(words, 2) and not denied(["nie", "moge", "zakrecic", "gazu"], 3)


class _FixedScore:
    thresholds = {"standard": {"alert": 0.55, "veto": 0.4, "veto_phrase": 0.3}}

    def __init__(self, emergency):
        self.emergency = emergency

    def score(self, text):
        from emergencies.classifier import Score

        return Score(self.emergency, "electrical", 0.9, None, "fixed")


def test_a_denied_hit_leaves_the_decision_to_the_classifier(monkeypatch, home):
    text = "the socket by the bed stopped working, no sparks, it just does nothing"
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(0.45))
    quiet = emergency_detect(text, organization_id=home.pk, country="GB")
    assert not quiet and [hit.phrase for hit in quiet.vetoed] == ["sparks"]
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(0.8))
    assert emergency_detect(text, organization_id=home.pk, country="GB").source == "classifier"
    # Without the classifier the rules decide alone, the denied hit included.
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: None)
    assert emergency_detect(text, organization_id=home.pk, country="GB").source == "keyword"


def test_an_organizations_own_rule_is_never_denied(monkeypatch, home):
    from emergencies.models import EmergencyRule

    EmergencyRule.objects.create(organization=home, phrase="sparks", category="electrical", language="en")
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(0.1))
    detection = emergency_detect("no sparks now", organization_id=home.pk, country="GB")
    assert detection.source == "keyword" and [hit.own for hit in detection.hits] == [True]
