import pytest

from retrieval import glossary
from retrieval.glossary import english_words, fold
from retrieval.search import knowledge_search, query_terms


def test_words_are_compared_without_case_or_diacritics():
    assert fold("Kocioł") == "kociol"
    assert fold("centrală") == "centrala"
    assert fold("CALEFACCIÓN") == "calefaccion"


def test_a_foreign_word_brings_its_english_words_whatever_its_accents():
    assert "boiler" in english_words("kotła")
    assert english_words("kotła") == english_words("kotla")
    assert english_words("thermostat") == ()


def test_query_terms_keep_the_tenants_words_and_add_the_english_ones():
    terms = query_terms("pleśń w łazience")
    assert terms[0] == "pleśń"
    assert "mould" in terms
    assert "bathroom" in terms


def test_a_code_is_not_looked_up():
    # "e119" is a fault code: split into its parts, never translated.
    assert query_terms("e119") == ["e119", "119"]


def test_a_malformed_line_is_refused_with_its_place(tmp_path, monkeypatch):
    (tmp_path / "xx.tsv").write_text("kocioł\tboiler\nno tab here\n", encoding="utf-8")
    monkeypatch.setattr(glossary, "GLOSSARY_DIR", tmp_path)
    glossary.glossary.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"xx.tsv:2"):
            glossary.glossary()
    finally:
        glossary.glossary.cache_clear()


def test_a_polish_question_finds_the_english_passage_through_the_keyword_leg(alice, ingest):
    ingest(
        organization=alice,
        content="# Living here\n\n## Mould\n\nWipe mould off with a damp cloth and open the window.\n\n"
        "## Bins\n\nBlack bins are general waste.\n",
        title="Living here",
    )
    hits = knowledge_search(organization_id=alice.pk, property_id=None, query="pleśń na ścianie", mode="keyword")
    assert hits and hits[0].heading_path == "Mould"
