"""How well typed visit times are read (``issues/visit_times.py``), on the
labelled contractor replies in ``evals/contractor_times/`` (JSON Lines:
``id``, ``country``, ``now`` (the agency's local time), ``text``,
``expected`` (local start times, ``YYYY-MM-DDTHH:MM``), ``ambiguous``).

A reply is right when exactly its expected times are read (order aside);
precision and recall count single times. A wrong time read is worse than
none: the tenant would be offered a visit the contractor never proposed."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path

from issues.visit_times import times_read
from properties.working_time import zone_get

CORPUS = Path(__file__).resolve().parent / "contractor_times"
ZONES = {"GB": "Europe/London", "IE": "Europe/Dublin", "US": "America/New_York"}


@dataclass
class Score:
    replies: int = 0
    right: int = 0
    read: int = 0  # times read
    correct: int = 0  # of those, expected
    expected: int = 0
    wrong: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.read if self.read else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.expected if self.expected else 1.0


def kind_of(row: dict) -> str:
    return "no time" if not row["expected"] else "ambiguous" if row.get("ambiguous") else "clear"


def score_file(path: Path) -> dict[str, Score]:
    """Scores for all replies ("all") and per kind (clear, ambiguous, no time)."""
    scores: dict[str, Score] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        zone = zone_get(ZONES.get(row["country"], "Europe/London"))
        now = datetime.datetime.fromisoformat(row["now"]).replace(tzinfo=zone)
        got = {f"{t:%Y-%m-%dT%H:%M}" for t in times_read(row["text"], now=now, country=row["country"])}
        expected = set(row["expected"])
        for key in ("all", kind_of(row)):
            score = scores.setdefault(key, Score())
            score.replies += 1
            score.right += got == expected
            score.read += len(got)
            score.correct += len(got & expected)
            score.expected += len(expected)
            if got != expected and key == "all":
                score.wrong.append(f"{row['id']}: {row['text']!r} expected {sorted(expected)} read {sorted(got)}")
    return scores
