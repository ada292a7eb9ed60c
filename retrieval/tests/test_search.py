import pytest
from django.db import connection

from properties.tests.factories import OrganizationFactory, PropertyFactory
from retrieval.search import knowledge_search, query_terms

SHARED = """# Living here

## Stopcock

The stopcock is under the kitchen sink. Turn it clockwise to turn the water off.

## Heating

Set the thermostat to 20 degrees. Bleed radiators that are cold at the top.

## Bins

Black bins are general waste, green bins are recycling.
"""
FLAT_ONLY = """## Boiler fault codes

ZQ47 means the flat's boiler water pressure is low: top it up to 1.5 bar with the filling loop.
"""
HOUSE_ONLY = """## Boiler fault codes

ZQ47 on the house boiler means the condensate pipe is frozen: pour warm water on it.
"""


@pytest.fixture
def scoped(alice, ingest):
    flat = PropertyFactory(organization=alice, code="FLAT-1")
    house = PropertyFactory(organization=alice, code="HOUSE-7")
    bob = OrganizationFactory(slug="bob")
    bob_flat = PropertyFactory(organization=bob, code="FLAT-1")
    ingest(organization=alice, content=SHARED, title="Living here", source_name="living.md")
    ingest(organization=alice, content=FLAT_ONLY, title="Flat boiler", source_name="flat.md", property=flat)
    ingest(organization=alice, content=HOUSE_ONLY, title="House boiler", source_name="house.md", property=house)
    ingest(
        organization=bob,
        content=SHARED.replace("kitchen sink", "bathroom floor"),
        title="Bob rules",
        source_name="bob.md",
    )
    ingest(organization=bob, content=FLAT_ONLY, title="Bob flat boiler", source_name="bobflat.md", property=bob_flat)
    return {"alice": alice, "flat": flat, "house": house, "bob": bob}


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_tenant_sees_shared_documents_and_their_own_property_only(scoped, mode):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk,
        property_id=scoped["flat"].pk,
        query="ZQ47 boiler water pressure",
        mode=mode,
        limit=10,
    )
    titles = {h.document_title for h in hits}
    assert "Flat boiler" in titles
    assert titles <= {"Flat boiler", "Living here"}


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_without_a_property_only_organization_wide_documents_are_searched(scoped, mode):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk, property_id=None, query="ZQ47 boiler stopcock", mode=mode, limit=10
    )
    assert hits
    assert {h.document_title for h in hits} == {"Living here"}


def test_another_organizations_property_id_does_not_open_its_documents(scoped):
    bob_flat = scoped["bob"].properties.get()
    hits = knowledge_search(organization_id=scoped["alice"].pk, property_id=bob_flat.pk, query="ZQ47 boiler", limit=10)
    assert {h.document_title for h in hits} == {"Living here"}


def test_a_misspelt_word_is_found_by_the_keyword_leg(scoped):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query="stopcok", mode="keyword"
    )
    assert hits[0].heading_path == "Stopcock"
    assert hits[0].keyword_rank == 1 and hits[0].vector_rank is None


def test_an_exact_code_the_model_does_not_know_ranks_first_in_hybrid(scoped):
    hits = knowledge_search(organization_id=scoped["alice"].pk, property_id=scoped["house"].pk, query="ZQ47")
    assert hits[0].document_title == "House boiler"
    assert hits[0].keyword_rank == 1
    assert hits[0].vector_rank is not None
    assert hits[0].score > hits[1].score


def test_hits_carry_both_ranks_and_a_small_trace(scoped):
    hit = knowledge_search(
        organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query="where is the stopcock"
    )[0]
    assert hit.heading_path == "Stopcock"
    assert "under the kitchen sink" in hit.text
    trace = hit.as_trace()
    assert set(trace) == {"chunk_id", "document_id", "document", "heading", "score", "vector_rank", "keyword_rank"}
    assert trace["vector_rank"] == 1 and trace["keyword_rank"] == 1


def test_query_text_is_a_bound_parameter(scoped):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk,
        property_id=None,
        query="'); DROP TABLE retrieval_chunk; -- stopcock %s %(x)s",
    )
    assert hits
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM retrieval_chunk")
        assert cursor.fetchone()[0] > 0


def test_bad_arguments_and_empty_queries(scoped):
    org = scoped["alice"].pk
    assert knowledge_search(organization_id=org, property_id=None, query="   ") == []
    assert knowledge_search(organization_id=org, property_id=None, query="the and of", mode="keyword") == []
    with pytest.raises(ValueError, match="mode"):
        knowledge_search(organization_id=org, property_id=None, query="x", mode="fuzzy")
    with pytest.raises(ValueError, match="limit"):
        knowledge_search(organization_id=org, property_id=None, query="x", limit=0)


def test_query_terms_drop_stop_words_and_split_codes():
    assert query_terms("How do I fix the boilr? It says CE207!") == ["fix", "boilr", "says", "ce207", "207"]
    assert query_terms("F22 F22 f22") == ["f22", "22"]
