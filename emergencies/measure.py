"""How the product's emergency decision (rules and classifier together, as
``emergencies.detector`` combines them) does on a labelled set: recall and
false positives by category, language and kind, and the category confusion.

Splits live in evals/emergencies: ``train`` and ``dev`` (tuned on), ``test``
(frozen, reported only), ``blind`` (every batch written after a change, the
generalisation figure) and ``regression`` (the project's first 112 messages,
trained on: an own-set figure)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from django.conf import settings

from emergencies.detector import emergency_detect
from emergencies.home_address import address_coverage

CORPUS = Path(settings.BASE_DIR) / "evals" / "emergencies"
SPLITS = ("train", "dev", "test", "blind", "regression")


def split_paths(split: str, batch: str = "") -> list[Path]:
    """The files of ``split``; for ``blind``, every batch or the one named
    ``batch`` ("003" for blind/batch-003.jsonl)."""
    if split == "blind":
        return sorted((CORPUS / "blind").glob(f"batch-{batch}.jsonl" if batch else "*.jsonl"))
    if split == "regression":
        return [CORPUS / "messages.jsonl"]
    return [CORPUS / f"{split}.jsonl"]


def rows_load(paths: list[Path]) -> list[dict[str, Any]]:
    """The rows of ``paths``, each with the name of its file (``_file``, "batch-016")."""
    rows = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        rows += [{**json.loads(line), "_file": path.stem} for line in lines if line.strip()]
    return rows


def _rate(hit: int, total: int) -> dict[str, Any]:
    return {"n": total, "hit": hit, "rate": round(hit / total, 3) if total else None}


def emergencies_measure(
    *,
    rows: list[dict[str, Any]],
    country: str = "GB",
    organization_id: int | None = None,
    sensitivity: str = "standard",
) -> dict[str, Any]:
    """A row's own ``country`` wins over ``country``. Rows without a ``kind``
    (the regression set) count as "negative" when they are not emergencies."""
    by: dict[str, dict[str, list[int]]] = {key: defaultdict(lambda: [0, 0]) for key in ("category", "language", "kind")}
    # Per file and kind: the targets hold for each blind batch, not only pooled.
    by_file: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    confusion: Counter[tuple[str, str]] = Counter()
    stages: Counter[str] = Counter()
    misses, false_alarms = [], []
    positives = hits = negatives = false_positives = 0
    for row in rows:
        detection = emergency_detect(
            row["text"], organization_id=organization_id, country=row.get("country") or country, sensitivity=sensitivity
        )
        kind = row.get("kind") or ("emergency" if row["emergency"] else "negative")
        fired = int(detection.emergency)
        language = f"{row.get('language', '?')} {'recall' if row['emergency'] else 'false positives'}"
        for table, key in (("kind", kind), ("language", language)):
            by[table][key][0] += fired
            by[table][key][1] += 1
        by_file[row.get("_file", "")][kind][0] += fired
        by_file[row.get("_file", "")][kind][1] += 1
        if detection:
            stages[detection.source] += 1
        if row["emergency"]:
            positives += 1
            hits += fired
            by["category"][row["category"]][0] += fired
            by["category"][row["category"]][1] += 1
            confusion[(row["category"], detection.category or "missed")] += 1
            if not fired:
                misses.append(row["text"])
        else:
            negatives += 1
            false_positives += fired
            if fired:
                false_alarms.append(f"{row['text']} -> {detection.category} ({detection.explain()})")
    return {
        "sensitivity": sensitivity,
        "recall": _rate(hits, positives),
        "false_positives": _rate(false_positives, negatives),
        "by_kind": {k: _rate(*v) for k, v in sorted(by["kind"].items())},
        "by_category": {k: _rate(*v) for k, v in sorted(by["category"].items())},
        "by_language": {k: _rate(*v) for k, v in sorted(by["language"].items())},
        "by_file": {name: {k: _rate(*v) for k, v in sorted(kinds.items())} for name, kinds in sorted(by_file.items())}
        if len(by_file) > 1
        else {},
        "stages": dict(stages),
        "confusion": {f"{truth} -> {said}": n for (truth, said), n in sorted(confusion.items())},
        "misses": misses,
        "false_alarms": false_alarms,
        "addresses": addresses_measure(rows),
    }


def addresses_measure(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How much of each labelled address (``provenance.address``) the address
    patterns take out: whole (95% of its letters and digits or more), in part,
    not at all, and the share of all their letters and digits."""
    shares = [
        address_coverage(row["text"], row["provenance"]["address"])
        for row in rows
        if isinstance(row.get("provenance"), dict) and row["provenance"].get("address")
    ]
    if not shares:
        return None
    return {
        "n": len(shares),
        "whole": sum(share >= 0.95 for share in shares),
        "in_part": sum(0 < share < 0.95 for share in shares),
        "not_at_all": sum(share == 0 for share in shares),
        "mean_share": round(sum(shares) / len(shares), 3),
    }
