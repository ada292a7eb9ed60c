"""Celery adapters for retrieval: take ids, call one service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from config.tasks import RETRIEVAL_EMBED_DOCUMENT, RETRIEVAL_PARTIAL_INDEXES_SYNC, RETRIEVAL_REQUEUE_PENDING
from retrieval.embeddings import EmbeddingUnavailable
from retrieval.partial_indexes import partial_indexes_sync
from retrieval.services import document_embed, document_pending_requeue


@shared_task(
    name=RETRIEVAL_EMBED_DOCUMENT,
    acks_late=True,
    # A deadlock with a delete, or a dropped connection, is the database's moment, not the document's.
    autoretry_for=(EmbeddingUnavailable, OperationalError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def embed_document(document_id: int) -> None:
    document_embed(document_id=document_id, retry_failed=False)


@shared_task(name=RETRIEVAL_REQUEUE_PENDING, acks_late=True)
def requeue_pending() -> int:
    """Beat: documents whose embedding task was lost are queued again."""
    return document_pending_requeue(older_than_seconds=settings.EMBEDDING_REQUEUE_AFTER_SECONDS)


# An index build may outlast the global limits (a killed build leaves an invalid index,
# rebuilt next time): an hour for all the organizations that need one.
@shared_task(name=RETRIEVAL_PARTIAL_INDEXES_SYNC, soft_time_limit=3300, time_limit=3600)
def partial_indexes_keep() -> dict[str, list[int]]:
    """Beat: each big organization has its own HNSW index (retrieval/partial_indexes.py)."""
    result = partial_indexes_sync()
    return {"built": result.built, "rebuilt": result.rebuilt, "dropped": result.dropped}
