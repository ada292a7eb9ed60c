"""How many threads should each process's E5 engine use (``EMBEDDING_THREADS``)?
Embeds the dev set's tenant questions as queries, in one process and then in
two processes at once (a turn worker and the emergency or embeddings worker on
the same machine), for each thread setting, and prints the query embedding's
p50 / p95 per process.

    python benchmarks/embedding_threads.py [--threads 1,0] [--processes 1,2] [--queries 150]

0 is the engine's own choice (every core). Each process loads the model first
and embeds one query before it is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(queries: int) -> None:
    from _django import django_start

    django_start()
    from evals.retrieval_eval import LABELLED_SETS, queries_read
    from retrieval.embeddings import embed_query

    texts = [q.query for q in queries_read(LABELLED_SETS["dev"][1])][:queries]
    embed_query(texts[0])
    times = []
    for text in texts:
        started = time.perf_counter()
        embed_query(text)
        times.append((time.perf_counter() - started) * 1000)
    print(json.dumps(times))


def run(threads: int, processes: int, queries: int) -> list[list[float]]:
    env = {**os.environ, "EMBEDDING_THREADS": str(threads), "EMBEDDING_BACKEND": "e5-multilingual"}
    env.pop("OMP_NUM_THREADS", None)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--queries", str(queries)]
    children = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    outputs = [c.communicate()[0] for c in children]
    if any(c.returncode for c in children):
        raise SystemExit("a child process failed")
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1,0")
    parser.add_argument("--processes", default="1,2")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.queries)
        return
    print(f"cores {os.cpu_count()}, load at start {os.getloadavg()[0]:.2f}")
    print("| EMBEDDING_THREADS | processes at once | query embedding p50 / p95 ms, per process |")
    print("|---|---|---|")
    for processes in (int(p) for p in args.processes.split(",")):
        for threads in (int(t) for t in args.threads.split(",")):
            figures = []
            for times in run(threads, processes, args.queries):
                cut = statistics.quantiles(times, n=20)
                figures.append(f"{statistics.median(times):.1f} / {cut[18]:.1f}")
            print(f"| {threads or '0 (every core)'} | {processes} | {'; '.join(figures)} |", flush=True)
    print(f"load at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
