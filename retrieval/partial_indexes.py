"""One HNSW index per big organization, so its tenants' searches walk a graph
of their own organization's chunks.

The table-wide HNSW index (``chunk_embedding_hnsw``) holds every
organization's chunks. Behind the filter on one organization and property,
its walk found about 0.6 of the exact top 20 (benchmarks/retrieval_scale.py),
so a scope up to ``SEARCH_EXACT_SCAN_MAX_CHUNKS`` is scanned exactly instead,
at about 2-3 µs a chunk. An organization with at least
``SEARCH_PARTIAL_INDEX_MIN_CHUNKS`` chunks gets a partial index,
``... USING hnsw (embedding vector_cosine_ops) WHERE organization_id = N``,
which the planner uses for that organization's HNSW branch
(``retrieval.search``) because the query names the same organization.

``partial_indexes_sync`` makes the indexes match the organizations: it
builds the missing ones (``CREATE INDEX CONCURRENTLY``: searches and
ingestion go on while it builds), rebuilds one a failed build left invalid,
and drops the index of an organization that shrank below half the threshold
(or is gone), so an organization near the line is not rebuilt back and forth.
Beat runs it every ``SEARCH_PARTIAL_INDEX_SYNC_SECONDS``; ``manage.py
retrieval_partial_indexes`` runs it at once. One run at a time (an advisory
lock); it must run outside a transaction.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

PREFIX = "chunk_embedding_hnsw_org_"
_NAME = re.compile(rf"^{PREFIX}(\d+)$")
_LOCK = 0x52455452  # pg advisory lock key: "RETR"
# The table-wide index's build parameters (retrieval/migrations/0001_initial.py).
HNSW_WITH = "m = 16, ef_construction = 64"


@dataclass
class Sync:
    built: list[int] = field(default_factory=list)
    rebuilt: list[int] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    busy: bool = False  # another sync held the lock: nothing was done


def index_name(organization_id: int) -> str:
    return f"{PREFIX}{int(organization_id)}"


def partial_indexes() -> dict[int, bool]:
    """The organizations that have a partial index, and whether it is valid
    (a failed concurrent build leaves an invalid one behind)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, i.indisvalid
            FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = 'retrieval_chunk'::regclass AND c.relname LIKE %s
            """,
            [PREFIX + "%"],
        )
        rows = cursor.fetchall()
    return {int(match.group(1)): valid for name, valid in rows if (match := _NAME.match(name))}


def chunk_counts() -> dict[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT organization_id, count(*) FROM retrieval_chunk GROUP BY organization_id")
        return dict(cursor.fetchall())


def partial_indexes_sync(
    *, min_chunks: int | None = None, dry_run: bool = False, progress: Callable[[str], None] | None = None
) -> Sync:
    """Build, rebuild and drop the partial indexes (see the module's docstring).
    ``progress`` hears one line per index before its work starts."""
    threshold = settings.SEARCH_PARTIAL_INDEX_MIN_CHUNKS if min_chunks is None else min_chunks
    say = progress or (lambda line: None)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_LOCK])
        if not cursor.fetchone()[0]:
            return Sync(busy=True)
    try:
        return _sync(threshold, dry_run, say)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_LOCK])


def _sync(threshold: int, dry_run: bool, say: Callable[[str], None]) -> Sync:
    counts, existing = chunk_counts(), partial_indexes()
    result = Sync()
    for organization_id, valid in sorted(existing.items()):
        chunks = counts.get(organization_id, 0)
        if threshold > 0 and chunks >= threshold / 2:
            if valid:
                result.kept.append(organization_id)
                continue
            say(f"organization {organization_id}: {chunks} chunks, its index is invalid (a failed build): rebuilding")
            if not dry_run:
                _drop(organization_id)
                _build(organization_id)
            result.rebuilt.append(organization_id)
            continue
        say(f"organization {organization_id}: {chunks} chunks, below {threshold / 2:.0f}: dropping its index")
        if not dry_run:
            _drop(organization_id)
        result.dropped.append(organization_id)
    if threshold > 0:
        for organization_id, chunks in sorted(counts.items()):
            if chunks >= threshold and organization_id not in existing:
                say(f"organization {organization_id}: {chunks} chunks: building its index")
                if not dry_run:
                    started = time.monotonic()
                    _build(organization_id)
                    say(f"organization {organization_id}: built in {time.monotonic() - started:.1f} s")
                result.built.append(organization_id)
    return result


def _build(organization_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index_name(organization_id)} ON retrieval_chunk "
            f"USING hnsw (embedding vector_cosine_ops) WITH ({HNSW_WITH}) "
            f"WHERE organization_id = {int(organization_id)}"
        )
        cursor.execute("ANALYZE retrieval_chunk")
    logger.info("partial HNSW index built for organization %s", organization_id)


def _drop(organization_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index_name(organization_id)}")
    logger.info("partial HNSW index dropped for organization %s", organization_id)
