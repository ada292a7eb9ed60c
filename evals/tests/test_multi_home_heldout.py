"""The blind set of messages from tenants who rent two homes
(``evals/identity/multi_home``, written from a situation brief without the
code; frozen). It measures the strict address matcher that confirms a home
named in a several-home tenant's first message (``_tenancy_named``), and it is
why a home named later is left to the model: the matcher cannot tell "I'm at
Orchard Lane today but the leak is at the flat" from a report at Orchard Lane
(docs/turn-engine.md)."""

import hashlib
import json
from pathlib import Path

from properties.address_match import address_match
from properties.models import Property

SET = Path(__file__).resolve().parents[1] / "identity" / "multi_home" / "test.jsonl"
FROZEN = "fce2f47b28c94eadee04c08707c1bc26186aba850042ef6f04fa90c44f517969"


def test_the_set_is_frozen():
    assert hashlib.sha256(SET.read_bytes()).hexdigest() == FROZEN


def test_the_matcher_on_the_blind_set_as_measured_on_2026_11_29():
    homes = [
        Property(pk=1, code="FLAT-1", address="Flat 4, 12 Harbour Street, Leeds", postcode="LS1 4AB"),
        Property(pk=2, code="ORCH-1", address="7 Orchard Lane, Headingley, Leeds", postcode="LS6 2AB"),
    ]
    rows = [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]
    named_b = [
        row["about"]
        for row in rows
        if (m := address_match(text=row["text"], properties=homes, strict=True).property) and m.pk == 2
    ]
    about_b = sum(row["about"] == "B" for row in rows)
    found, wrong = named_b.count("B"), len(named_b) - named_b.count("B")
    # 15 of 20 found; 4 of 40 named B where the problem is elsewhere or unsaid. Better is welcome, worse is not.
    assert (about_b, len(rows)) == (20, 60)
    assert found >= 15 and wrong <= 4, (found, wrong)
