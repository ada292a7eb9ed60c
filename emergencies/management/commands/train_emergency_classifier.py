"""``manage.py train_emergency_classifier [--extra FILE ...] [--output PATH]``

Trains the emergency classifier on evals/emergencies/train.jsonl and the
project's own regression set messages.jsonl (short, direct messages in a style
the blind writers rarely used), plus any ``--extra`` JSONL files of the same
shape (a landlord's own examples), and
writes the artefact the product loads (``EMERGENCY_CLASSIFIER_PATH``). Never
train on dev, test or blind files: they are how the classifier is judged.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from emergencies.classifier import EMBEDDING_MODEL, e5_embedder
from emergencies.training import classifier_save, classifier_train

CORPUS = Path(settings.BASE_DIR) / "evals" / "emergencies"
JUDGED = {"dev.jsonl", "test.jsonl"}


class Command(BaseCommand):
    help = "Train the emergency classifier from the train split and write its artefact."

    def add_arguments(self, parser):
        parser.add_argument("--extra", nargs="*", default=[], help="more labelled JSONL files (your own examples)")
        parser.add_argument("--output", default=settings.EMERGENCY_CLASSIFIER_PATH)

    def handle(self, *args, extra, output, **options):
        paths = [CORPUS / "train.jsonl", CORPUS / "messages.jsonl", *map(Path, extra)]
        for path in paths:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
            if path.name in JUDGED or "blind" in path.parts:
                raise CommandError(f"{path}: dev, test and blind files judge the classifier; never train on them")
        try:
            artefact = classifier_train(paths=paths, embed=e5_embedder(), embedding_model=EMBEDDING_MODEL)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        classifier_save(artefact, Path(output))
        figures = ", ".join(f"{k} {v}" for k, v in artefact["figures"].items())
        self.stdout.write(f"{artefact['version']}: {artefact['rows']} rows -> {output} ({figures} on its own rows)")
