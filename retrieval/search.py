"""Hybrid knowledge search: pgvector + pg_trgm fused with weighted RRF, in one SQL query.

``knowledge_search(organization_id=, property_id=, query=)`` returns the best
chunks a tenant of that property may see: the organization's documents for
all properties plus that property's own, never another property's or another
organization's. Both legs carry the same scope filter.

* Vector leg: cosine distance between the query embedding and the chunk
  embeddings (``<=>``). A scope of at most ``SEARCH_EXACT_SCAN_MAX_CHUNKS``
  chunks is scanned exactly through the ``chunk_scope`` index (faster than
  HNSW behind a selective filter, and exact); a larger one walks HNSW with
  pgvector's iterative scan, so the filter cannot empty the candidate list:
  the organization's own index where it has one (``retrieval.partial_indexes``;
  the planner picks it because the query names the organization), else the
  table-wide ``chunk_embedding_hnsw``. benchmarks/retrieval_scale.py measures both.
  Only chunks embedded by the configured model (``Document.embedding_model``)
  take part: after ``EMBEDDING_BACKEND`` changes, documents not yet
  re-ingested are left to the keyword leg rather than compared across models.
* Keyword leg: the query is cut into content words (stop words of five
  languages dropped, codes such as "CE207" also split into "207"; see
  ``query_terms``). Each word is matched with pg_trgm similarity (at least
  ``SEARCH_TRGM_THRESHOLD``) against the organization's own vocabulary,
  ``retrieval_term`` (kept by triggers on the chunk table, trigram-indexed
  together with the organization), keeping its ``SEARCH_WORDS_PER_TERM``
  closest words, so "presure" finds "pressure". The chunks in scope that hold
  one of those words come from the GIN index on the ``search_words`` tsvector.
  A chunk scores, summed over the query words, the best ``similarity * idf``
  of that word's matches, where ``idf`` is BM25's inverse document frequency
  of the vocabulary word within the scope. Matching the whole message against
  a chunk instead (one ``word_similarity(query, text)`` on the trigram index)
  cost ~65 µs per chunk and drowned a rare word such as "F22" or "stopcock" in
  the message's other words; per-word matching with idf is what lets the
  keyword leg rescue typos, codes and names the embedding model does not know,
  and stays on its indexes as the corpus grows.
* Fusion: ``w_vector / (k + vector_rank) + w_keyword / (k + keyword_rank)``
  over the union of both candidate lists.

Weights, ``k``, candidate counts, ``ef_search`` and the trigram threshold are
settings (docs/retrieval.md has the numbers that chose them).
"""

from __future__ import annotations

import re
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.db import connection, transaction

from retrieval.embeddings import embedding_backend
from retrieval.glossary import english_words, with_english

Mode = Literal["hybrid", "vector", "keyword"]
MODES: tuple[Mode, ...] = ("hybrid", "vector", "keyword")
MAX_QUERY_CHARS = 2000
MAX_TERMS = 16

# Words that carry no topic. English plus the commonest short words of the
# other languages tenants write in (Polish, Romanian, Spanish, Portuguese),
# so that "de", "que" or "nie" do not match half the corpus.
_STOP_WORDS_TEXT = """
    a about above after again all also am an and any are as at be because been before being below between both
    but by can cannot could did do does doing done down during each even ever every few for from further get gets
    getting got had has have having he her here hers him his how i if in into is isn it its itself just keep keeps
    kind know like ll make me mine more most my myself need needs no nor not now of off on once only or other our
    ours out over own please re really right same say see she should so some still such than thank thanks that the
    their them then there these they thing things this those through to too under until up us use very ve want was
    way we well were what when where which while who why will with would yes yet you your yours hi hello hey ok okay
    pls plz u ur im dont doesnt cant wont isnt whats theres thats ive id youre its got gonna wanna
    al ale ao aos as cu da das de del des do dos e el ela ele em en es este esta eu la las le lo los mas mi mis
    na nao nie no nos o os para pe pela pelo por pra que se si sie sin su sus te un una uno unor unei y ya z za ze
    jak jest czy mam mi mnie co ca cum este nu sa si sunt am imi mea meu tengo tiene hay como donde cuando
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_CODE_PART = re.compile(r"\d+|[^\W\d_]+", re.UNICODE)
_ORDINAL_OR_TIME = re.compile(r"\d+(?:st|nd|rd|th|am|pm|h|min|mins|hrs?)", re.UNICODE)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


@dataclass(frozen=True)
class SearchHit:
    chunk_id: int
    document_id: int
    document_title: str
    heading_path: str
    text: str
    score: float
    vector_rank: int | None
    keyword_rank: int | None
    vector_distance: float | None = None
    keyword_score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def as_trace(self) -> dict[str, Any]:
        """A small dict for the Turn trace: where the hit came from and why it ranked."""
        return {
            "chunk_id": self.chunk_id,
            "document_id": self.document_id,
            "document": self.document_title,
            "heading": self.heading_path,
            "score": round(self.score, 5),
            "vector_rank": self.vector_rank,
            "keyword_rank": self.keyword_rank,
        }


ITERATIVE_SCANS = ("relaxed_order", "strict_order")


@dataclass(frozen=True)
class SearchParams:
    """The tunable knobs; defaults come from settings (``SearchParams.from_settings()``)."""

    rrf_k: int
    vector_weight: float
    keyword_weight: float
    vector_candidates: int
    keyword_candidates: int
    ef_search: int
    trgm_threshold: float
    words_per_term: int
    exact_scan_max_chunks: int
    keyword_scan_max_chunks: int
    keyword_max_df_share: float  # above keyword_scan_max_chunks: skip words held by more of the chunks
    iterative_scan: str  # pgvector's hnsw.iterative_scan: relaxed_order or strict_order
    max_scan_tuples: int  # pgvector's hnsw.max_scan_tuples: where an iterative scan stops

    def __post_init__(self) -> None:
        if self.iterative_scan not in ITERATIVE_SCANS:  # it goes into SET, which takes no bind parameters
            raise ValueError(f"iterative_scan must be one of {', '.join(ITERATIVE_SCANS)}, not {self.iterative_scan!r}")

    @classmethod
    def from_settings(cls, **overrides: Any) -> SearchParams:
        values: dict[str, Any] = {
            "rrf_k": settings.SEARCH_RRF_K,
            "vector_weight": settings.SEARCH_VECTOR_WEIGHT,
            "keyword_weight": settings.SEARCH_KEYWORD_WEIGHT,
            "vector_candidates": settings.SEARCH_VECTOR_CANDIDATES,
            "keyword_candidates": settings.SEARCH_KEYWORD_CANDIDATES,
            "ef_search": settings.SEARCH_HNSW_EF_SEARCH,
            "trgm_threshold": settings.SEARCH_TRGM_THRESHOLD,
            "words_per_term": settings.SEARCH_WORDS_PER_TERM,
            "exact_scan_max_chunks": settings.SEARCH_EXACT_SCAN_MAX_CHUNKS,
            "keyword_scan_max_chunks": settings.SEARCH_KEYWORD_SCAN_MAX_CHUNKS,
            "keyword_max_df_share": settings.SEARCH_KEYWORD_MAX_DF_SHARE,
            "iterative_scan": settings.SEARCH_HNSW_ITERATIVE_SCAN,
            "max_scan_tuples": settings.SEARCH_HNSW_MAX_SCAN_TUPLES,
        }
        values.update(overrides)
        return cls(**values)


def query_terms(query: str) -> list[str]:
    """The content words of ``query`` for the keyword leg, lower-cased, in order,
    without duplicates: stop words and one-letter words go, except words with a
    digit (error codes such as "F22" or "D5"). A word of another language that the
    glossary knows brings its English words after it ("kotła" -> "kotła", "boiler"),
    since the documents are in English. At most ``MAX_TERMS``: a long message (a
    voice note read back, the context retrieval's whole text) keeps its codes
    ("F22" after sixty words), then the rest in its order. (Dropping bare
    numbers before words too was tried on dev, 2026-11-30: nDCG@10 0.755 ->
    0.752 on the 15 queries it changed, so numbers keep their place.)"""
    ranked: dict[str, int] = {}
    for match in _WORD.finditer(query.casefold()):
        word = match.group(0).replace("’", "'")
        has_digit = any(ch.isdigit() for ch in word)
        if word in STOP_WORDS or (len(word) < 3 and not has_digit):
            continue
        candidates = [word]
        if has_digit:
            # "CE207" also as "207", "ea227" as "227": codes are written with and without spaces.
            candidates += [part for part in _CODE_PART.findall(word) if len(part) >= 3 or part.isdigit()]
        else:
            candidates += english_words(word)
        rank = _term_rank(word)
        for candidate in candidates:
            if candidate not in ranked and candidate not in STOP_WORDS:
                ranked[candidate] = rank
    terms = list(ranked)
    kept = set(sorted(terms, key=ranked.__getitem__)[:MAX_TERMS])  # stable: the message's order within a rank
    return [term for term in terms if term in kept]


def _term_rank(word: str) -> int:
    """0 for a code of letters and digits (and the parts it is split into), 1
    for anything else: a word, a bare number, an ordinal, a time."""
    if word.isdigit() or _ORDINAL_OR_TIME.fullmatch(word) or not any(ch.isdigit() for ch in word):
        return 1
    return 0


SEARCH_SQL = """
WITH
scope_size AS MATERIALIZED (
    -- Two ranges of chunk_scope (the organization's documents, the property's),
    -- not every property's chunks of the organization filtered.
    SELECT (SELECT count(*) FROM retrieval_chunk c
            WHERE c.organization_id = %(organization_id)s AND c.property_id IS NULL)
         + (SELECT count(*) FROM retrieval_chunk c
            WHERE c.organization_id = %(organization_id)s AND c.property_id = %(property_id)s) AS n
),
other_model_documents AS MATERIALIZED (
    -- Documents whose chunks another embedding model wrote (EMBEDDING_BACKEND
    -- switched, not yet re-ingested): their vectors are not comparable with the
    -- query's, so the vector leg skips them (the keyword leg still reads them).
    SELECT coalesce(array_agg(d.id), '{}'::bigint[]) AS ids
    FROM retrieval_document d
    WHERE d.organization_id = %(organization_id)s
      AND d.embedding_model <> %(embedding_model)s
),
vector_leg AS MATERIALIZED (
    SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
    FROM (
        -- A scope this small is scanned exactly: faster than HNSW with a
        -- selective filter, and exact. Only one branch runs. The organization's
        -- documents and the property's are read apart, each on its own range of
        -- chunk_scope: "property_id IS NULL OR property_id = X" in one scan read
        -- every property's chunks and filtered (twice the rows for a big organization).
        (SELECT s.id, s.distance
         FROM (
             SELECT c.id, c.embedding <=> %(embedding)s::vector AS distance
             FROM retrieval_chunk c
             WHERE (SELECT n FROM scope_size) <= %(exact_scan_max)s
               AND c.organization_id = %(organization_id)s AND c.property_id IS NULL
               AND c.embedding IS NOT NULL
               AND c.document_id <> ALL ((SELECT ids FROM other_model_documents)::bigint[])
             UNION ALL
             SELECT c.id, c.embedding <=> %(embedding)s::vector AS distance
             FROM retrieval_chunk c
             WHERE (SELECT n FROM scope_size) <= %(exact_scan_max)s
               AND c.organization_id = %(organization_id)s AND c.property_id = %(property_id)s
               AND c.embedding IS NOT NULL
               AND c.document_id <> ALL ((SELECT ids FROM other_model_documents)::bigint[])
         ) s
         ORDER BY s.distance
         LIMIT %(vector_candidates)s)
        UNION ALL
        -- A large scope walks the HNSW index (iterative scan keeps filling
        -- the list when the filter rejects most of what it finds).
        (SELECT c.id, c.embedding <=> %(embedding)s::vector AS distance
         FROM retrieval_chunk c
         WHERE (SELECT n FROM scope_size) > %(exact_scan_max)s
           AND c.organization_id = %(organization_id)s
           AND (c.property_id IS NULL OR c.property_id = %(property_id)s)
           AND c.embedding IS NOT NULL
           AND c.document_id <> ALL ((SELECT ids FROM other_model_documents)::bigint[])
         ORDER BY c.embedding <=> %(embedding)s::vector
         LIMIT %(vector_candidates)s)
    ) nearest
),
query_terms AS (
    SELECT DISTINCT term FROM unnest(%(terms)s::text[]) AS t(term)
),
term_words AS MATERIALIZED (
    -- Each query term (maybe misspelt) -> the closest words of this organization's
    -- vocabulary (one GIN index, term_org_word_trgm, answers both conditions).
    SELECT t.term, w.word, similarity(t.term, w.word) AS similarity, plainto_tsquery('simple', w.word) AS words
    FROM query_terms t
    CROSS JOIN LATERAL (
        SELECT v.word
        FROM retrieval_term v
        WHERE v.organization_id = %(organization_id)s::bigint  -- int8 = int8: btree_gin has no cross-type operators
          AND v.word %% t.term
          -- A large scope skips the words held by more of its organization's
          -- chunks than max_df_share of the scope's size: each costs hundreds to
          -- thousands of rows from the word index and ranks little (its idf is
          -- low). A small scope keeps every word.
          AND ((SELECT n FROM scope_size) <= %(keyword_scan_max)s
               OR v.chunks <= %(max_df_share)s * (SELECT n FROM scope_size))
        ORDER BY similarity(t.term, v.word) DESC, v.word
        LIMIT %(words_per_term)s
    ) w
),
scope_chunks AS MATERIALIZED (
    -- A small scope's chunks, read through chunk_scope (empty for a large scope).
    -- Materialized so that the word index, which answers for every
    -- organization, is not used to find them.
    SELECT c.id, c.search_words
    FROM retrieval_chunk c
    WHERE (SELECT n FROM scope_size) <= %(keyword_scan_max)s
      AND c.organization_id = %(organization_id)s::bigint
      AND (c.property_id IS NULL OR c.property_id = %(property_id)s)
),
scope_words AS MATERIALIZED (
    -- Those that hold any of the words: each chunk matched once against all of them.
    SELECT c.id, c.search_words
    FROM scope_chunks c
    WHERE c.search_words @@ (SELECT to_tsquery('simple', string_agg(quote_literal(word), ' | ')) FROM term_words)
),
keyword_matches AS MATERIALIZED (
    -- The chunks in scope that hold one of those words. Only one branch runs:
    -- a small scope matches the words on its own chunks; a large one asks the
    -- word index, which answers for every organization, then keeps its scope.
    (SELECT c.id, tw.term, tw.word, tw.similarity
     FROM term_words tw
     JOIN scope_words c ON c.search_words @@ tw.words)
    UNION ALL
    (SELECT c.id, tw.term, tw.word, tw.similarity
     FROM term_words tw
     JOIN retrieval_chunk c ON c.search_words @@ tw.words
     WHERE (SELECT n FROM scope_size) > %(keyword_scan_max)s
       AND c.organization_id = %(organization_id)s::bigint
       AND (c.property_id IS NULL OR c.property_id = %(property_id)s))
),
word_df AS (
    -- The chunks in scope holding each word, each once: two query terms close
    -- to the same word ("leak", "leaking") must not count its chunks twice.
    SELECT word, count(DISTINCT id) AS df FROM keyword_matches GROUP BY word
),
keyword_leg AS (
    -- BM25-like: per term the best (similarity x idf) of its words, summed over terms.
    -- float8, not numeric: numeric ln() over thousands of matches cost a third of the query.
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT id, sum(best) AS score
        FROM (
            SELECT m.id, m.term, max(m.similarity * ln(1 + (s.n - d.df + 0.5::float8) / (d.df + 0.5::float8))) AS best
            FROM keyword_matches m
            JOIN word_df d USING (word)
            CROSS JOIN scope_size s
            GROUP BY m.id, m.term
        ) per_term
        GROUP BY id
    ) scored
    ORDER BY score DESC, id
    LIMIT %(keyword_candidates)s
),
fused AS (
    SELECT coalesce(v.id, k.id) AS id,
           v.rank AS vector_rank, k.rank AS keyword_rank, v.distance, k.score AS keyword_score,
           coalesce(%(vector_weight)s / (%(rrf_k)s + v.rank), 0)
             + coalesce(%(keyword_weight)s / (%(rrf_k)s + k.rank), 0) AS score
    FROM vector_leg v
    FULL OUTER JOIN keyword_leg k ON k.id = v.id
)
SELECT f.id, c.document_id, d.title, c.heading_path, c.text, f.score,
       f.vector_rank, f.keyword_rank, f.distance, f.keyword_score
FROM fused f
JOIN retrieval_chunk c ON c.id = f.id
JOIN retrieval_document d ON d.id = c.document_id
ORDER BY f.score DESC, f.vector_rank NULLS LAST, f.keyword_rank NULLS LAST, f.id
LIMIT %(limit)s
"""


def query_embedding(query: str) -> list[float]:
    """The vector of a tenant's query as ``knowledge_search`` reads it (stripped,
    at most ``MAX_QUERY_CHARS``): their words with the glossary's English words
    added (``retrieval.glossary.with_english``)."""
    return embedding_backend().embed_query(with_english(query.strip()[:MAX_QUERY_CHARS]))


def search_sql_params(
    *,
    organization_id: int,
    property_id: int | None,
    query: str,
    limit: int,
    mode: str,
    params: SearchParams,
    embedding: list[float] | None,
) -> dict[str, Any]:
    use_vector = mode in {"hybrid", "vector"}
    use_keyword = mode in {"hybrid", "keyword"}
    return {
        "organization_id": organization_id,
        "property_id": property_id,
        "embedding_model": embedding_backend().name,
        "embedding": _vector_literal(embedding) if use_vector and embedding is not None else None,
        "terms": query_terms(query) if use_keyword else [],
        "vector_candidates": max(params.vector_candidates, limit) if use_vector else 0,
        "keyword_candidates": max(params.keyword_candidates, limit) if use_keyword else 0,
        "vector_weight": float(params.vector_weight if mode == "hybrid" else 1.0),
        "keyword_weight": float(params.keyword_weight if mode == "hybrid" else 1.0),
        "rrf_k": int(params.rrf_k),
        "words_per_term": int(params.words_per_term),
        "exact_scan_max": int(params.exact_scan_max_chunks),
        "keyword_scan_max": int(params.keyword_scan_max_chunks),
        "max_df_share": float(params.keyword_max_df_share),
        "limit": limit,
    }


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def _search_rows(sql: str, sql_params: dict, params: SearchParams) -> list[tuple]:
    """Run ``sql`` with the index settings of ``params`` in one round trip:
    the ``SET LOCAL``s and the query go as one string, which PostgreSQL runs
    as one transaction, so the settings last for this query only and no BEGIN
    or COMMIT is sent. Inside a caller's transaction it runs in a savepoint, so
    a failed search does not abort that transaction (the settings then last
    until it ends)."""
    # Values are validated numbers; SET cannot take bind parameters.
    settings_sql = (
        f"SET LOCAL hnsw.ef_search = {int(params.ef_search)}; "
        f"SET LOCAL hnsw.iterative_scan = {params.iterative_scan}; "
        f"SET LOCAL hnsw.max_scan_tuples = {int(params.max_scan_tuples)}; "
        f"SET LOCAL pg_trgm.similarity_threshold = {float(params.trgm_threshold)}; "
    )
    with transaction.atomic() if connection.in_atomic_block else nullcontext(), connection.cursor() as cursor:
        cursor.execute(settings_sql + sql, sql_params)
        while cursor.description is None and cursor.nextset():  # past the SETs' empty results
            pass
        return cursor.fetchall()


def knowledge_search(
    *,
    organization_id: int,
    property_id: int | None,
    query: str,
    limit: int = 5,
    mode: Mode = "hybrid",
    params: SearchParams | None = None,
    embedding: list[float] | None = None,
    timings: dict[str, float] | None = None,
) -> list[SearchHit]:
    """The ``limit`` best chunks for ``query`` that a tenant of ``property_id``
    (None: organization-wide documents only) in ``organization_id`` may see.

    ``embedding`` lets a caller pass a query vector it already has (evaluation);
    ``timings``, when given, receives ``embed_ms`` and ``sql_ms``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if not isinstance(limit, int) or not 1 <= limit <= 50:
        raise ValueError("limit must be an integer between 1 and 50")
    query = (query or "").strip()
    if not query:
        return []
    query = query[:MAX_QUERY_CHARS]
    params = params or SearchParams.from_settings()
    if params.ef_search < params.vector_candidates:
        params = SearchParams(**{**params.__dict__, "ef_search": params.vector_candidates})

    started = time.perf_counter()
    if mode != "keyword" and embedding is None:
        embedding = query_embedding(query)
    embedded = time.perf_counter()
    sql_params = search_sql_params(
        organization_id=organization_id,
        property_id=property_id,
        query=query,
        limit=limit,
        mode=mode,
        params=params,
        embedding=embedding,
    )
    if mode == "keyword" and not sql_params["terms"]:
        return []
    rows = _search_rows(SEARCH_SQL, sql_params, params)
    if timings is not None:
        timings["embed_ms"] = (embedded - started) * 1000
        timings["sql_ms"] = (time.perf_counter() - embedded) * 1000
    return [
        SearchHit(
            chunk_id=row[0],
            document_id=row[1],
            document_title=row[2],
            heading_path=row[3],
            text=row[4],
            score=float(row[5]),
            vector_rank=row[6],
            keyword_rank=row[7],
            vector_distance=None if row[8] is None else float(row[8]),
            keyword_score=None if row[9] is None else float(row[9]),
        )
        for row in rows
    ]


def answer_similarity(hits: list[SearchHit]) -> float | None:
    """How close the best passage comes to the question: the highest cosine
    similarity among the hits the vector leg ranked (None when it ranked none).
    Where the answerability head does not apply (``retrieval.answerability``),
    below ``SEARCH_ANSWER_MIN_SIMILARITY`` no passage is taken to answer."""
    similarities = [1.0 - hit.vector_distance for hit in hits if hit.vector_distance is not None]
    return max(similarities) if similarities else None


def search_explain(
    *,
    organization_id: int,
    property_id: int | None,
    query: str,
    mode: Mode = "hybrid",
    limit: int = 5,
    params: SearchParams | None = None,
    embedding: list[float] | None = None,
    analyze: bool = True,
) -> str:
    """EXPLAIN (ANALYZE) of the search query, to show which index each leg uses."""
    params = params or SearchParams.from_settings()
    if mode != "keyword" and embedding is None:
        embedding = query_embedding(query)
    sql_params = search_sql_params(
        organization_id=organization_id,
        property_id=property_id,
        query=query,
        limit=limit,
        mode=mode,
        params=params,
        embedding=embedding,
    )
    prefix = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " if analyze else "EXPLAIN (COSTS OFF) "
    return "\n".join(row[0] for row in _search_rows(prefix + SEARCH_SQL, sql_params, params))
