"""The committed answerability head is what training on the dev split gives:
retraining reproduces its numbers, so nobody can hand-edit a threshold or
train on the wrong questions without this failing."""

import json

import numpy as np
import pytest
from django.core.management import call_command

from retrieval.answerability import ARTEFACT


@pytest.mark.django_db(transaction=False)
def test_retraining_on_dev_reproduces_the_committed_artefact(tmp_path, capsys):
    committed = json.loads(ARTEFACT.read_text(encoding="utf-8"))
    call_command("train_answerability", "--output", str(tmp_path / "head.json"))
    assert "cross-validated AUC" in capsys.readouterr().out
    fresh = json.loads((tmp_path / "head.json").read_text(encoding="utf-8"))

    assert fresh["trained_on"] == committed["trained_on"]  # the same dev questions and corpus
    assert fresh["embedding_model"] == committed["embedding_model"]
    assert fresh["figures"]["questions"] == committed["figures"]["questions"]
    for name in ("cross_validated_auc", "answerable_kept", "no_answer_flagged"):
        assert fresh["figures"][name] == pytest.approx(committed["figures"][name], abs=0.01), name
    assert fresh["threshold"] == pytest.approx(committed["threshold"], abs=0.01)
    assert np.allclose(fresh["coef"], committed["coef"], atol=1e-3)
    assert fresh["intercept"] == pytest.approx(committed["intercept"], abs=1e-3)
