"""The answerability head: which signal decides, and what happens when the
head cannot be used. Its quality is measured, not asserted: eval_retrieval
reports it per set, and evals/tests/test_answerability_artefact.py checks the
committed artefact is what training on dev gives."""

import json
import logging

import numpy as np
import pytest

from retrieval import answerability
from retrieval.answerability import (
    answerability_features,
    answerability_head,
    head_for_model,
    head_from_artefact,
    operating_point,
    passages_verdict,
)
from retrieval.embeddings import embedding_backend
from retrieval.search import SearchHit


def answers(embedding, hits) -> bool:
    return passages_verdict(embedding, hits).answers


def hit(distance: float | None) -> SearchHit:
    return SearchHit(1, 1, "Guide", "Heading", "text", 0.5, 1 if distance is not None else None, 1, distance, 0.1)


@pytest.fixture
def artefact(tmp_path, monkeypatch):
    """Point the loader at a file of our own; the loaded head is forgotten before and after."""
    path = tmp_path / "answerability.json"
    monkeypatch.setattr(answerability, "ARTEFACT", path)
    head_for_model.cache_clear()
    yield path
    head_for_model.cache_clear()


def write(path, *, model: str, threshold: float = 0.5, bias: float = 0.0):
    dims = embedding_backend().dimensions + 3
    weights = [0.0] * dims
    weights[-3] = 10.0  # only the best cosine counts: above 0.7 + bias/10 answers
    path.write_text(
        json.dumps(
            {
                "format": answerability.FORMAT,
                "embedding_model": model,
                "threshold": threshold,
                "mean": [0.0] * dims,
                "scale": [1.0] * dims,
                "coef": weights,
                "intercept": -7.0 + bias,
            }
        )
    )


def test_the_features_are_the_query_then_the_hits_similarities():
    features = answerability_features([0.5, -0.5], [hit(0.1), hit(None), hit(0.3)])
    assert features.tolist() == pytest.approx([0.5, -0.5, 0.9, 0.7, 0.8])
    assert answerability_features([0.5], [hit(None)]).tolist() == [0.5, 0.0, 0.0, 0.0]


def test_the_head_decides_at_its_operating_point_and_the_setting_overrides_it(artefact, settings):
    write(artefact, model=embedding_backend().name)
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = None
    settings.SEARCH_ANSWER_MIN_SIMILARITY = 0.0  # the cosine floor is not what decides here
    embedding = [0.0] * embedding_backend().dimensions
    assert answers(embedding, [hit(0.2), hit(0.5)])  # best cosine 0.8: probability 0.73 >= 0.5
    assert not answers(embedding, [hit(0.4), hit(0.5)])  # best cosine 0.6: probability 0.27
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = 0.9
    assert not answers(embedding, [hit(0.2), hit(0.5)])
    assert not answers(embedding, [])  # nothing found answers nothing


def test_fewer_than_two_vector_hits_are_left_to_the_cosine_rule(artefact, settings):
    """The head was trained on searches with several vector hits: one hit, or
    documents found by their words alone, would read as cosines of 0."""
    write(artefact, model=embedding_backend().name, bias=-100)  # would flag everything it reads
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = None
    settings.SEARCH_ANSWER_MIN_SIMILARITY = 0.75
    embedding = [0.0] * embedding_backend().dimensions
    assert not answers(embedding, [hit(0.2), hit(0.3)])  # the head reads two
    assert answers(embedding, [hit(0.2)])  # one: cosine 0.8 >= 0.75
    assert not answers(embedding, [hit(0.3), hit(None)])  # one: cosine 0.7
    assert answers(embedding, [hit(None), hit(None)])  # words alone: taken as answers, as before


def test_a_head_for_another_model_or_a_broken_file_leaves_the_cosine_floor_to_decide(artefact, settings, caplog):
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = None
    settings.SEARCH_ANSWER_MIN_SIMILARITY = 0.75
    embedding = [0.0] * embedding_backend().dimensions
    write(artefact, model="some-other-model", bias=-100)  # would flag everything if it were used
    assert answerability_head() is None
    assert answers(embedding, [hit(0.2), hit(0.3)]) and not answers(embedding, [hit(0.3), hit(0.4)])

    for broken in ("{not json", "[1, 2]", json.dumps({"format": answerability.FORMAT, "embedding_model": "x"})):
        head_for_model.cache_clear()
        artefact.write_text(broken)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="retrieval.answerability"):
            assert answerability_head() is None
        assert "answerability head unavailable" in caplog.text
        assert answers(embedding, [hit(0.2), hit(0.3)]) and not answers(embedding, [hit(0.3), hit(0.4)])


def test_an_artefact_of_another_format_or_shape_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="retrain"):
        head_from_artefact({"format": answerability.FORMAT + 1})
    numbers = {"embedding_model": "m", "intercept": 0, "threshold": 0.5, "mean": [0, 0], "scale": [1, 1]}
    with pytest.raises(ValueError, match="shape"):
        head_from_artefact({"format": answerability.FORMAT, **numbers, "coef": [1, 2, 3]})


def test_the_operating_point_keeps_the_asked_share_of_answerable_questions():
    probabilities = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.05, 0.35])
    labels = np.array([1] * 10 + [0, 0])
    threshold = operating_point(probabilities, labels, keep=0.9)
    assert threshold == 0.2
    assert (probabilities[labels == 1] >= threshold).mean() == 0.9
