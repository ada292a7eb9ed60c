"""The labelled emergency corpus: split by situation, test split and blind
batches frozen by checksum (an edit shows up here in review), every category
in every language and country."""

from __future__ import annotations

import collections
import hashlib
import json
from pathlib import Path

import pytest

from emergencies.models import EMERGENCY_CATEGORIES

CORPUS = Path(__file__).resolve().parents[1] / "emergencies"
FROZEN = {
    "test.jsonl": "122d8ab40ee59daadf057195c5e292efca2460cf49ac35c1cec0515f2c68f4bd",
    "blind/batch-001.jsonl": "227bf799399751ade76450b30d43c45eb96a592aacc404455dacf473da083355",
    "blind/batch-002.jsonl": "0ce04f72b167743493ec54dc03b6cece3da1699a1f2e7f12c6a14495ab4e5855",
    "blind/batch-003.jsonl": "2313175b8c2ed30536c9d93424675e0d490d1462210f9fdf2fdfd2a60ea3e1df",
    "blind/batch-004.jsonl": "f94b39a8116254c23a02894326b8373ec5af37e9f50e16b66a097893ea41cc9f",
    "blind/batch-005.jsonl": "e07ab140c8799d64aaa8f4a0106870929294a76aa0ef525e669a21d548c2b813",
    "blind/batch-006.jsonl": "d16c365ee9f90a381a8770ed60b9d3c65dbe37043dd0604dc9af5fc5f6a7510b",
    "blind/batch-007.jsonl": "2928e4082b6688b4cfceaa84146437685a900e8d6ad86698c75c91efda1a8e81",
    "blind/batch-008.jsonl": "d0b2809fa45b4b055a6dcb1525cd56b52dfad27a1d88992b581546580c168211",
    "blind/batch-009.jsonl": "3280ce248255273ab0d852df116047369ea4c05c23621401e590f3fcaa23779c",
    "blind/batch-010.jsonl": "526e9dd66b0506e15dce336e3da4705d595d385555c5817ce9e5e92d06ec2a72",
    "blind/batch-011.jsonl": "301681e2036a5d1342c7a32fe93fa89c9d29818815e0f2681871f8d4b8f78dd9",
    "blind/batch-012.jsonl": "5cd22772cb73e59b781387aec23273883bffe96b62aa71028c39ae3ce42097f7",
    "blind/batch-013.jsonl": "b62d54bf9c12f7973f8388ba5a32da85ee56fcff2cca34650c9bfab13677dccf",
    "blind/batch-014.jsonl": "7d136b02b5c3d868c15b7bbfc4cf99504b0eca59a59a5b1737a8a5a449581e07",
    "blind/batch-015.jsonl": "2f95c16c48308729ab2c2ea0a959f76a42c1de702c88c8654ac7991e681e4200",
    "blind/batch-016.jsonl": "1882164fc6658d21b08228ccf3341d5174eff0a8b8c71e2a007739ce99482fa0",
    "blind/batch-017.jsonl": "800c1a265cad6999fd0e3145d16c4bde50677f0e74c02996b8be1369e1ac19bb",
    "blind/batch-018.jsonl": "7dd4c770c2e7d60005ab97eceeb0190831c3e31cc34833167a3de0b290856983",
    "blind/batch-019.jsonl": "d040e8f30c5b8e75e40ebc0a90e3d05406d5484d45463a9b0fc0b6767a16de40",
    "blind/batch-020.jsonl": "fa93a59f4bb40dd17a62f39f4180b5e2a1363c24d20076c7d8d63584b89a9067",
    "blind/batch-021.jsonl": "ae44c356204f4afe27b8d34c31e7269fd767b740097598ea617b3ba516cb43d0",
    "blind/batch-022.jsonl": "aad4143b1ea85122066f4c8d06cbfc98156e92f799888227e8513bcc525b70b9",
    "blind/batch-023.jsonl": "788c5e220db498c263bd5d7a77ff43685819b3a285ad2de58068696589f45dcd",
    "blind/batch-024.jsonl": "3ee4f531a6483108123edcf46a809bffe18f344837719a897e1e7fb7ae997811",
    "blind/batch-025.jsonl": "4a5c09282dd56a114d149f0ac54123821acd5b517741c5c3c058fd0537727be3",
}
FIELDS = {
    "id",
    "text",
    "emergency",
    "category",
    "language",
    "country",
    "kind",
    "near_category",
    "situation",
    "provenance",
}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_frozen_files_are_unchanged(name):
    assert hashlib.sha256((CORPUS / name).read_bytes()).hexdigest() == FROZEN[name]


def test_no_situation_sits_on_two_sides_of_the_split():
    seen: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        for row in rows(f"{split}.jsonl"):
            assert seen.setdefault(row["situation"], split) == split, row["id"]


@pytest.mark.parametrize(
    "name", ["train.jsonl", "dev.jsonl", "test.jsonl", *(n for n in FROZEN if n.startswith("blind/"))]
)
def test_rows_are_labelled_consistently(name):
    for row in rows(name):
        assert set(row) == FIELDS, row["id"]
        assert row["kind"] in {"emergency", "tempting", "routine"}
        assert row["emergency"] == (row["kind"] == "emergency"), row["id"]
        assert (row["category"] in EMERGENCY_CATEGORIES) if row["emergency"] else row["category"] is None
        assert row["language"] in {"en", "pl", "es", "pt", "ro"} and row["country"] in {"GB", "IE", "US"}
        assert row["provenance"]["brief"] and row["provenance"]["writer"]


def test_corpus_covers_every_category_language_and_country():
    corpus = [row for split in ("train", "dev", "test") for row in rows(f"{split}.jsonl")]
    assert len(corpus) >= 800
    assert sum(not row["emergency"] for row in corpus) / len(corpus) >= 0.35
    cells = collections.Counter((r["category"], r["language"], r["country"]) for r in corpus if r["emergency"])
    assert len(cells) == len(EMERGENCY_CATEGORIES) * 5 * 3
