"""Which chunk size? Runs ``manage.py eval_retrieval --json`` on the project's
labelled set with several CHUNK_MAX_TOKENS values (and overlaps) and prints the
chunk count and quality of each, plus how long the demo corpus's sections are
in the model's own tokens (what all-MiniLM-L6-v2 would cut off at 256).

    python benchmarks/retrieval_chunk_sizes.py [--backend minilm|e5-multilingual]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = [(64, 16), (128, 32), (192, 32), (256, 0), (256, 32), (256, 64)]


def section_lengths(backend: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from evals.retrieval_eval import LABELLED_CORPUS
    from retrieval.chunking import markdown_sections, search_prefix
    from retrieval.documents import manifest_read
    from retrieval.embeddings import embedding_backend

    model = embedding_backend(backend)
    folder = LABELLED_CORPUS
    lengths = []
    for name, entry in manifest_read(folder).items():
        for section in markdown_sections((folder / name).read_text()):
            text = search_prefix(entry["title"], section.heading_path) + "\n\n".join(section.paragraphs)
            lengths.append(model.count_tokens(text))
    lengths.sort()
    over = sum(1 for n in lengths if n > model.max_tokens)
    print(
        f"{len(lengths)} sections in the demo corpus, {model.name} tokens incl. title and headings: "
        f"median {lengths[len(lengths) // 2]}, p90 {lengths[int(len(lengths) * 0.9)]}, max {lengths[-1]}; "
        f"{over} longer than the {model.max_tokens} the model reads"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="minilm")
    args = parser.parse_args()
    section_lengths(args.backend)
    print(f"{'max tokens':>10}{'overlap':>8}{'chunks':>7}{'vec nDCG':>9}{'vec hit5':>9}{'hyb nDCG':>9}{'hyb hit5':>9}")
    for size, overlap in SIZES:
        out = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "eval_retrieval",
                "--json",
                "--embedding-backend",
                args.backend,
                "--chunk-tokens",
                str(size),
                "--overlap-tokens",
                str(overlap),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        report = json.loads(out[out.index("{") :])
        v, h = report["modes"]["vector"]["overall"], report["modes"]["hybrid"]["overall"]
        print(
            f"{size:>10}{overlap:>8}{report['chunks']:>7}{v['ndcg_at_10']:>9.3f}{v['hit_at_k']:>9.3f}"
            f"{h['ndcg_at_10']:>9.3f}{h['hit_at_k']:>9.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
