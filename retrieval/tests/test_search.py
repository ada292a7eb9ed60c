import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from properties.tests.factories import OrganizationFactory, PropertyFactory
from retrieval.search import SearchParams, knowledge_search, query_terms, search_explain

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


@pytest.fixture(params=["exact", "hnsw"])
def vector_path(request, db):
    """Both plans of each leg: a small scope's (the exact scan; the words
    matched on the scope's own chunks) and a large scope's (HNSW above
    SEARCH_EXACT_SCAN_MAX_CHUNKS; the word index above
    SEARCH_KEYWORD_SCAN_MAX_CHUNKS). Sequential scans are switched off for the
    test's transaction so the planner really walks the HNSW index on these few
    rows instead of sorting them (the test below checks it does)."""
    if request.param == "exact":
        return SearchParams.from_settings()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
    # Every word kept: on five chunks any word is "common" (that rule has its own test).
    return SearchParams.from_settings(exact_scan_max_chunks=0, keyword_scan_max_chunks=0, keyword_max_df_share=1.0)


def test_the_forced_hnsw_path_walks_the_hnsw_index(scoped, vector_path):
    plan = search_explain(
        organization_id=scoped["alice"].pk,
        property_id=scoped["flat"].pk,
        query="boiler pressure",
        mode="vector",
        params=vector_path,
    )
    executed = [line.strip()[:80] for line in plan.splitlines() if "never executed" not in line]
    uses_hnsw = any("chunk_embedding_hnsw" in line for line in executed)
    assert uses_hnsw == (vector_path.exact_scan_max_chunks == 0), executed


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_tenant_sees_shared_documents_and_their_own_property_only(scoped, mode, vector_path):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk,
        property_id=scoped["flat"].pk,
        query="ZQ47 boiler water pressure",
        mode=mode,
        limit=10,
        params=vector_path,
    )
    titles = {h.document_title for h in hits}
    assert "Flat boiler" in titles
    assert titles <= {"Flat boiler", "Living here"}


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_without_a_property_only_organization_wide_documents_are_searched(scoped, mode, vector_path):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk,
        property_id=None,
        query="ZQ47 boiler stopcock",
        mode=mode,
        limit=10,
        params=vector_path,
    )
    assert hits
    assert {h.document_title for h in hits} == {"Living here"}


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_another_organizations_property_id_does_not_open_its_documents(scoped, mode, vector_path):
    bob_flat = scoped["bob"].properties.get()
    hits = knowledge_search(
        organization_id=scoped["alice"].pk,
        property_id=bob_flat.pk,
        query="ZQ47 boiler stopcock bathroom floor",
        mode=mode,
        limit=10,
        params=vector_path,
    )
    assert {h.document_title for h in hits} == {"Living here"}


@pytest.mark.parametrize("query", ["ZQ47 boiler water pressure", "stopcok", "kitchen sink", "zzzz"])
def test_both_keyword_plans_find_the_same_chunks_with_the_same_scores(scoped, query):
    """A small scope's words are matched on its own chunks, a large one's through
    the word index: the plan is chosen by size, the answer must not depend on it."""

    def search(keyword_scan_max_chunks: int) -> list[tuple[int, float]]:
        params = SearchParams.from_settings(keyword_scan_max_chunks=keyword_scan_max_chunks, keyword_max_df_share=1.0)
        hits = knowledge_search(
            organization_id=scoped["alice"].pk,
            property_id=scoped["flat"].pk,
            query=query,
            mode="keyword",
            limit=10,
            params=params,
        )
        return [(h.chunk_id, round(h.keyword_score or 0, 9)) for h in hits]

    assert search(keyword_scan_max_chunks=10**6) == search(keyword_scan_max_chunks=0)
    if query != "zzzz":
        assert search(keyword_scan_max_chunks=10**6)


def test_a_large_scope_skips_the_words_most_of_its_chunks_hold(scoped):
    """Above SEARCH_KEYWORD_SCAN_MAX_CHUNKS a word that more of the organization's
    chunks hold than the share of the scope's size is not looked up. The flat's
    tenant sees 4 chunks; "boiler" is in 2 of alice's (the flat's and the
    house's), "stopcock" in 1: at a share of 0.25 the first goes, the second
    stays. A small scope keeps every word."""

    def keyword_headings(query: str, **overrides) -> set[str]:
        params = SearchParams.from_settings(keyword_scan_max_chunks=0, **overrides)
        hits = knowledge_search(
            organization_id=scoped["alice"].pk,
            property_id=scoped["flat"].pk,
            query=query,
            mode="keyword",
            limit=10,
            params=params,
        )
        return {h.heading_path for h in hits}

    assert "Boiler fault codes" in keyword_headings("boiler", keyword_max_df_share=1.0)
    assert keyword_headings("boiler", keyword_max_df_share=0.25) == set()
    assert keyword_headings("stopcock", keyword_max_df_share=0.25) == {"Stopcock"}
    small = SearchParams.from_settings(keyword_max_df_share=0.25)  # the scope is below the scan size
    hits = knowledge_search(
        organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query="boiler", mode="keyword", params=small
    )
    assert "Boiler fault codes" in {h.heading_path for h in hits}


def test_a_misspelt_word_is_found_by_the_keyword_leg(scoped):
    hits = knowledge_search(
        organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query="stopcok", mode="keyword"
    )
    assert hits[0].heading_path == "Stopcock"
    assert hits[0].keyword_rank == 1 and hits[0].vector_rank is None


def test_two_query_words_close_to_one_word_do_not_count_its_chunks_twice(scoped):
    """ "stopcock stopcok": both terms find the word "stopcock", in 1 of the
    flat's 4 chunks. Its idf is that of 1 chunk, as for "stopcock" alone, so
    the score is the sum of the two terms' similarities times that idf."""

    def score(query: str) -> float:
        [hit] = knowledge_search(
            organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query=query, mode="keyword", limit=1
        )
        return hit.keyword_score or 0.0

    with connection.cursor() as cursor:
        cursor.execute("SELECT similarity('stopcok', 'stopcock')")
        [(typo,)] = cursor.fetchall()
    assert score("stopcock stopcok") == pytest.approx(score("stopcock") * (1 + typo))


def test_another_landlords_near_duplicate_words_do_not_crowd_out_this_organizations_match(scoped, ingest):
    # Bob's documents hold words closer to the typo "stopcok" than Alice's "stopcock"
    # (more than SEARCH_WORDS_PER_TERM of them). A vocabulary shared by all
    # organizations gave those words every slot, and Alice's tenant found nothing.
    ingest(
        organization=scoped["bob"],
        content="## Typos\n\nstopcok stopcoks stopcoke stopcoki stopcokk, all over Bob's notes.\n",
        title="Bob typos",
        source_name="typos.md",
    )
    hits = knowledge_search(
        organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query="stopcok", mode="keyword"
    )
    assert hits and hits[0].heading_path == "Stopcock"
    assert {h.document_title for h in hits} <= {"Living here", "Flat boiler"}


def test_the_vector_leg_compares_only_vectors_of_the_configured_model(scoped, ingest, settings):
    alice, flat = scoped["alice"], scoped["flat"]
    # Switch the embedding backend; only one document is re-ingested so far.
    settings.EMBEDDING_BACKEND = "minilm"
    ingest(organization=alice, content=FLAT_ONLY, title="Flat boiler", source_name="flat.md", property=flat)
    query = "boiler water pressure low"
    vector = knowledge_search(organization_id=alice.pk, property_id=flat.pk, query=query, mode="vector", limit=10)
    assert {h.document_title for h in vector} == {"Flat boiler"}
    # The keyword leg still reads the documents waiting for re-ingest.
    hybrid = knowledge_search(
        organization_id=alice.pk, property_id=flat.pk, query="thermostat stopcock", mode="hybrid", limit=10
    )
    from_old_model = [h for h in hybrid if h.document_title == "Living here"]
    assert from_old_model and all(h.vector_rank is None and h.keyword_rank for h in from_old_model)
    # Back on the old model, the re-ingested document is the one left out.
    settings.EMBEDDING_BACKEND = "e5-multilingual"
    vector = knowledge_search(organization_id=alice.pk, property_id=flat.pk, query=query, mode="vector", limit=10)
    assert {h.document_title for h in vector} == {"Living here"}


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


def test_a_long_message_keeps_its_code():
    """The keyword leg reads at most MAX_TERMS words: a code at the end of a long
    message (a voice note read back) is what it is there for, with its parts.
    An ordinal or a time is not a code."""
    from retrieval.search import MAX_TERMS

    words = " ".join(f"word{letter}" for letter in "abcdefghijklmnop")  # 16 words with no digit
    terms = query_terms(f"on the 2nd since 8am {words} and now the display shows F22")
    assert len(terms) == MAX_TERMS
    assert terms[-2:] == ["f22", "22"]  # the code and its digits, which match "F 22" in a document
    assert terms[:5] == ["2nd", "2", "since", "8am", "8"]  # the rest in the message's order


def test_a_search_is_one_statement_with_its_index_settings(scoped):
    """The SET LOCALs travel with the query. (Inside a caller's transaction, as
    a test runs, the search takes a savepoint so a failure cannot abort it.)"""
    with CaptureQueriesContext(connection) as captured:
        knowledge_search(organization_id=scoped["alice"].pk, property_id=scoped["flat"].pk, query="boiler pressure")
    statements = [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 1 and statements[0].lstrip().startswith("SET LOCAL hnsw.ef_search")


def test_a_failed_search_leaves_the_callers_transaction_usable(scoped, monkeypatch):
    import retrieval.search as search

    monkeypatch.setattr(search, "SEARCH_SQL", "SELECT no_such_column FROM retrieval_chunk")
    with pytest.raises(Exception, match="no_such_column"):
        knowledge_search(organization_id=scoped["alice"].pk, property_id=None, query="boiler", mode="keyword")
    with connection.cursor() as cursor:  # the test's transaction is not aborted
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_chunk_vectors_and_words_are_stored_in_their_rows(db):
    """Not in the TOAST table (pgvector's EXTERNAL, a tsvector's EXTENDED), where
    an exact scan and the keyword leg read each value through another index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attstorage FROM pg_attribute "
            "WHERE attrelid = 'retrieval_chunk'::regclass AND attname IN ('embedding', 'search_words')"
        )
        assert dict(cursor.fetchall()) == {"embedding": "m", "search_words": "m"}
