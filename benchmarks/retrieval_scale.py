"""Search latency as the corpus grows, with the plans that show each leg on its index.

    python benchmarks/retrieval_scale.py [--sizes 1000,10000,100000] [--pool 1200] [--queries 30]

Runs in a throwaway database on the development PostgreSQL (created and
dropped here). For each corpus size it

1. builds ``size`` chunks spread over many organizations (about 500 chunks
   each, 10 properties each, 40% of every organization's chunks shared by all
   its properties) plus one big organization holding a tenth of the corpus;
2. times the index builds (HNSW on the embeddings, GIN on the chunk words, the
   chunk text's trigrams and the per-organization trigram vocabulary, which the
   chunk table's trigger fills during the load);
3. runs English questions from the labelled set in each mode (hybrid, vector,
   keyword) and scope (a tenant of a typical organization, that organization's
   documents only, a tenant of the big organization), warm, and prints p50/p95
   of the SQL alone (the query embedding is measured separately);
4. prints the latency of the vector leg forced onto HNSW and its recall@20
   against an exact scan (the big organization has its own HNSW index, as
   ``retrieval.partial_indexes`` keeps them), and
   the EXPLAIN of one hybrid query per scope (which index each leg uses).

Texts are realistic: the chunks of the demo corpus and recombinations of their
sentences (a pool of ``--pool`` texts embedded with the real model); each
chunk takes a pool text and that text's embedding plus small noise, so the
vectors are clustered the way real documents are, without embedding 100 000
texts on a laptop.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import json  # noqa: E402

from django.db import connection  # noqa: E402

from evals.retrieval_eval import LABELLED_CORPUS, LABELLED_QUERIES  # noqa: E402
from properties.models import Organization, Property  # noqa: E402
from retrieval.documents import manifest_read  # noqa: E402
from retrieval.embeddings import embedding_backend  # noqa: E402
from retrieval.models import Chunk, Document  # noqa: E402
from retrieval.partial_indexes import partial_indexes_sync  # noqa: E402
from retrieval.search import Mode, SearchParams, knowledge_search, search_explain  # noqa: E402
from retrieval.services import document_chunks_build  # noqa: E402

CHUNKS_PER_ORG = 500
PROPERTIES_PER_ORG = 10
INDEXES = {
    "chunk_embedding_hnsw": "CREATE INDEX chunk_embedding_hnsw ON retrieval_chunk "
    "USING hnsw (embedding vector_cosine_ops) "
    "WITH (m = 16, ef_construction = 64)",
    "chunk_search_words": "CREATE INDEX chunk_search_words ON retrieval_chunk USING gin (search_words)",
    "chunk_search_text_trgm": "CREATE INDEX chunk_search_text_trgm ON retrieval_chunk "
    "USING gin (search_text gin_trgm_ops)",
    "term_org_word_trgm": "CREATE INDEX term_org_word_trgm ON retrieval_term "
    "USING gin (organization_id int8_ops, word gin_trgm_ops)",
}


def pool_texts(size: int, rng: random.Random) -> list[tuple[str, str]]:
    """(heading, search text) pairs: the demo chunks, then sentence recombinations of them."""
    base: list[tuple[str, str, str]] = []  # title, heading, text
    for name, entry in manifest_read(LABELLED_CORPUS).items():
        text = (LABELLED_CORPUS / name).read_text()
        for draft in document_chunks_build(title=entry["title"], text=text):
            base.append((entry["title"], draft.heading_path, draft.text))
    sentences = [s for _, _, t in base for s in re.split(r"(?<=[.!?])\s+", t) if len(s) > 30]
    out = [(h, f"{title}\n{h}\n\n{t}") for title, h, t in base]
    while len(out) < size:
        title, heading, text = rng.choice(base)
        mixed = rng.sample(sentences, k=rng.randint(2, 5))
        body = " ".join(re.split(r"(?<=[.!?])\s+", text)[:2] + mixed)
        out.append((heading, f"{title}\n{heading}\n\n{body}"))
    return out[:size]


def build(size: int, pool: list[tuple[str, str]], vectors: list[list[float]]) -> dict:
    """Fill the empty database with ``size`` chunks; returns the organizations and properties to query."""
    with connection.cursor() as cursor:
        for name in INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
        # TRUNCATE fires no triggers: the vocabulary goes with the chunks here, and the
        # INSERT below fills it through the chunk table's trigger (migration 0004).
        cursor.execute("TRUNCATE retrieval_chunk, retrieval_document, retrieval_term CASCADE")
    Organization.objects.filter(slug__startswith="bench-").delete()
    big_chunks = size // 10
    org_count = max(1, (size - big_chunks) // CHUNKS_PER_ORG)
    orgs = Organization.objects.bulk_create(
        Organization(name=f"Bench {i}", slug=f"bench-{i}") for i in range(org_count + 1)
    )
    properties = Property.objects.bulk_create(
        Property(organization=o, code=f"P{j}", address=f"{j} Bench Street")
        for o in orgs
        for j in range(PROPERTIES_PER_ORG)
    )
    by_org: dict[int, list[Property]] = {}
    for p in properties:
        by_org.setdefault(p.organization_id, []).append(p)
    documents = []
    model = embedding_backend().name  # the vector leg reads only chunks of the configured model
    for o in orgs:
        documents += [
            Document(
                organization=o,
                title=f"Guide {k}",
                source=f"g{k}.md",
                checksum="x",
                status="ready",
                embedding_model=model,
            )
            for k in range(4)
        ]
        documents += [
            Document(
                organization=o,
                property=p,
                title=f"{p.code} guide {k}",
                source=f"{p.code}-{k}.md",
                checksum="x",
                status="ready",
                embedding_model=model,
            )
            for p in by_org[o.pk]
            for k in range(2)
        ]
    documents = Document.objects.bulk_create(documents)
    docs_of: dict[int, list[Document]] = {}
    for d in documents:
        docs_of.setdefault(d.organization_id, []).append(d)

    rng = random.Random(size)
    rows = []
    big = orgs[-1]
    plan = [(o, (size - big_chunks) // org_count) for o in orgs[:-1]] + [(big, big_chunks)]
    for org, count in plan:
        shared = [d for d in docs_of[org.pk] if d.property_id is None]
        own = [d for d in docs_of[org.pk] if d.property_id is not None]
        positions: dict[int, int] = {}
        for _ in range(count):
            doc = rng.choice(shared) if rng.random() < 0.4 else rng.choice(own)
            positions[doc.pk] = positions.get(doc.pk, -1) + 1
            rows.append((doc.pk, org.pk, doc.property_id, positions[doc.pk], rng.randrange(len(pool))))
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE bench_pool (idx int PRIMARY KEY, heading text, search_text text, embedding vector)"
        )
        with cursor.copy("COPY bench_pool FROM STDIN") as copy:
            for idx, ((heading, text), vector) in enumerate(zip(pool, vectors, strict=True)):
                copy.write_row((idx, heading, text, "[" + ",".join(f"{x:.5f}" for x in vector) + "]"))
        cursor.execute(
            "CREATE TEMP TABLE bench_rows "
            "(document_id bigint, organization_id bigint, property_id bigint, position int, pool int)"
        )
        with cursor.copy("COPY bench_rows FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        started = time.monotonic()
        # Each chunk: its pool text and the pool vector plus a little noise (cosine ~0.97 to the original).
        cursor.execute(
            """
            INSERT INTO retrieval_chunk
                (document_id, organization_id, property_id, position, heading_path, text, search_text, embedding)
            SELECT r.document_id, r.organization_id, r.property_id, r.position, p.heading,
                   p.search_text, p.search_text,
                   (SELECT array_agg(x + (random() - 0.5) * 0.02) FROM unnest(p.embedding::real[]) AS x)::vector
            FROM bench_rows r JOIN bench_pool p ON p.idx = r.pool
            """
        )
        load_seconds = time.monotonic() - started
        cursor.execute("DROP TABLE bench_pool, bench_rows")
        cursor.execute("SET maintenance_work_mem = '1GB'")
        build_seconds = {}
        for name, sql in INDEXES.items():
            started = time.monotonic()
            cursor.execute(sql)
            build_seconds[name] = time.monotonic() - started
        # Steady state: autovacuum has set the visibility map, so counts can be index-only.
        cursor.execute("VACUUM ANALYZE retrieval_chunk")
        cursor.execute("VACUUM ANALYZE retrieval_term")
        cursor.execute("VACUUM ANALYZE retrieval_document")
    started = time.monotonic()
    partial = partial_indexes_sync()  # as beat keeps them: the big organization's own HNSW index
    build_seconds[f"{len(partial.built)} organization's own HNSW"] = time.monotonic() - started
    typical = orgs[0]
    return {
        "load_seconds": load_seconds,
        "build_seconds": build_seconds,
        "org_count": len(orgs),
        "scopes": {
            "tenant (org + property)": (typical.pk, by_org[typical.pk][0].pk),
            "org-wide documents only": (typical.pk, None),
            "tenant of the big org": (big.pk, by_org[big.pk][0].pk),
        },
        "scope_sizes": {
            "typical org": Chunk.objects.filter(organization=typical).count(),
            "big org": Chunk.objects.filter(organization=big).count(),
        },
    }


def percentile(values: list[float], pct: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(pct / 100 * len(values) + 0.5) - 1))]


EXACT_SQL = """
SELECT id FROM retrieval_chunk
WHERE organization_id = %s AND (property_id IS NULL OR property_id = %s)
ORDER BY (embedding <=> %s::vector) + 0 LIMIT 20
"""


CANDIDATE_INDEX = (
    "CREATE INDEX bench_chunk_org_words ON retrieval_chunk USING gin (organization_id int8_ops, search_words)"
)


def latencies_ms(org_id: int, property_id: int | None, mode: Mode, queries, params: SearchParams) -> list[float]:
    out = []
    for rep in range(2):
        for text, vector in queries:
            timings: dict[str, float] = {}
            knowledge_search(
                organization_id=org_id,
                property_id=property_id,
                query=text,
                mode=mode,
                params=params,
                embedding=vector,
                timings=timings,
            )
            if rep:
                out.append(timings.get("sql_ms", 0.0))
    return out


def measure_candidate_index(built: dict, queries, params: SearchParams) -> None:
    """The open item for a big organization: would a (organization, words) GIN index
    (btree_gin) let the keyword leg skip the words' matches in other organizations?
    Same data, same queries, before and after; the index is dropped again."""
    org_id, property_id = built["scopes"]["tenant of the big org"]
    before = {m: latencies_ms(org_id, property_id, m, queries, params) for m in ("hybrid", "keyword")}
    with connection.cursor() as cursor:
        started = time.monotonic()
        cursor.execute(CANDIDATE_INDEX)
        cursor.execute("ANALYZE retrieval_chunk")
        build = time.monotonic() - started
    after = {m: latencies_ms(org_id, property_id, m, queries, params) for m in ("hybrid", "keyword")}
    text, vector = queries[0]
    plan = search_explain(organization_id=org_id, property_id=property_id, query=text, embedding=vector, params=params)
    used = "bench_chunk_org_words" in plan
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX bench_chunk_org_words")
    print(f"\n  candidate GIN (organization_id, search_words), built in {build:.1f}s, used by the planner: {used}")
    for mode in ("hybrid", "keyword"):
        b, a = before[mode], after[mode]
        print(
            f"  tenant of the big org     {mode:<12}without p50/p95 {percentile(b, 50):.1f}/{percentile(b, 95):.1f} ms,"
            f" with {percentile(a, 50):.1f}/{percentile(a, 95):.1f} ms"
        )


def vector_recall(org_id: int, property_id: int | None, queries, params: SearchParams) -> float:
    """Mean share of the exact top 20 that the vector leg finds with ``params``."""
    recalls = []
    for text, vector in queries:
        planned = {
            h.chunk_id
            for h in knowledge_search(
                organization_id=org_id,
                property_id=property_id,
                query=text,
                mode="vector",
                limit=20,
                params=params,
                embedding=vector,
            )
        }
        with connection.cursor() as cursor:
            cursor.execute(EXACT_SQL, [org_id, property_id, "[" + ",".join(map(str, vector)) + "]"])
            exact = {row[0] for row in cursor.fetchall()}
        recalls.append(len(planned & exact) / max(len(exact), 1))
    return statistics.fmean(recalls)


def measure_hnsw_candidates(built: dict, queries, params: SearchParams) -> None:
    """The vector leg of the big organization's tenant under each way of
    keeping HNSW's recall when the filter rejects most of the index: recall@20
    against the exact scan and p50/p95 of the SQL."""
    org_id, property_id = built["scopes"]["tenant of the big org"]

    def hnsw(**changes) -> SearchParams:
        return SearchParams(**{**params.__dict__, "exact_scan_max_chunks": 0, **changes})

    candidates = [
        ("relaxed_order, ef_search 64", hnsw(ef_search=64, iterative_scan="relaxed_order")),
        ("strict_order, ef_search 64", hnsw(ef_search=64, iterative_scan="strict_order")),
        ("relaxed_order, ef_search 200", hnsw(ef_search=200, iterative_scan="relaxed_order")),
        ("strict_order, ef_search 200", hnsw(ef_search=200, iterative_scan="strict_order")),
        ("relaxed_order, ef_search 100", hnsw(ef_search=100, iterative_scan="relaxed_order")),
        ("relaxed, 100 candidates re-ranked", hnsw(ef_search=100, vector_candidates=100)),
        ("relaxed, 200 candidates re-ranked", hnsw(ef_search=200, vector_candidates=200)),
        ("relaxed_order, ef_search 400", hnsw(ef_search=400, iterative_scan="relaxed_order")),
        (
            "strict_order, 64, max_scan_tuples 50k",
            hnsw(ef_search=64, iterative_scan="strict_order", max_scan_tuples=50000),
        ),
        ("exact scan (threshold above the scope)", SearchParams(**{**params.__dict__, "exact_scan_max_chunks": 10**9})),
    ]
    print(f"\n  HNSW candidates, tenant of the big org ({built['scope_sizes']['big org']} chunks in the org):")
    print(f"  {'candidate':<44}{'recall@20':>10}{'p50 ms':>8}{'p95 ms':>8}")
    partial_indexes_sync(min_chunks=0)  # first on the table-wide index alone
    try:
        for name, candidate in candidates:
            recall = vector_recall(org_id, property_id, queries, candidate)
            latencies = latencies_ms(org_id, property_id, "vector", queries, candidate)
            print(f"  {name:<44}{recall:>10.3f}{percentile(latencies, 50):>8.1f}{percentile(latencies, 95):>8.1f}")
    finally:
        started = time.monotonic()
        partial_indexes_sync()  # then on the organization's own, as configured
        build = time.monotonic() - started
    for name, candidate in candidates[:-1]:
        recall = vector_recall(org_id, property_id, queries, candidate)
        latencies = latencies_ms(org_id, property_id, "vector", queries, candidate)
        p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
        print(f"  {'own index: ' + name:<44}{recall:>10.3f}{p50:>8.1f}{p95:>8.1f}")
    print(f"  (the organization's own index took {build:.1f} s to build)")


def measure(built: dict, queries: list[tuple[str, list[float]]], params: SearchParams) -> None:
    print(f"  {'scope':<26}{'mode':<12}{'p50 ms':>8}{'p95 ms':>8}")
    for scope_name, (org_id, property_id) in built["scopes"].items():
        hnsw = SearchParams(**{**params.__dict__, "exact_scan_max_chunks": 0})
        runs: tuple[tuple[str, Mode, SearchParams], ...] = (
            ("hybrid", "hybrid", params),
            ("vector", "vector", params),
            ("keyword", "keyword", params),
            ("vector-hnsw", "vector", hnsw),
        )
        for label, mode, mode_params in runs:
            latencies = latencies_ms(org_id, property_id, mode, queries, mode_params)
            print(f"  {scope_name:<26}{label:<12}{percentile(latencies, 50):>8.1f}{percentile(latencies, 95):>8.1f}")
        # Recall of the vector leg as configured, and forced onto HNSW, vs an exact scan.
        configured, forced = (vector_recall(org_id, property_id, queries, p) for p in (params, hnsw))
        print(f"  {scope_name:<26}recall@20 vs exact scan: as configured {configured:.3f}, HNSW forced {forced:.3f}")
    for scope_name, (org_id, property_id) in built["scopes"].items():
        text, vector = queries[0]
        plan = search_explain(
            organization_id=org_id, property_id=property_id, query=text, embedding=vector, params=params
        )
        keep = [
            re.sub(r"'\[[^\]]*\]'", "'[...]'", line.rstrip())
            for line in plan.splitlines()
            if re.search(r"Scan|Execution Time|Index Cond|Recheck Cond", line) and "CTE Scan" not in line
        ]
        print(f"\n  EXPLAIN ANALYZE, hybrid, {scope_name}, {text!r}:")
        for line in keep:
            print("   " + line[:160])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--pool", type=int, default=1200)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument(
        "--candidate-index", action="store_true", help="also time a GIN (organization, words) index on the big org"
    )
    parser.add_argument(
        "--hnsw-candidates", action="store_true", help="recall and latency of each HNSW setting for the big org"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    original_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        rng = random.Random(7)
        backend = embedding_backend()
        started = time.monotonic()
        pool = pool_texts(args.pool, rng)
        vectors = backend.embed_documents([t for _, t in pool])
        print(f"embedded a pool of {len(pool)} texts with {backend.name} in {time.monotonic() - started:.0f}s")
        labelled = [json.loads(line) for line in LABELLED_QUERIES.read_text().splitlines() if line.strip()]
        english = [q["query"] for q in labelled if q.get("language", "en") == "en"]
        texts = rng.sample(english, min(args.queries, len(english)))
        embed_ms = []
        queries = []
        for text in texts:
            started = time.perf_counter()
            vector = backend.embed_query(text)
            embed_ms.append((time.perf_counter() - started) * 1000)
            queries.append((text, vector))
        print(
            f"query embedding (separate from the SQL below): p50 {percentile(embed_ms, 50):.1f} ms, "
            f"p95 {percentile(embed_ms, 95):.1f} ms; {os.cpu_count()} CPUs"
        )
        params = SearchParams.from_settings()
        for size in sizes:
            built = build(size, pool, vectors)
            builds = ", ".join(f"{k} {v:.1f}s" for k, v in built["build_seconds"].items())
            print(
                f"\n== {size} chunks, {built['org_count']} organizations "
                f"(typical {built['scope_sizes']['typical org']} "
                f"chunks, big {built['scope_sizes']['big org']}); load {built['load_seconds']:.1f}s; "
                f"index builds: {builds}"
            )
            measure(built, queries, params)
            if args.hnsw_candidates:
                measure_hnsw_candidates(built, queries, params)
            if args.candidate_index:
                measure_candidate_index(built, queries, params)
    finally:
        connection.creation.destroy_test_db(original_name, verbosity=0)


if __name__ == "__main__":
    main()
