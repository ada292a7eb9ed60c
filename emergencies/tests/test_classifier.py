"""The classifier stage of emergency detection: its artefact, the policy that
combines it with the keyword rules, and what happens when it cannot load."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command

from emergencies.classifier import (
    EMBEDDING_MODEL,
    Classifier,
    classifier_get,
    classifier_load,
    classifier_reset,
    e5_embedder,
)
from emergencies.detector import emergency_detect
from emergencies.models import EmergencyAlert, EmergencyRule
from emergencies.testing import safety_texts, screen_waiting
from emergencies.training import classifier_train, rows_read, rows_with_addresses
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

CORPUS = Path(settings.BASE_DIR) / "evals" / "emergencies"


@pytest.fixture
def no_classifier(settings, tmp_path):
    settings.EMERGENCY_CLASSIFIER_PATH = str(tmp_path / "missing.json")
    classifier_reset()
    yield
    classifier_reset()


def test_retraining_from_the_train_split_reproduces_the_artefact():
    """Training from the train split gives the shipped classifier again. The
    artefact keeps each training row's E5 vector (float16): training runs on
    those (seconds), and a sample of rows embedded afresh shows they are E5's
    vectors of those texts (embedding all 5 000 rows takes minutes here)."""
    path = Path(settings.EMERGENCY_CLASSIFIER_PATH)
    shipped = json.loads(path.read_text())
    paths = [CORPUS / name for name in shipped["trained_on"]]
    assert [p.name for p in paths] == ["train.jsonl", "messages.jsonl"]
    texts = [row["text"] for row in rows_with_addresses(rows_read(paths))]
    with np.load(path.with_suffix(".npz")) as arrays:
        stored = arrays["vectors"].astype(np.float32)
    assert len(texts) == len(stored) == shipped["rows"], "the artefact is stale: run train_emergency_classifier"
    sample = random.Random(0).sample(range(len(texts)), 30)
    fresh = e5_embedder()([texts[i] for i in sample])
    assert np.abs(fresh - stored[sample]).max() < 0.005  # float16 keeps about three digits

    by_text = dict(zip(texts, stored, strict=True))

    def embed(batch: list[str]) -> np.ndarray:
        return np.stack([by_text[text] for text in batch])

    retrained = classifier_train(paths=paths, embed=embed, embedding_model=EMBEDDING_MODEL)
    assert retrained["trained_on"] == shipped["trained_on"], "the artefact is stale: run train_emergency_classifier"
    assert retrained["thresholds"] == shipped["thresholds"]
    assert retrained["figures"].keys() == shipped["figures"].keys()
    for name, value in shipped["figures"].items():
        assert retrained["figures"][name] == pytest.approx(value, abs=0.005), name
    # The heads agree message by message, not only in the figures.
    scored = [texts[i] for i in random.Random(1).sample(range(len(texts)), 400)]
    again = Classifier(retrained, embed, arrays=retrained.pop("_arrays"))
    before = [score.emergency for score in classifier_load(path, embed).score_many(scored)]
    after = [score.emergency for score in again.score_many(scored)]
    assert np.abs(np.array(before) - np.array(after)).max() < 0.002  # 0.0001 here; C doubled moves it 0.02


def test_the_character_reading_weighs_a_message_as_training_did():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from emergencies.classifier import _Characters, character_ngrams

    seen = ["gas smell in the hall", "czuję gaz w kuchni", "GAAAS in the hall!!", "tap dripping", "huele a gas"]
    vectorizer = TfidfVectorizer(analyzer=character_ngrams, sublinear_tf=True, dtype=np.float32).fit(seen)
    reading = _Characters(vectorizer.get_feature_names_out(), vectorizer.idf_, heads={})
    # repeated pieces, accents and case folded, pieces training never saw, and nothing it knows
    for text in ["gas gas GAS in the hall", "czuje gaz", "hall light dripping again", "zzz qqq"]:
        expected = vectorizer.transform([text]).toarray()[0]
        columns, weights = reading._weights(text)
        actual = np.zeros_like(expected)
        actual[columns] = weights
        assert actual == pytest.approx(expected, abs=1e-6), text


def test_an_artefact_of_another_format_pieces_or_arrays_is_refused(tmp_path):
    from emergencies.classifier import classifier_load

    shipped = Path(settings.EMERGENCY_CLASSIFIER_PATH)
    artefact = json.loads(shipped.read_text())
    (tmp_path / "old.json").write_text(json.dumps({**artefact, "format": 1}))
    (tmp_path / "old.npz").write_bytes(shipped.with_suffix(".npz").read_bytes())
    with pytest.raises(ValueError, match="format 1, this code reads 2: retrain it"):
        classifier_load(tmp_path / "old.json", embed=lambda texts: np.zeros((len(texts), 384)))

    (tmp_path / "pieces.json").write_text(
        json.dumps({**artefact, "characters": {**artefact["characters"], "ngram_sizes": [2, 3]}})
    )
    (tmp_path / "pieces.npz").write_bytes(shipped.with_suffix(".npz").read_bytes())
    with pytest.raises(ValueError, match=r"counts pieces of \[2, 3\].*retrain it"):
        classifier_load(tmp_path / "pieces.json", embed=lambda texts: np.zeros((len(texts), 384)))

    (tmp_path / "foreign.json").write_text(json.dumps(artefact))
    with np.load(shipped.with_suffix(".npz")) as stored:
        arrays = {name: stored[name] for name in stored.files}
    np.savez(tmp_path / "foreign.npz", **{**arrays, "idf": arrays["idf"] * 2})
    with pytest.raises(ValueError, match=r"does not belong to foreign\.json"):
        classifier_load(tmp_path / "foreign.json", embed=lambda texts: np.zeros((len(texts), 384)))


# Answers to "which flat are you in?": a retraining that stopped learning
# addresses as written once made "flat 2" an alert (docs/emergencies.md).
FLAT_ANSWERS = ["flat 2", "Flat 12", "apt 4", "it's flat 3", "number 14", "22b"]


def test_a_flat_number_alone_is_not_an_emergency():
    scores = classifier_get().score_many(FLAT_ANSWERS)
    alert = classifier_get().thresholds["standard"]["alert"]
    assert [text for text, score in zip(FLAT_ANSWERS, scores, strict=True) if score.emergency >= alert] == []


def test_the_shipped_artefact_was_never_trained_on_judged_splits():
    shipped = json.loads(Path(settings.EMERGENCY_CLASSIFIER_PATH).read_text())
    assert not {"dev.jsonl", "test.jsonl"} & set(shipped["trained_on"])


def test_the_training_command_refuses_judged_files(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="never train on them"):
        call_command(
            "train_emergency_classifier", "--extra", str(CORPUS / "test.jsonl"), "--output", str(tmp_path / "x")
        )


@pytest.mark.django_db
def test_a_hazard_described_without_its_name_is_answered_by_the_classifier(home, post_inbound):
    text = "my nan is 91 and lives with us, the boiler stopped last night and we are all wrapped in blankets"
    assert not emergency_detect(text, organization_id=home.pk, country="GB").hits  # no rule knows this wording
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body=text)
    assert response.status_code == 200
    screen_waiting()
    alert = EmergencyAlert.objects.get()
    assert alert.source == "classifier" and alert.category == "no_heat_vulnerable"
    assert alert.score >= classifier_get().thresholds["standard"]["alert"]
    assert alert.model_version == classifier_get().version
    assert alert.safety_reply and safety_texts(PHONE) == [alert.safety_reply]
    assert alert.trigger.startswith("Classifier: no heat")


@pytest.mark.django_db
def test_a_built_in_rule_in_a_harmless_message_is_stood_down_but_fires_without_the_classifier(
    home, post_inbound, settings
):
    text = "just checking, is the fire alarm test at 10 tomorrow? I work nights"
    detection = emergency_detect(text, organization_id=home.pk, country="GB")
    assert detection.vetoed and not detection
    post_inbound(phone=PHONE, to=ORG_NUMBER, body=text)
    assert screen_waiting()[0].detection.vetoed  # screened, and stood down
    assert not EmergencyAlert.objects.exists() and safety_texts(PHONE) == []

    settings.EMERGENCY_CLASSIFIER = "off"  # the rules decide alone
    post_inbound(phone=PHONE, to=ORG_NUMBER, body=text)
    assert EmergencyAlert.objects.get().source == "keyword"


@pytest.mark.django_db
def test_an_organizations_own_rule_always_fires(home, post_inbound):
    EmergencyRule.objects.create(organization=home, phrase="tuesday inspection", category="structural")
    text = "reminder about the tuesday inspection please"
    assert emergency_detect(text, organization_id=home.pk, country="GB").score.emergency < 0.05
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body=text)
    alert = EmergencyAlert.objects.get()  # decided in the request: nothing can veto the landlord's own rule
    assert alert.source == "keyword" and alert.trigger.startswith("Keyword rule “tuesday inspection”")
    assert alert.safety_reply in response.content.decode() and screen_waiting() == []


@pytest.mark.django_db
def test_without_the_classifier_the_rules_still_answer(home, post_inbound, no_classifier, caplog):
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body="I can smell gas in the kitchen")
    assert response.status_code == 200
    screen_waiting()  # the worker could not load it: its rules decide alone
    alert = EmergencyAlert.objects.get()
    assert alert.source == "keyword" and alert.score is None and alert.model_version == ""
    assert safety_texts(PHONE) == [alert.safety_reply]
    assert "emergency classifier unavailable" in caplog.text


class _FixedScore:
    """A classifier that gives every message the same score: the policy alone is under test."""

    thresholds = {
        "high": {"alert": 0.5, "veto": 0.1, "veto_phrase": 0.1},
        "standard": {"alert": 0.6, "veto": 0.5, "veto_phrase": 0.3},
    }

    def __init__(self, emergency: float, category: str = "gas") -> None:
        self.emergency, self.category = emergency, category

    def score(self, text):
        from emergencies.classifier import Score

        return Score(self.emergency, self.category, 0.9, None, "fixed")


@pytest.mark.django_db
def test_a_classifier_only_follow_up_in_a_live_emergency_raises_nothing_new(home, post_inbound, monkeypatch):
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="the carbon monoxide alarm keeps beeping and I feel dizzy")
    screen_waiting()
    first = EmergencyAlert.objects.get()
    # The next words read alone as another emergency (no rule names one): the same emergency, said on.
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(0.9, "fire_smoke"))
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="we're all outside now")
    screen_waiting()
    assert list(EmergencyAlert.objects.all()) == [first] and safety_texts(PHONE) == [first.safety_reply]
    # A hazard the rules name is its own emergency.
    post_inbound(phone=PHONE, to=ORG_NUMBER, body="and now there's smoke coming out of the socket")
    screen_waiting()
    assert EmergencyAlert.objects.exclude(pk=first.pk).get().source == "keyword"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("score", "text", "high", "standard"),
    [
        (0.55, "something odd by the cooker", True, False),  # between the two alert thresholds
        (0.7, "something odd by the cooker", True, True),
        (0.2, "I can smell gas", True, False),  # a built-in phrase rule: vetoed below 0.3, kept above 0.1
        (0.4, "I can smell gas", True, True),  # a phrase is kept between veto_phrase and veto ...
        (0.4, "sewage in the yard", True, False),  # ... a one-word rule is not
        (0.05, "I can smell gas", False, False),
    ],
)
def test_sensitivity_chooses_the_thresholds_of_the_policy(monkeypatch, home, score, text, high, standard):
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(score))
    for sensitivity, expected in (("high", high), ("standard", standard)):
        detection = emergency_detect(text, organization_id=home.pk, country="GB", sensitivity=sensitivity)
        assert bool(detection) is expected, sensitivity


@pytest.mark.django_db
def test_a_rule_hit_only_in_a_figure_of_speech_is_left_to_the_classifier(monkeypatch, home):
    text = "aż mi dym z uszu leci, znowu nie odebrali śmieci"  # "dym" (smoke), in "fuming"
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(0.55, "fire_smoke"))
    detection = emergency_detect(text, organization_id=home.pk, country="GB")
    assert not detection and [hit.phrase for hit in detection.vetoed] == ["dym"]  # 0.55 is over the veto
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: _FixedScore(0.7, "fire_smoke"))
    assert emergency_detect(text, organization_id=home.pk, country="GB").source == "classifier"
    monkeypatch.setattr("emergencies.detector.classifier_get", lambda: None)  # the rules decide alone
    assert emergency_detect(text, organization_id=home.pk, country="GB").source == "keyword"


@pytest.mark.django_db
def test_check_emergency_shows_both_stages(capsys):
    call_command("check_emergency", "gas bill is far too high this month", "--json")
    result = json.loads(capsys.readouterr().out)
    assert result["classifier"]["version"] == classifier_get().version
    assert {"stage", "why", "rules", "rules_stood_down", "sensitivity"} <= set(result)


@pytest.mark.django_db
@pytest.mark.parametrize(("split", "listed"), [("dev", True), ("test", False)])
def test_measure_emergencies_reports_a_split_by_kind_and_never_lists_test_messages(
    capsys, monkeypatch, tmp_path, split, listed
):
    # Every fifth row of the split: the command's report is under test, not the corpus (all of dev takes a minute).
    rows = (CORPUS / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()[::5]
    (tmp_path / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.setattr("emergencies.measure.CORPUS", tmp_path)
    call_command("measure_emergencies", "--split", split, "--json")
    report = json.loads(capsys.readouterr().out)
    assert set(report["by_kind"]) == {"emergency", "tempting", "routine"}
    assert report["recall"]["n"] == report["by_kind"]["emergency"]["n"] > 0
    assert ("misses" in report) is listed


@pytest.mark.django_db
def test_measure_emergencies_reports_each_blind_batch_apart(capsys, monkeypatch, tmp_path):
    # The targets hold for each batch: two batches (a few rows of each kind) are reported one by one.
    (tmp_path / "blind").mkdir()
    for name in ("batch-016", "batch-017"):
        rows = [json.loads(line) for line in (CORPUS / "blind" / f"{name}.jsonl").read_text().splitlines()]
        kept = [next(row for row in rows if row["kind"] == kind) for kind in ("emergency", "tempting", "routine")]
        (tmp_path / "blind" / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in kept))
    monkeypatch.setattr("emergencies.measure.CORPUS", tmp_path)
    call_command("measure_emergencies", "--split", "blind", "--json")
    report = json.loads(capsys.readouterr().out)
    assert set(report["by_file"]) == {"batch-016", "batch-017"}
    assert all(set(kinds) == {"emergency", "tempting", "routine"} for kinds in report["by_file"].values())
    assert all(kinds["emergency"]["n"] == 1 for kinds in report["by_file"].values())
    call_command("measure_emergencies", "--split", "blind", "--batch", "016", "--json")
    assert json.loads(capsys.readouterr().out)["by_file"] == {}  # one batch: the totals are its figures
