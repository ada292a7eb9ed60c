"""``manage.py train_answerability [--output PATH]``

Trains the answerability head (``retrieval/answerability.py``) on the held-out
dev split's questions, with the configured embedding model, and writes its
artefact: the head, the operating point that keeps ``KEEP_ANSWERABLE`` of the
answerable questions (on cross-validated probabilities, so on questions each
head did not see), and those figures. The dev corpus is built in a transaction
that is rolled back: nothing is left in the database. Test, blind batches and
the regression set are never trained on; ``eval_retrieval --set ...`` reports
the head on them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import transaction

from evals.retrieval_eval import (
    LABELLED_SETS,
    answerability_dataset,
    auc,
    corpus_build,
    queries_prepare,
    queries_read,
)
from retrieval.answerability import (
    ARTEFACT,
    FORMAT,
    KEEP_ANSWERABLE,
    REGULARISATION,
    answerability_fit,
    cross_validated,
    operating_point,
)
from retrieval.embeddings import embedding_backend
from retrieval.search import SearchParams

TRAINING_SET = "dev"


def _digest(folder: Path, queries: Path) -> str:
    digest = hashlib.sha256()
    for path in [*sorted(p for p in folder.rglob("*") if p.is_file()), queries]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Command(BaseCommand):
    help = "Train the answerability head on the dev split's questions and write its artefact."

    def add_arguments(self, parser):
        parser.add_argument("--output", type=Path, default=ARTEFACT, help=f"default {ARTEFACT}")

    def handle(self, *args, **options):
        corpus_dir, queries_file = LABELLED_SETS[TRAINING_SET]
        queries = queries_read(queries_file)
        with transaction.atomic():
            corpus = corpus_build(corpus_dir, property_codes={q.property for q in queries if q.property})
            prepared = queries_prepare(queries, corpus, use_rewrite=False)
            features, labels = answerability_dataset(prepared, corpus, params=SearchParams.from_settings())
            transaction.set_rollback(True)
        held = cross_validated(features, labels)
        threshold = operating_point(held, labels, keep=KEEP_ANSWERABLE)
        kept = float((held[labels == 1] >= threshold).mean())
        flagged = float((held[labels == 0] < threshold).mean())
        artefact = {
            "format": FORMAT,
            "embedding_model": embedding_backend().name,
            "trained_on": {"set": TRAINING_SET, "sha256": _digest(corpus_dir, queries_file)},
            "regularisation": REGULARISATION,
            "keep_answerable": KEEP_ANSWERABLE,
            "threshold": round(threshold, 6),
            "figures": {
                "questions": len(labels),
                "no_answer": int((labels == 0).sum()),
                "cross_validated_auc": round(auc(held[labels == 1].tolist(), held[labels == 0].tolist()), 4),
                "answerable_kept": round(kept, 4),
                "no_answer_flagged": round(flagged, 4),
            },
            **answerability_fit(features, labels),
        }
        options["output"].parent.mkdir(parents=True, exist_ok=True)
        options["output"].write_text(json.dumps(artefact, indent=1) + "\n", encoding="utf-8")
        f = artefact["figures"]
        self.stdout.write(
            f"trained on {f['questions']} dev questions ({f['no_answer']} without an answer), "
            f"{artefact['embedding_model']}: cross-validated AUC {f['cross_validated_auc']:.3f}; "
            f"threshold {artefact['threshold']:.3f} keeps {f['answerable_kept']:.0%} of answerable, "
            f"flags {f['no_answer_flagged']:.0%} of no-answer; wrote {options['output']}"
        )
