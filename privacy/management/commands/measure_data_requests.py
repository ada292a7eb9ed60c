"""Print the "send me my data" detector's figures on the own set and the
held-out set, per language (docs/data-protection.md)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from privacy.detector import data_request_detect

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


class Command(BaseCommand):
    help = "Measure the data-request detector: own set vs held-out set."

    def handle(self, *args, **options) -> None:
        for name in ("own", "heldout", "heldout2", "heldout3"):
            items = [json.loads(line) for line in (DATA / f"data_request_{name}.jsonl").read_text().splitlines()]
            by_language: dict[str, list[int]] = {}
            for item in items:
                said = data_request_detect(item["text"])
                counts = by_language.setdefault(item["lang"], [0, 0, 0, 0])
                counts[(0 if said else 2) + (0 if item["label"] else 1)] += 1  # tp, fp, fn, tn
            total = [sum(c[i] for c in by_language.values()) for i in range(4)]
            self.stdout.write(f"{name}: {len(items)} items  " + self._line(total))
            for language, counts in sorted(by_language.items()):
                self.stdout.write(f"  {language}: " + self._line(counts))

    @staticmethod
    def _line(counts: list[int]) -> str:
        tp, fp, fn, tn = counts
        recall = tp / (tp + fn) if tp + fn else 1.0
        precision = tp / (tp + fp) if tp + fp else 1.0
        return f"tp {tp} fp {fp} fn {fn} tn {tn}  recall {recall:.0%} precision {precision:.0%}"
