"""Recall and false positives of the keyword rules on a labelled set."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings

from emergencies.matching import emergency_match

LABELLED_SET = Path(settings.BASE_DIR) / "evals" / "emergencies" / "messages.jsonl"


def emergency_rules_measure(*, path: Path = LABELLED_SET, country: str = "GB", organization_id=None) -> dict:
    """A row's own ``country`` (wording only used there, such as an American
    "furnace is out") wins over ``country``."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    report = {
        "positives": 0,
        "hits": 0,
        "right_category": 0,
        "negatives": 0,
        "false_positives": 0,
        "misses": [],
        "fps": [],
    }
    for row in rows:
        match = emergency_match(row["text"], organization_id=organization_id, country=row.get("country", country))
        if row["emergency"]:
            report["positives"] += 1
            if match:
                report["hits"] += 1
                report["right_category"] += match.category == row["category"]
            else:
                report["misses"].append(row["text"])
        else:
            report["negatives"] += 1
            if match:
                report["false_positives"] += 1
                report["fps"].append(f"{row['text']} -> {match.category}")
    return report
