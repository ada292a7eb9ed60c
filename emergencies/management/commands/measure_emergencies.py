"""``manage.py measure_emergencies [--split train|dev|test|blind|regression] [--batch NNN]
[--sensitivity S] [--addresses] [--json]``

What the product would decide (keyword rules and classifier together) on a
labelled split: recall and false positives by category, language and kind
(tempting vs routine), which stage fired, and the category confusion. The
messages it missed or flagged are listed for train, dev and regression only:
test and blind are for reporting, never for tuning. ``--addresses`` adds a
made-up home address to every message (streets training never saw), to show
whether an address changes the decision.
"""

from __future__ import annotations

import json
import random

from django.core.management.base import BaseCommand, CommandError

from emergencies.addresses import MEASURING_STREETS, address_add
from emergencies.detector import SENSITIVITIES
from emergencies.measure import SPLITS, emergencies_measure, rows_load, split_paths

LISTED = {"train", "dev", "regression"}


class Command(BaseCommand):
    help = "Recall and false positives of emergency detection (rules + classifier) on a labelled split."

    def add_arguments(self, parser):
        parser.add_argument("--split", choices=SPLITS, default="regression")
        parser.add_argument("--batch", default="", help="with --split blind: one batch only, e.g. 003")
        parser.add_argument("--sensitivity", choices=SENSITIVITIES, default="standard")
        parser.add_argument("--country", default="GB", help="for rows without a country of their own")
        parser.add_argument("--addresses", action="store_true", help="add a made-up home address to every message")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, split, batch, sensitivity, country, addresses, **options):
        paths = split_paths(split, batch)
        if not paths or not all(path.is_file() for path in paths):
            raise CommandError(f"no labelled file for --split {split}: {[str(p) for p in paths]}")
        rows = rows_load(paths)
        if addresses:
            rng = random.Random(0)
            for row in rows:
                where = {"language": row.get("language", "en"), "country": row.get("country", country)}
                row["text"] = address_add(row["text"], rng, **where, streets=MEASURING_STREETS)
        report = emergencies_measure(rows=rows, country=country, sensitivity=sensitivity)
        if split not in LISTED:
            report.pop("misses")
            report.pop("false_alarms")
        if options["json"]:
            self.stdout.write(json.dumps({"split": split, **report}, ensure_ascii=False, indent=2))
            return
        out = self.stdout.write
        recall, fps = report["recall"], report["false_positives"]
        out(
            f"{split} ({sensitivity}): recall {recall['hit']}/{recall['n']} ({recall['rate']:.3f})  "
            f"false positives {fps['hit']}/{fps['n']} ({(fps['rate'] or 0):.3f})  stages {report['stages']}"
        )
        for title in ("by_kind", "by_category", "by_language"):
            out(f"  {title.replace('_', ' ')}:")
            for key, value in report[title].items():
                rate = "-" if value["rate"] is None else value["rate"]
                out(f"    {key:32s} {value['hit']:4d}/{value['n']:<4d} {rate}")
        if report["by_file"]:
            out("  by file (recall; false alarms on tempting and routine messages):")
            for name, kinds in report["by_file"].items():
                cells = "  ".join(
                    f"{kind} {value['hit']}/{value['n']} ({value['rate']:.3f})" for kind, value in kinds.items()
                )
                out(f"    {name:20s} {cells}")
        if report["addresses"]:
            found = report["addresses"]
            out(
                f"  labelled addresses taken out: whole {found['whole']}, in part {found['in_part']}, "
                f"not at all {found['not_at_all']} of {found['n']} ({found['mean_share']:.0%} of their characters)"
            )
        out("  confusion (truth -> decided):")
        for key, n in report["confusion"].items():
            out(f"    {key:40s} {n}")
        for text in report.get("misses", []):
            out(self.style.ERROR(f"  missed: {text}"))
        for text in report.get("false_alarms", []):
            out(f"  false alarm: {text}")
