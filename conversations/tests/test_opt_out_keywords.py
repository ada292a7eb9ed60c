"""Which whole messages are STOP / START (``conversations.opt_out.keyword_read``):
the own set the rules were written with, and the held-out set written from
situations before the rules existed, frozen by checksum. Figures:
``pytest conversations/tests/test_opt_out_keywords.py -s -k figures``."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from conversations.opt_out import OPT_IN, OPT_OUT, keyword_read

HELD_OUT = Path(__file__).parent / "data" / "opt_out_heldout.jsonl"
HELD_OUT_SHA256 = "f627e522f0ce9500ef08c62e354fc875cf147014d6015f05ef8719f5b1a704dd"

# The own set: (text, expected kind or "none").
OWN = [
    ("STOP", OPT_OUT),
    ("Stop", OPT_OUT),
    ("stop please", OPT_OUT),
    ("STOPALL", OPT_OUT),
    ("unsubscribe", OPT_OUT),
    ("END", OPT_OUT),
    ("quit.", OPT_OUT),
    ("opt-out", OPT_OUT),
    ("rezygnuję", OPT_OUT),
    ("Wypisz mnie proszę", OPT_OUT),
    ("baja", OPT_OUT),
    ("darme de baja", OPT_OUT),
    ("dezabonare", OPT_OUT),
    ("oprește", OPT_OUT),
    ("sair", OPT_OUT),
    ("PARE", OPT_OUT),
    ("START", OPT_IN),
    ("unstop", OPT_IN),
    ("wznów", OPT_IN),
    ("alta", OPT_IN),
    ("reabonare", OPT_IN),
    ("começar", OPT_IN),
    ("please stop the leak", "none"),
    ("the boiler won't stop banging", "none"),
    ("stop by on Friday?", "none"),
    ("end of my tenancy is in May", "none"),
    ("cancel my appointment", "none"),
    ("yes", "none"),
    ("start the repair please, whenever", "none"),
    ("para cuándo viene el técnico?", "none"),
    ("", "none"),
]


def _kind(text: str) -> str:
    keyword = keyword_read(text)
    return keyword.kind if keyword else "none"


def held_out() -> list[dict]:
    return [json.loads(line) for line in HELD_OUT.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_held_out_set_is_frozen():
    assert hashlib.sha256(HELD_OUT.read_bytes()).hexdigest() == HELD_OUT_SHA256
    items = held_out()
    assert len(items) >= 40
    assert {item["lang"] for item in items} == {"en", "pl", "es", "ro", "pt"}


@pytest.mark.parametrize(("text", "expected"), OWN)
def test_own_set(text, expected):
    assert _kind(text) == expected


def test_a_tempting_negative_is_never_a_keyword():
    """Whatever the figures, no held-out negative may opt a tenant out: a false opt-out silences their repairs."""
    false_alarms = [item["text"] for item in held_out() if item["label"] == "none" and _kind(item["text"]) != "none"]
    assert false_alarms == []


def _figures(items: list[tuple[str, str]]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for text, expected in items:
        got = _kind(text)
        if expected == "none":
            counts["negatives"] += 1
            counts["false_alarms"] += got != "none"
        else:
            counts[expected] += 1
            counts[f"{expected}_found"] += got == expected
    return dict(counts)


def test_figures():
    own = _figures(OWN)
    heldout = _figures([(item["text"], item["label"]) for item in held_out()])
    missed = [item["text"] for item in held_out() if item["label"] != "none" and _kind(item["text"]) != item["label"]]
    print(f"\nown:      {own}\nheld-out: {heldout}\nheld-out missed: {missed}")
    assert own["false_alarms"] == 0 and heldout["false_alarms"] == 0
