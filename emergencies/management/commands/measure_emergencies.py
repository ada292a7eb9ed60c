"""``manage.py measure_emergencies [--json]``: recall and false positives of the
keyword rules on evals/emergencies/messages.jsonl. False positives are
expected (the model's check stands them down); misses are not."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from emergencies.measure import emergency_rules_measure


class Command(BaseCommand):
    help = "Recall and false positives of the emergency keyword rules on the labelled set."

    def add_arguments(self, parser):
        parser.add_argument("--country", default="GB", help="for rows without a country of their own")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, country, **options):
        report = emergency_rules_measure(country=country)
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=2))
            return
        recall = report["hits"] / report["positives"] if report["positives"] else 0.0
        fp_rate = report["false_positives"] / report["negatives"] if report["negatives"] else 0.0
        self.stdout.write(
            f"recall {report['hits']}/{report['positives']} ({recall:.1%})  "
            f"right category {report['right_category']}/{report['hits']}  "
            f"false positives {report['false_positives']}/{report['negatives']} ({fp_rate:.1%}, "
            f"stood down by the model check)"
        )
        for text in report["misses"]:
            self.stdout.write(self.style.ERROR(f"  missed: {text}"))
        for text in report["fps"]:
            self.stdout.write(f"  false positive: {text}")
