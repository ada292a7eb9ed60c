"""``manage.py eval_retrieval [--set dev|test|blind-NNN|regression | --corpus DIR --queries FILE]
[--k 5] [--json] [--sweep]``

Measures vector-only, keyword-only and hybrid search side by side on a
labelled set (default: the project's own, retrieval/demo_documents/ and
evals/retrieval/queries.jsonl). See
evals/retrieval_eval.py for the format and the metrics.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evals.retrieval_eval import (
    LABELLED_CORPUS,
    LABELLED_QUERIES,
    LABELLED_SETS,
    LabelledSetError,
    evaluation_run,
)
from retrieval.documents import DocumentSourceError
from retrieval.search import MODES, SearchParams

METRICS = [
    ("precision_at_k", "P@k"),
    ("recall_at_k", "R@k"),
    ("mrr_at_10", "MRR@10"),
    ("ndcg_at_10", "nDCG@10"),
    ("hit_at_k", "hit@k"),
    ("p50_ms", "p50 ms"),
    ("p95_ms", "p95 ms"),
]


class Command(BaseCommand):
    help = "Measure retrieval quality (vector, keyword, hybrid) on a labelled set."

    def add_arguments(self, parser):
        parser.add_argument(
            "--set",
            choices=sorted(LABELLED_SETS),
            help="a shipped labelled set: regression (the default corpus and queries), dev, test or blind-NNN",
        )
        parser.add_argument("--corpus", type=Path, default=LABELLED_CORPUS, help="folder with MANIFEST.json")
        parser.add_argument("--queries", type=Path, default=LABELLED_QUERIES, help="JSON Lines file")
        parser.add_argument("--k", type=int, default=5, help="cut-off for precision, recall and hit (default 5)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--sweep", action="store_true", help="also try a grid of RRF k, weights and candidates")
        parser.add_argument("--failures", action="store_true", help="list the queries each mode misses")
        parser.add_argument("--embedding-backend", help="override EMBEDDING_BACKEND for this run")
        parser.add_argument("--chunk-tokens", type=int, help="override CHUNK_MAX_TOKENS for this run")
        parser.add_argument("--overlap-tokens", type=int, help="override CHUNK_OVERLAP_TOKENS for this run")
        for name in ("rrf-k", "vector-candidates", "keyword-candidates", "words-per-term"):
            parser.add_argument(f"--{name}", type=int)
        for name in ("vector-weight", "keyword-weight", "trgm-threshold"):
            parser.add_argument(f"--{name}", type=float)

    def handle(self, *args, **options):
        if not 1 <= options["k"] <= 10:
            raise CommandError("--k must be between 1 and 10")
        if options["embedding_backend"]:
            settings.EMBEDDING_BACKEND = options["embedding_backend"]
        if options["chunk_tokens"]:
            settings.CHUNK_MAX_TOKENS = options["chunk_tokens"]
        if options["overlap_tokens"] is not None:
            settings.CHUNK_OVERLAP_TOKENS = options["overlap_tokens"]
        overrides = {
            key: options[key]
            for key in (
                "rrf_k",
                "vector_candidates",
                "keyword_candidates",
                "words_per_term",
                "vector_weight",
                "keyword_weight",
                "trgm_threshold",
            )
            if options[key] is not None
        }
        if options["set"]:
            options["corpus"], options["queries"] = LABELLED_SETS[options["set"]]
        try:
            report = evaluation_run(
                corpus_dir=options["corpus"],
                queries_file=options["queries"],
                k=options["k"],
                params=SearchParams.from_settings(**overrides),
                sweep=options["sweep"],
            )
        except (LabelledSetError, DocumentSourceError, FileNotFoundError) as exc:
            raise CommandError(str(exc)) from exc
        report["chunk_max_tokens"] = settings.CHUNK_MAX_TOKENS
        report["chunk_overlap_tokens"] = settings.CHUNK_OVERLAP_TOKENS
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self._print(report, options)

    def _print(self, report, options):
        w = self.stdout.write
        k = report["k"]
        w(
            f"{report['queries']} queries ({report['unanswerable_queries']} with no answer, not ranked), "
            f"{report['chunks']} chunks, embedding {report['embedding_backend']}, "
            f"chunks <= {report['chunk_max_tokens']} tokens (overlap {report['chunk_overlap_tokens']}), k={k}"
        )
        p = report["params"]
        w(
            f"hybrid: RRF k={p['rrf_k']}, weights vector {p['vector_weight']} / keyword {p['keyword_weight']}, "
            f"candidates {p['vector_candidates']}/{p['keyword_candidates']}, trigram threshold {p['trgm_threshold']}, "
            f"words per term {p['words_per_term']}; query embedding {report['query_embed_ms_mean']} ms mean "
            "(not in the latencies below)"
        )
        self._table("All answerable queries", {m: report["modes"][m]["overall"] for m in MODES}, k)
        kinds = sorted(report["modes"]["hybrid"]["by_kind"])
        w(f"\nBy kind, hit@{k} / nDCG@10:")
        w(f"{'kind':<14}{'n':>4}" + "".join(f"{m:>18}" for m in MODES))
        for kind in kinds:
            row = [report["modes"][m]["by_kind"][kind] for m in MODES]
            w(
                f"{kind:<14}{row[0]['queries']:>4}"
                + "".join(f"{r['hit_at_k']:>9.2f} / {r['ndcg_at_10']:.2f}" for r in row)
            )
        if report.get("no_answer"):
            w("\nAnswerability: top score, answerable vs no-answer queries (p10 / p50 / p90), AUC:")
            for mode, d in report["no_answer"].items():
                a, n = d["answerable"], d["no_answer"]
                w(
                    f"{mode:<8}{d['score']:<24}answerable {a['p10']:.3f} / {a['p50']:.3f} / {a['p90']:.3f}, "
                    f"no answer ({n['n']}) {n['p10']:.3f} / {n['p50']:.3f} / {n['p90']:.3f}; AUC {d['auc']:.3f}"
                )
                if "threshold" in d:
                    t = d["threshold"]
                    w(
                        f"{'':<8}at SEARCH_ANSWER_MIN_SIMILARITY {t['value']}: {t['answerable_kept']:.0%} of "
                        f"answerable kept, {t['no_answer_flagged']:.0%} of no-answer flagged, "
                        f"{t['right_rate']:.0%} of all end right"
                    )
        if head := report.get("answerability"):
            w(
                f"answerability head (the product's signal): AUC {head['auc']:.3f}; at its operating point "
                f"{head['threshold']}: {head['answerable_kept']:.0%} of answerable kept, "
                f"{head['no_answer_flagged']:.0%} of {head['no_answer']} no-answer flagged, "
                f"{head['right_rate']:.0%} of all end right"
            )
        if "languages" in report:
            for variant, title in (("as_written", "as written"), ("rewritten_to_english", "rewritten to English")):
                data = report["languages"][variant]
                w(f"\nOther languages, {title}, hit@{k} / nDCG@10:")
                w(f"{'language':<14}{'n':>4}" + "".join(f"{m:>18}" for m in MODES))
                rows = {"all": [data[m]["overall"] for m in MODES]}
                for lang in sorted(data["hybrid"]["by_language"]):
                    rows[lang] = [data[m]["by_language"][lang] for m in MODES]
                for name, row in rows.items():
                    w(
                        f"{name:<14}{row[0]['queries']:>4}"
                        + "".join(f"{r['hit_at_k']:>9.2f} / {r['ndcg_at_10']:.2f}" for r in row)
                    )
        v, h = report["modes"]["vector"]["overall"], report["modes"]["hybrid"]["overall"]
        verdict = "beats" if h["ndcg_at_10"] > v["ndcg_at_10"] else "does NOT beat"
        w(
            f"\nHybrid {verdict} vector-only: nDCG@10 {h['ndcg_at_10']:.3f} vs {v['ndcg_at_10']:.3f} "
            f"(ratio {h['ndcg_at_10'] / max(v['ndcg_at_10'], 1e-9):.3f}), hit@{k} {h['hit_at_k']:.3f} vs "
            f"{v['hit_at_k']:.3f}"
        )
        if options["failures"]:
            for mode in MODES:
                w(f"\nMissed by {mode} (top 3 headings):")
                for f in report["failures"][mode]:
                    w(f"  {f['id']} {f['query']!r}: {f['top']}")
        if "sweep" in report:
            w("\nSweep (hybrid), best first:")
            w(f"{'rrf_k':>6}{'w_vec':>7}{'w_kw':>6}{'cand':>6}{'nDCG@10':>9}{'hit@k':>7}{'MRR':>7}")
            for r in report["sweep"][:15]:
                w(
                    f"{r['rrf_k']:>6}{r['vector_weight']:>7}{r['keyword_weight']:>6}{r['vector_candidates']:>6}"
                    f"{r['ndcg_at_10']:>9.3f}{r['hit_at_k']:>7.3f}{r['mrr_at_10']:>7.3f}"
                )

    def _table(self, title, rows, k):
        w = self.stdout.write
        w(f"\n{title}:")
        w(
            f"{'mode':<10}"
            + "".join(f"{label.replace('k', str(k)) if '@k' in label else label:>10}" for _, label in METRICS)
        )
        for mode, summary in rows.items():
            w(
                f"{mode:<10}"
                + "".join(
                    f"{summary[key]:>10.3f}" if "ms" not in key else f"{summary[key]:>10.1f}" for key, _ in METRICS
                )
            )
