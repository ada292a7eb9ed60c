"""Writing knowledge documents: ingest, embed, and the queue in between.

``document_ingest`` stores a document's text and decides whether anything
changed (sha256 of the text, the title and the embedding model). When nothing
did, it returns the stored document and does nothing else. When something did,
the document goes to ``pending`` and its chunks are rebuilt by
``document_embed``, either right away (``embed_now=True``, the command line) or
by the ``retrieval.embed_document`` task on the ``embeddings`` queue after
commit (admin uploads and everything else).

``document_embed`` chunks and embeds *outside* any transaction (it is CPU
work), then replaces the document's chunks in one short transaction, under a
row lock, and only if the text it embedded is still the document's text: a
newer version that arrived meanwhile wins and has its own task queued.
"""

from __future__ import annotations

import datetime
import hashlib
import logging
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.tasks import RETRIEVAL_EMBED_DOCUMENT, queue_task
from properties.models import Organization, Property
from retrieval.chunking import ChunkDraft, chunk_document
from retrieval.embeddings import EmbeddingMisconfigured, embedding_backend
from retrieval.models import Chunk, Document

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]


def document_checksum(*, title: str, content: str) -> str:
    return hashlib.sha256(f"{title.strip()}\n\0{normalise_text(content)}".encode()).hexdigest()


def normalise_text(content: str) -> str:
    return content.replace("\r\n", "\n").replace("\r", "\n").strip() + "\n"


def document_ingest(
    *,
    organization: Organization,
    property: Property | None = None,
    title: str,
    source_name: str,
    content: str,
    embed_now: bool = False,
    progress: ProgressCallback | None = None,
) -> Document:
    """Store (or update) the document ``source_name`` of ``organization``
    (for every property, or for ``property`` only) and get its chunks built.

    Unchanged text, title and embedding model: returns the stored document
    untouched. Changed: the old chunks stay searchable until the new ones
    replace them in one transaction."""
    title = title.strip()[: Document._meta.get_field("title").max_length]  # a long heading or manifest title
    source_name = source_name.strip()
    if not title:
        raise ValueError("a document needs a title")
    if not source_name:
        raise ValueError("a document needs a source name")
    if not content.strip():
        raise ValueError(f"{source_name}: the document is empty")
    if "\x00" in content:
        raise ValueError(f"{source_name}: the document contains NUL bytes (binary file?)")
    if property is not None and property.organization_id != organization.pk:
        raise ValueError(f"property {property.code} does not belong to organization {organization.slug}")
    backend_name = embedding_backend().name
    checksum = document_checksum(title=title, content=content)
    text = normalise_text(content)

    with transaction.atomic():
        document, created = Document.objects.select_for_update().get_or_create(
            organization=organization,
            property=property,
            source=source_name,
            defaults={"title": title, "checksum": checksum, "text": text, "status": Document.Status.PENDING},
        )
        unchanged = (
            not created
            and document.checksum == checksum
            and (
                document.status == Document.Status.PENDING  # queued: embedded with today's model when its turn comes
                or (document.status == Document.Status.READY and document.embedding_model == backend_name)
            )
        )
        if unchanged:
            logger.info("document %s unchanged: nothing to do", document.pk)
            pending = document.status == Document.Status.PENDING
            queue = False  # queued when it became pending; beat re-queues one that waits too long
        else:
            document.title = title
            document.checksum = checksum
            document.text = text
            document.status = Document.Status.PENDING
            document.error = ""
            document.save(update_fields=["title", "checksum", "text", "status", "error", "updated_at"])
            pending = queue = True
        if queue and not embed_now:
            document_embed_queue(document=document)
    if pending and embed_now:
        document = document_embed(document_id=document.pk, progress=progress) or document
    return document


def document_copies(*, document: Document) -> list[Document]:
    """Other documents of the organization read from the same source under another
    scope (organization-wide or another property)."""
    return list(
        Document.objects.filter(organization_id=document.organization_id, source=document.source)
        .exclude(pk=document.pk)
        .select_related("property")
    )


def document_copies_delete(*, document: Document) -> list[Document]:
    """Delete the other-scope copies of ``document``'s source (a file that moved from
    one scope to another); their chunks and now-unused words go with them. Returns
    what was deleted."""
    with transaction.atomic():
        copies = document_copies(document=document)
        Document.objects.filter(pk__in=[c.pk for c in copies]).delete()
    return copies


def document_embed_queue(*, document: Document) -> None:
    """Queue the embedding of ``document`` once the current transaction commits."""
    document_id = document.pk
    transaction.on_commit(lambda: queue_task(RETRIEVAL_EMBED_DOCUMENT, [document_id]))


def document_chunks_build(*, title: str, text: str) -> list[ChunkDraft]:
    backend = embedding_backend()
    return chunk_document(
        title=title,
        text=text,
        count_tokens=backend.count_tokens,
        max_tokens=min(settings.CHUNK_MAX_TOKENS, backend.max_tokens),
        overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
    )


def document_embed(
    *, document_id: int, progress: ProgressCallback | None = None, retry_failed: bool = True
) -> Document | None:
    """Chunk and embed the document's current text and swap its chunks in.
    Returns the document, or None when it no longer exists. ``retry_failed``
    False (the task): a document that failed stays failed until it is
    ingested again, so a duplicate task does not redo a run that failed."""
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        logger.info("document %s is gone: nothing to embed", document_id)
        return None
    backend = embedding_backend()
    if document.status == Document.Status.READY and document.embedding_model == backend.name:
        return document  # a duplicate task: already done
    if document.status == Document.Status.FAILED and not retry_failed:
        return document
    checksum = document.checksum
    try:
        drafts = document_chunks_build(title=document.title, text=document.text)
        if not drafts:
            raise ValueError("the document has no text to index")
        vectors: list[list[float]] = []
        batch = max(settings.EMBEDDING_BATCH_SIZE, 1)
        for start in range(0, len(drafts), batch):
            vectors.extend(backend.embed_documents([d.search_text for d in drafts[start : start + batch]]))
            if progress:
                progress(len(vectors), len(drafts))
    except EmbeddingMisconfigured as exc:
        # The worker cannot run the model (a package missing): every document would fail alike. It waits,
        # saying why, and the beat queues it again, so mending the worker is enough.
        logger.error("document %s cannot be embedded: %s", document_id, exc)
        Document.objects.filter(pk=document_id, checksum=checksum, status=Document.Status.PENDING).update(
            error=f"the embedding model cannot run on the worker: {exc}"
        )
        document.refresh_from_db()
        return document
    except (ValueError, SoftTimeLimitExceeded) as exc:
        # Past the task's time limit too: failed with the reason, not pending for ever (the beat would queue it
        # again and again, each run holding the embeddings worker for the whole limit).
        reason = str(exc) if isinstance(exc, ValueError) else "embedding took longer than the task's time limit"
        if document.chunks.exists():  # a replacement that failed: say which text tenants are still answered from
            reason += "; the previous version stays searchable until this one is ingested"
        # Not over a run that finished meanwhile (a command beside the task): that one's chunks stand.
        Document.objects.filter(pk=document_id, checksum=checksum).exclude(
            status=Document.Status.READY, embedding_model=backend.name
        ).update(status=Document.Status.FAILED, error=reason)
        document.refresh_from_db()
        return document

    with transaction.atomic():
        document = Document.objects.select_for_update().filter(pk=document_id).first()
        if document is None:
            return None
        if document.checksum != checksum:
            logger.info("document %s changed while it was embedded: the newer version wins", document_id)
            return document
        document.chunks.all().delete()
        Chunk.objects.bulk_create(
            Chunk(
                document=document,
                organization_id=document.organization_id,
                property_id=document.property_id,
                position=draft.position,
                heading_path=draft.heading_path[:500],
                text=draft.text,
                search_text=draft.search_text,
                embedding=vector,
            )
            for draft, vector in zip(drafts, vectors, strict=True)
        )
        document.status = Document.Status.READY
        document.embedding_model = backend.name
        document.error = ""
        document.save(update_fields=["status", "embedding_model", "error", "updated_at"])
    logger.debug("document %s: %d chunks embedded with %s", document_id, len(drafts), backend.name)
    return document


def document_pending_requeue(*, older_than_seconds: int) -> int:
    """Queue again documents still pending after ``older_than_seconds`` (a lost task). Returns how many."""
    cutoff = timezone.now() - datetime.timedelta(seconds=older_than_seconds)
    ids = list(
        Document.objects.filter(status=Document.Status.PENDING, updated_at__lt=cutoff).values_list("pk", flat=True)
    )
    # Stamped: queued again at most once per ``older_than_seconds``, not at every beat while its task runs.
    Document.objects.filter(pk__in=ids).update(updated_at=timezone.now())
    for document_id in ids:
        queue_task(RETRIEVAL_EMBED_DOCUMENT, [document_id])
    return len(ids)
