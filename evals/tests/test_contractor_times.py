"""The contractor-times corpus: the test split and blind batches frozen by
checksum (an edit shows up here in review), and the command that measures it."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.management import call_command

from evals.visit_times_eval import CORPUS

FROZEN = {
    "test.jsonl": "e53f834c95809b58df8c8ccb4bc47346be89bf998627a8770a36147f7ac277b7",
    "blind/batch-002-test.jsonl": "6bb850ad265589c3c4defa43d4dea34c16f45cac47d9bd2b878ed59961358a33",
}


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_frozen_files_are_unchanged(name):
    assert hashlib.sha256((CORPUS / name).read_bytes()).hexdigest() == FROZEN[name]


def test_every_labelled_reply_is_well_formed_and_no_reply_is_in_two_files():
    seen: dict[str, str] = {}
    for path in sorted(CORPUS.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            assert {"id", "country", "now", "text", "expected", "ambiguous", "provenance"} <= row.keys(), row["id"]
            assert row["country"] in ("GB", "IE", "US")
            assert all(t > row["now"][:16] for t in row["expected"]), row["id"]
            assert seen.setdefault(row["text"], path.name) == path.name, f"{row['id']} is also in {seen[row['text']]}"


def test_the_command_prints_each_file_and_kind(capsys):
    call_command("eval_visit_times", str(CORPUS / "dev.jsonl"), "--wrong")
    out = capsys.readouterr().out
    assert "dev.jsonl" in out and "clear" in out and "no time" in out and "precision" in out
