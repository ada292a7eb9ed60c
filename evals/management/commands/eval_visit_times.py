"""``manage.py eval_visit_times [FILE ...] [--wrong]``

How well the times contractors type are read (``issues/visit_times.py``),
per file of ``evals/contractor_times/`` (default: every split and blind
batch there): replies read exactly right, and precision / recall of single
times, overall and per kind (clear, ambiguous, no time)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from evals.visit_times_eval import CORPUS, score_file


class Command(BaseCommand):
    help = "Measure how typed visit times are read on the labelled contractor replies."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", type=Path, help="JSON Lines files (default: all in the corpus)")
        parser.add_argument("--wrong", action="store_true", help="list the replies read wrong")

    def handle(self, *args, files, wrong, **options):
        for path in files or sorted(CORPUS.rglob("*.jsonl")):
            scores = score_file(path)
            self.stdout.write(f"{path.relative_to(CORPUS) if path.is_relative_to(CORPUS) else path}")
            for kind, s in scores.items():
                self.stdout.write(
                    f"  {kind:<10} {s.right:>3}/{s.replies:<3} right   precision {s.precision:.2f}   "
                    f"recall {s.recall:.2f}"
                )
            if wrong:
                for line in scores["all"].wrong:
                    self.stdout.write(f"    {line}")
