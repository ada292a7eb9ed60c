"""Tier 2 of the ADR's evaluation framework: retrieval quality on a labelled set.

A labelled set is a corpus folder (Markdown documents and a MANIFEST.json of
``{"file", "title", "property_scope": "all" | "<property code>"}``) and a JSON
Lines query file of ``{"id", "query", "property": code | null, "relevant":
[{"file", "heading", "grade"}], "kind"}`` (optional ``"language"`` and
``"rewrite"``: the self-contained English question the turn engine's model
writes before searching). A hit is relevant to a label when it comes from the
label's file and its heading path contains the label's heading (an empty
heading: any chunk of the file). ``relevant: []`` means the corpus has no
answer; such queries are not ranked, but the score of their top hit is set
against that of the answerable queries (``report["no_answer"]``): how far a
score threshold could tell "the documents do not say" from an answer.

``evaluation_run`` builds a throwaway organization inside a transaction that
is rolled back at the end, ingests the corpus with the configured embedding
backend and chunker, embeds every query once, and measures the three search
modes side by side on the same chunks and query vectors.
"""

from __future__ import annotations

import json
import math
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

from properties.models import Organization, Property
from retrieval.answerability import answerability_features, answerability_head
from retrieval.documents import MANIFEST_NAME, file_text, manifest_read
from retrieval.embeddings import embedding_backend
from retrieval.models import Chunk
from retrieval.search import (
    MODES,
    Mode,
    SearchHit,
    SearchParams,
    answer_similarity,
    knowledge_search,
    query_embedding,
)
from retrieval.services import document_ingest

RANK_DEPTH = 10
# The project's own labelled set: the demo organization's documents (what
# `make run` ingests) and WhatsApp-style questions about them.
LABELLED_CORPUS = Path(settings.BASE_DIR) / "retrieval" / "demo_documents"
LABELLED_QUERIES = Path(settings.BASE_DIR) / "evals" / "retrieval" / "queries.jsonl"
# The held-out sets: two other agencies' documents and questions, written blind
# (evals/retrieval/heldout/*/PROVENANCE.md). Weights, k and thresholds are chosen
# on dev; test is frozen (a test holds its checksum) and only reported.
HELDOUT = Path(settings.BASE_DIR) / "evals" / "retrieval" / "heldout"
LABELLED_SETS = {
    "regression": (LABELLED_CORPUS, LABELLED_QUERIES),
    "dev": (HELDOUT / "dev" / "corpus", HELDOUT / "dev" / "queries.jsonl"),
    "test": (HELDOUT / "test" / "corpus", HELDOUT / "test" / "queries.jsonl"),
    # Later questions on the test split's corpus, each batch frozen before it was first searched.
    "blind-001": (HELDOUT / "test" / "corpus", HELDOUT / "blind" / "batch-001.jsonl"),
}


class LabelledSetError(ValueError):
    pass


@dataclass(frozen=True)
class Label:
    file: str
    heading: str
    grade: int


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    query: str
    property: str | None
    relevant: tuple[Label, ...]
    kind: str
    language: str = "en"
    rewrite: str | None = None


def queries_read(path: Path) -> list[LabelledQuery]:
    out: list[LabelledQuery] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            labels = tuple(Label(r["file"], r.get("heading", ""), int(r.get("grade", 1))) for r in raw["relevant"])
            out.append(
                LabelledQuery(
                    id=str(raw["id"]),
                    query=str(raw["query"]),
                    property=raw.get("property"),
                    relevant=labels,
                    kind=str(raw.get("kind", "other")),
                    language=str(raw.get("language", "en")),
                    rewrite=raw.get("rewrite"),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise LabelledSetError(f"{path}:{number}: not a labelled query ({exc})") from exc
    if not out:
        raise LabelledSetError(f"{path}: no queries")
    return out


@dataclass
class Corpus:
    organization: Organization
    properties: dict[str, Property]
    chunk_files: dict[int, str]  # chunk id -> file name
    chunk_count: int
    ingest_seconds: float


def corpus_build(folder: Path, *, property_codes: Iterable[str] = ()) -> Corpus:
    """Create a throwaway organization holding the corpus. Call inside a transaction you roll back.

    Its properties are those the manifest scopes documents to plus ``property_codes``
    (the queries' properties: a tenant of a property with no documents of its own
    sees the organization-wide documents only)."""
    manifest = manifest_read(folder)
    if not manifest:
        raise LabelledSetError(f"{folder}: needs a {MANIFEST_NAME}")
    slug = f"eval-{uuid.uuid4().hex[:10]}"
    organization = Organization.objects.create(name=f"Retrieval evaluation {slug}", slug=slug)
    codes = sorted(
        {e["property_scope"] for e in manifest.values() if e["property_scope"] != "all"} | set(property_codes)
    )
    properties = {
        code: Property.objects.create(organization=organization, code=code, address=f"{code} (evaluation)")
        for code in codes
    }
    started = time.monotonic()
    for name, entry in manifest.items():
        path = folder / name
        if not path.exists():
            raise LabelledSetError(f"{folder}/{MANIFEST_NAME} lists {name}, which does not exist")
        scope = entry["property_scope"]
        document_ingest(
            organization=organization,
            property=None if scope == "all" else properties[scope],
            title=entry.get("title") or name,
            source_name=name,
            content=file_text(path),
            embed_now=True,
        )
    chunk_files = dict(Chunk.objects.filter(organization=organization).values_list("id", "document__source"))
    return Corpus(organization, properties, chunk_files, len(chunk_files), time.monotonic() - started)


def _label_index(hit: SearchHit, labels: tuple[Label, ...], chunk_files: dict[int, str]) -> int | None:
    """Index of the best-graded label this hit satisfies, or None."""
    source = chunk_files.get(hit.chunk_id)
    best: int | None = None
    for index, label in enumerate(labels):
        matches = label.file == source and label.heading.casefold() in hit.heading_path.casefold()
        if matches and (best is None or label.grade > labels[best].grade):
            best = index
    return best


@dataclass
class QueryResult:
    query: LabelledQuery
    hit_at_k: bool
    precision: float
    recall: float
    reciprocal_rank: float
    ndcg: float
    first_relevant_rank: int | None
    sql_ms: float
    top: list[dict[str, Any]] = field(default_factory=list)
    top_score: float = 0.0


def score_query(
    query: LabelledQuery, hits: list[SearchHit], chunk_files: dict[int, str], *, k: int, sql_ms: float
) -> QueryResult:
    labels = query.relevant
    matched = [_label_index(hit, labels, chunk_files) for hit in hits[:RANK_DEPTH]]
    relevant_flags = [m is not None for m in matched]
    first = next((i + 1 for i, flag in enumerate(relevant_flags) if flag), None)
    covered = {m for m in matched[:k] if m is not None}
    # nDCG@10: each label earns its grade once (a section split in two chunks is one answer).
    credited: set[int] = set()
    dcg = 0.0
    for rank, m in enumerate(matched, start=1):
        if m is not None and m not in credited:
            credited.add(m)
            dcg += (2 ** labels[m].grade - 1) / math.log2(rank + 1)
    ideal = sorted((label.grade for label in labels), reverse=True)[:RANK_DEPTH]
    idcg = sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return QueryResult(
        query=query,
        hit_at_k=any(relevant_flags[:k]),
        precision=sum(relevant_flags[:k]) / k,
        recall=len(covered) / len(labels),
        reciprocal_rank=1 / first if first else 0.0,
        ndcg=dcg / idcg if idcg else 0.0,
        first_relevant_rank=first,
        sql_ms=sql_ms,
        top=[
            {"file": chunk_files.get(h.chunk_id), "heading": h.heading_path, "relevant": flag}
            for h, flag in zip(hits[:k], relevant_flags[:k], strict=False)
        ],
    )


def summarise(results: Iterable[QueryResult]) -> dict[str, Any]:
    results = list(results)
    if not results:
        return {"queries": 0}
    latencies = sorted(r.sql_ms for r in results)
    return {
        "queries": len(results),
        "precision_at_k": _mean(r.precision for r in results),
        "recall_at_k": _mean(r.recall for r in results),
        "mrr_at_10": _mean(r.reciprocal_rank for r in results),
        "ndcg_at_10": _mean(r.ndcg for r in results),
        "hit_at_k": _mean(float(r.hit_at_k) for r in results),
        "p50_ms": _percentile(latencies, 50),
        "p95_ms": _percentile(latencies, 95),
    }


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(statistics.fmean(values), 4) if values else 0.0


def _percentile(sorted_values: list[float], pct: float, *, digits: int = 2) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, math.ceil(pct / 100 * len(sorted_values)) - 1))
    return round(sorted_values[index], digits)


@dataclass
class PreparedQuery:
    query: LabelledQuery
    text: str
    property_id: int | None
    embedding: list[float]


def queries_prepare(queries: list[LabelledQuery], corpus: Corpus, *, use_rewrite: bool) -> list[PreparedQuery]:
    prepared = []
    for q in queries:
        if q.property is not None and q.property not in corpus.properties:
            raise LabelledSetError(f"{q.id}: property {q.property!r} is not a property of the evaluation corpus")
        text = q.rewrite if use_rewrite and q.rewrite else q.query
        prepared.append(
            PreparedQuery(q, text, corpus.properties[q.property].pk if q.property else None, query_embedding(text))
        )
    return prepared


def top_score(hits: list[SearchHit], mode: str) -> float:
    """How sure the mode is that something answers: for the vector and hybrid modes
    the product's answerability signal (the best cosine similarity among the hits,
    ``answer_similarity``), for the keyword mode its best keyword score. 0 when
    nothing was found."""
    if not hits:
        return 0.0
    if mode == "keyword":
        return hits[0].keyword_score or 0.0
    return answer_similarity(hits) or 0.0


def modes_measure(
    prepared: list[PreparedQuery],
    corpus: Corpus,
    *,
    k: int,
    params: SearchParams,
    modes: Iterable[Mode] = MODES,
    no_answer_scores: dict[str, list[float]] | None = None,
) -> dict[str, list[QueryResult]]:
    """Rank the answerable queries in each mode. When ``no_answer_scores`` is given,
    the no-answer queries are searched too and their top scores land there."""
    out: dict[str, list[QueryResult]] = {}
    for mode in modes:
        results = []
        for p in prepared:
            if not p.query.relevant and no_answer_scores is None:
                continue
            timings: dict[str, float] = {}
            hits = knowledge_search(
                organization_id=corpus.organization.pk,
                property_id=p.property_id,
                query=p.text,
                limit=max(RANK_DEPTH, k),
                mode=mode,
                params=params,
                embedding=p.embedding,
                timings=timings,
            )
            if not p.query.relevant:
                assert no_answer_scores is not None  # skipped above otherwise
                no_answer_scores.setdefault(mode, []).append(top_score(hits, mode))
                continue
            result = score_query(p.query, hits, corpus.chunk_files, k=k, sql_ms=timings.get("sql_ms", 0.0))
            result.top_score = top_score(hits, mode)
            results.append(result)
        out[mode] = results
    return out


def no_answer_report(
    measured: dict[str, list[QueryResult]], no_answer_scores: dict[str, list[float]], *, threshold: float
) -> dict:
    """Per mode: the top-hit score of answerable vs no-answer queries (p10/p50/p90), the
    AUC of that score as a test of "something answers" (the chance that an answerable
    query scores above a no-answer one), and, for the vector and hybrid modes, what the
    product's threshold (``SEARCH_ANSWER_MIN_SIMILARITY``) does: the share of
    answerable queries it keeps, of no-answer queries it flags, and the share of all
    queries that end right (kept with a relevant hit in the top k, or flagged with no
    answer to find)."""
    report: dict[str, Any] = {}
    for mode, results in measured.items():
        answerable = sorted(r.top_score for r in results)
        unanswerable = sorted(no_answer_scores.get(mode, []))
        if not unanswerable or not answerable:
            continue
        cut = _percentile(answerable, 10, digits=4)
        entry: dict[str, Any] = {
            "score": "keyword score" if mode == "keyword" else "best cosine similarity",
            "answerable": _distribution(answerable),
            "no_answer": _distribution(unanswerable),
            "auc": round(auc(answerable, unanswerable), 4),
            "answerable_p10": cut,
            "no_answer_below_answerable_p10": round(sum(s < cut for s in unanswerable) / len(unanswerable), 4),
        }
        if mode != "keyword":
            kept = [r for r in results if r.top_score >= threshold]
            flagged = sum(s < threshold for s in unanswerable)
            right = sum(r.hit_at_k for r in kept) + flagged
            entry["threshold"] = {
                "value": threshold,
                "answerable_kept": round(len(kept) / len(results), 4),
                "no_answer_flagged": round(flagged / len(unanswerable), 4),
                "right_rate": round(right / (len(results) + len(unanswerable)), 4),
            }
        report[mode] = entry
    return report


def answerability_dataset(
    prepared: list[PreparedQuery], corpus: Corpus, *, params: SearchParams
) -> tuple[np.ndarray, np.ndarray]:
    """Each question's answerability features as a turn reads them (the hybrid
    search's ``TURN_KNOWLEDGE_HITS`` hits), and 1 where it has an answer."""
    rows = []
    for p in prepared:
        hits = knowledge_search(
            organization_id=corpus.organization.pk,
            property_id=p.property_id,
            query=p.text,
            limit=settings.TURN_KNOWLEDGE_HITS,
            params=params,
            embedding=p.embedding,
        )
        rows.append(answerability_features(p.embedding, hits))
    return np.array(rows), np.array([1 if p.query.relevant else 0 for p in prepared])


def answerability_report(
    prepared: list[PreparedQuery], corpus: Corpus, hybrid: list[QueryResult], *, params: SearchParams
) -> dict[str, Any] | None:
    """What the answerability head (``retrieval.answerability``) does here: its
    AUC, and at its operating point the share of answerable questions kept, of
    questions without an answer flagged, and of all that end right (kept with a
    relevant hit in the top k, or flagged with nothing to find). None without a
    head for this embedding model."""
    head = answerability_head()
    if head is None:
        return None
    features, _ = answerability_dataset(prepared, corpus, params=params)
    probabilities = head.probabilities(features)
    threshold = head.cut
    found = {r.query.id: r.hit_at_k for r in hybrid}
    answerable = [
        (prob, found[p.query.id]) for p, prob in zip(prepared, probabilities, strict=True) if p.query.relevant
    ]
    unanswerable = [prob for p, prob in zip(prepared, probabilities, strict=True) if not p.query.relevant]
    if not answerable or not unanswerable:
        return None
    kept = [hit for prob, hit in answerable if prob >= threshold]
    flagged = sum(prob < threshold for prob in unanswerable)
    return {
        "auc": round(auc([prob for prob, _ in answerable], unanswerable), 4),
        "threshold": round(threshold, 4),
        "answerable_kept": round(len(kept) / len(answerable), 4),
        "no_answer_flagged": round(flagged / len(unanswerable), 4),
        "right_rate": round((sum(kept) + flagged) / len(prepared), 4),
        "no_answer": len(unanswerable),
    }


def auc(positives: list[float], negatives: list[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    if not positives or not negatives:
        return 0.0
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _distribution(sorted_values: list[float]) -> dict[str, float]:
    return {
        "n": len(sorted_values),
        **{f"p{p}": _percentile(sorted_values, p, digits=4) for p in (10, 50, 90)},
    }


def report_build(measured: dict[str, list[QueryResult]], *, group_by: str) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for mode, results in measured.items():
        groups: dict[str, list[QueryResult]] = defaultdict(list)
        for r in results:
            groups[getattr(r.query, group_by)].append(r)
        report[mode] = {
            "overall": summarise(results),
            f"by_{group_by}": {name: summarise(rs) for name, rs in sorted(groups.items())},
        }
    return report


def sweep_grid() -> list[dict[str, Any]]:
    grid = []
    for rrf_k in (1, 5, 10, 20, 60):
        for vector_weight in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
            for candidates in (20, 40):
                grid.append(
                    {
                        "rrf_k": rrf_k,
                        "vector_weight": vector_weight,
                        "keyword_weight": round(1 - vector_weight, 2),
                        "vector_candidates": candidates,
                        "keyword_candidates": candidates,
                    }
                )
    return grid


def evaluation_run(
    *,
    corpus_dir: Path,
    queries_file: Path,
    k: int = 5,
    params: SearchParams | None = None,
    sweep: bool = False,
) -> dict[str, Any]:
    """Measure vector, keyword and hybrid search on a labelled set; nothing is left in the database."""
    queries = queries_read(queries_file)
    params = params or SearchParams.from_settings()
    backend = embedding_backend()
    report: dict[str, Any] = {
        "embedding_backend": backend.name,
        "k": k,
        "params": params.__dict__,
        "queries": len(queries),
        "unanswerable_queries": sum(1 for q in queries if not q.relevant),
    }
    with transaction.atomic():
        corpus = corpus_build(corpus_dir, property_codes={q.property for q in queries if q.property})
        report["chunks"] = corpus.chunk_count
        report["ingest_seconds"] = round(corpus.ingest_seconds, 1)
        started = time.monotonic()
        prepared = queries_prepare(queries, corpus, use_rewrite=False)
        report["query_embed_ms_mean"] = round((time.monotonic() - started) * 1000 / len(prepared), 2)
        no_answer_scores: dict[str, list[float]] = {}
        measured = modes_measure(prepared, corpus, k=k, params=params, no_answer_scores=no_answer_scores)
        report["modes"] = report_build(measured, group_by="kind")
        report["no_answer"] = no_answer_report(
            measured, no_answer_scores, threshold=settings.SEARCH_ANSWER_MIN_SIMILARITY
        )
        report["answerability"] = answerability_report(prepared, corpus, measured["hybrid"], params=params)
        report["failures"] = {
            mode: [
                {"id": r.query.id, "query": r.query.query, "top": [t["heading"] for t in r.top[:3]]}
                for r in results
                if not r.hit_at_k
            ]
            for mode, results in measured.items()
        }
        foreign = [p for p in prepared if p.query.language != "en"]
        if foreign:
            report["languages"] = {
                "as_written": report_build(modes_measure(foreign, corpus, k=k, params=params), group_by="language"),
            }
            rewritten = queries_prepare([p.query for p in foreign], corpus, use_rewrite=True)
            report["languages"]["rewritten_to_english"] = report_build(
                modes_measure(rewritten, corpus, k=k, params=params), group_by="language"
            )
        if sweep:
            rows = []
            for overrides in sweep_grid():
                trial = SearchParams(**{**params.__dict__, **overrides})
                summary = summarise(modes_measure(prepared, corpus, k=k, params=trial, modes=["hybrid"])["hybrid"])
                rows.append({**overrides, **{m: summary[m] for m in ("ndcg_at_10", "hit_at_k", "mrr_at_10")}})
            rows.sort(key=lambda r: (-r["ndcg_at_10"], -r["hit_at_k"]))
            report["sweep"] = rows
        transaction.set_rollback(True)
    return report
