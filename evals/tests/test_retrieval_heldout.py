"""The held-out retrieval sets (evals/retrieval/heldout/): whole, fair, and the
test split frozen. Weights, k and thresholds are chosen on dev only; test is
only reported, so an edit to it must show in review (the checksum below)."""

import hashlib
import re

import pytest

from evals.retrieval_eval import LABELLED_SETS, queries_read
from retrieval.documents import manifest_read

LANGUAGES = {"en", "pl", "ro", "es", "pt"}
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)


@pytest.mark.parametrize("name", ["dev", "test", "blind-001"])
def test_every_label_names_a_heading_its_tenant_can_see(name):
    corpus, queries_file = LABELLED_SETS[name]
    manifest = manifest_read(corpus)
    headings = {file: set(HEADING.findall((corpus / file).read_text(encoding="utf-8"))) for file in manifest}
    queries = queries_read(queries_file)
    assert len({q.id for q in queries}) == len(queries)
    for query in queries:
        for label in query.relevant:
            assert label.file in manifest, (query.id, label.file)
            assert label.heading in headings[label.file], (query.id, label.heading)
            scope = manifest[label.file]["property_scope"]
            assert scope in ("all", query.property), (query.id, label.file)


@pytest.mark.parametrize("name", ["dev", "test", "blind-001"])
def test_each_set_covers_five_languages_and_questions_with_no_answer(name):
    queries = queries_read(LABELLED_SETS[name][1])
    by_language = {lang: [q for q in queries if q.language == lang] for lang in LANGUAGES}
    assert all(len(qs) >= 15 for qs in by_language.values()), {k: len(v) for k, v in by_language.items()}
    assert sum(not q.relevant for q in queries) >= 10
    assert all(q.rewrite for q in queries if q.language != "en")


# sha256 over every file of evals/retrieval/heldout/test/ (path, NUL, bytes, NUL, in path
# order). Changing the test split changes this: say why in the commit, and never to
# make a figure better.
# The blind batches (evals/retrieval/heldout/blind/, questions on the test split's corpus)
# are frozen the same way, each before it was first searched.
FROZEN = {
    "test": "779ce3da5b2005d4edad4f7a917ef17998a7fab698471a0912925f5d67903e34",
    "blind-001": "37d2e12ae5d7d29fca70fe91231c667cf5a1df6cda10ca1b918967d4bbf06f9b",
}


def _digest(paths, root) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_the_test_split_is_frozen():
    root = LABELLED_SETS["test"][1].parent
    assert _digest((p for p in root.rglob("*") if p.is_file()), root) == FROZEN["test"]


def test_each_blind_batch_is_frozen():
    batches = {name: queries for name, (_, queries) in LABELLED_SETS.items() if name.startswith("blind-")}
    assert batches.keys() == {name for name in FROZEN if name.startswith("blind-")}
    for name, queries in batches.items():
        assert _digest([queries], queries.parent) == FROZEN[name], name
