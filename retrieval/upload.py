"""A landlord uploads a knowledge document (admin or API), or asks for one to be
ingested again. Both go through ``retrieval.services.document_ingest``, which
stores the text and queues its chunking and embedding (task
``retrieval.embed_document``, queue ``embeddings``) after commit; the text
read from the file is kept as the Document's file, for reference (the one it
replaces is deleted after commit)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction

from properties.models import Organization, Property
from retrieval.models import Document
from retrieval.pdf_text import PdfTextError, pdf_text
from retrieval.services import document_embed_queue, document_ingest

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".text", ".rst", ""}


class DocumentUploadError(ValueError):
    """The upload cannot be ingested; the message says why, for the user."""


def document_text_read(*, uploaded_file: UploadedFile) -> str:
    """The file's text, or DocumentUploadError for a file we cannot read as text."""
    limit = settings.DOCUMENT_UPLOAD_MAX_BYTES
    if uploaded_file.size is not None and uploaded_file.size > limit:
        raise DocumentUploadError(f"The file is larger than {limit // 1024} KB.")
    suffix = PurePath(uploaded_file.name or "").suffix.lower()
    if suffix not in TEXT_SUFFIXES | {".pdf"}:
        raise DocumentUploadError(
            f"{suffix} files are not supported: upload PDF, plain text or Markdown (.pdf, .txt, .md)."
        )
    raw = uploaded_file.read(limit + 1)
    if len(raw) > limit:
        raise DocumentUploadError(f"The file is larger than {limit // 1024} KB.")
    if suffix == ".pdf":
        try:
            text = pdf_text(raw)
        except PdfTextError as error:
            raise DocumentUploadError(str(error)) from None
        return _text_checked(text)
    if b"\x00" in raw:
        raise DocumentUploadError("The file is binary, not text: upload plain text or Markdown, UTF-8 encoded.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DocumentUploadError(f"The file is not UTF-8 text (byte {error.start} is not valid UTF-8).") from None
    if not text.strip():
        raise DocumentUploadError("The file is empty.")
    return _text_checked(text)


def _text_checked(text: str) -> str:
    """A compressed PDF can hold far more text than its size says; the
    embeddings worker takes about a minute per 500 000 characters."""
    limit = settings.DOCUMENT_TEXT_MAX_CHARS
    if len(text) > limit:
        raise DocumentUploadError(f"The document has {len(text):,} characters of text, more than {limit:,}: split it.")
    return text


@dataclass(frozen=True)
class Uploaded:
    """What an upload did, for the person who made it: a new document, a new
    version of the one with that file name in that scope, or nothing (the same
    title and text as stored)."""

    document: Document
    outcome: Literal["created", "replaced", "unchanged"]


def document_upload(
    *,
    organization: Organization,
    uploaded_file: UploadedFile,
    property: Property | None = None,
    title: str = "",
) -> Uploaded:
    """Ingest ``uploaded_file`` as a knowledge document of ``organization``
    (optionally one ``property``). Uploading the same file name again to the
    same scope replaces that document's text (the ingest keys documents by
    source name); the outcome says which happened."""
    if property is not None and property.organization_id != organization.pk:
        raise DocumentUploadError("The property belongs to another organization.")
    text = document_text_read(uploaded_file=uploaded_file)
    source_name = PurePath(uploaded_file.name or "upload.txt").name.strip()  # as the ingest keys it
    title = (title or "").strip() or PurePath(source_name).stem.replace("_", " ").replace("-", " ").strip()
    with transaction.atomic():
        _name_lock(organization, property, source_name)
        previous = (
            Document.objects.select_for_update()
            .filter(organization=organization, property=property, source=source_name)
            .values_list("updated_at", flat=True)
            .first()
        )
        try:
            document = document_ingest(
                organization=organization, property=property, title=title[:300], source_name=source_name, content=text
            )
        except ValueError as error:  # the ingest's own checks (empty, NUL bytes, property scope)
            raise DocumentUploadError(str(error)) from None
        if previous is None:
            outcome: Literal["created", "replaced", "unchanged"] = "created"
        else:
            outcome = "unchanged" if document.updated_at == previous else "replaced"
        if outcome != "unchanged" or not document.file.name:
            _file_store(document, source_name, text)
    logger.info(
        "document %s upload %s for organization %s (%s chars)", document.pk, outcome, organization.pk, len(text)
    )
    return Uploaded(document=document, outcome=outcome)


def _name_lock(organization: Organization, property: Property | None, source_name: str) -> None:
    """Until commit, one upload at a time under this name in this scope: the row
    lock below waits only for a row that exists, so two uploads of a new name
    would both read "nothing there" and both answer "created"."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtext('retrieval_document_upload'), hashtext(%s))",
            [f"{organization.pk}:{property.pk if property else ''}:{source_name}"],
        )


def _file_store(document: Document, source_name: str, text: str) -> None:
    """Keep the text read as the document's file; the one it replaces is deleted after commit."""
    storage = document.file.storage
    replaced = document.file.name or ""
    field = document.file.field
    # A long name is shortened to fit the column (the document keeps its whole name in ``source``).
    stored = storage.save(
        field.generate_filename(document, source_name), ContentFile(text.encode("utf-8")), max_length=field.max_length
    )
    Document.objects.filter(pk=document.pk).update(file=stored)
    document.file.name = stored
    if replaced and replaced != stored:
        _file_delete_on_commit(storage, replaced)


def _file_delete_on_commit(storage: Storage, name: str) -> None:
    def delete() -> None:
        if Document.objects.filter(file=name).exists():  # a storage that overwrites gave another row this name
            return
        try:
            storage.delete(name)
        except Exception:  # the row's change stands; the file is left behind, and logged
            logger.exception("document file %s could not be deleted", name)

    transaction.on_commit(delete)


def on_document_deleted(sender: type, *, instance: Document, **kwargs: object) -> None:
    if instance.file.name:
        _file_delete_on_commit(instance.file.storage, instance.file.name)


def document_reingest(*, document: Document) -> Document:
    """Chunk and embed the stored text again (after a failure, or a change of
    chunker or embedding model). The ingest redoes a failed document or one
    embedded with another model by itself; a ready, unchanged one is put back
    to pending and queued, so its chunks are rebuilt too; one still waiting is
    queued again (its task may be lost: a duplicate finds it done)."""
    waiting = document.status == Document.Status.PENDING
    if not document.text.strip():
        raise DocumentUploadError(f"{document.title}: there is no stored text to ingest.")
    with transaction.atomic():
        try:
            result = document_ingest(
                organization=document.organization,
                property=document.property,
                title=document.title,
                source_name=document.source,
                content=document.text,
            )
        except ValueError as error:
            raise DocumentUploadError(str(error)) from None
        if result.status == Document.Status.READY:
            Document.objects.filter(pk=result.pk).update(status=Document.Status.PENDING)
            result.status = Document.Status.PENDING
            document_embed_queue(document=result)
        elif waiting and result.status == Document.Status.PENDING and result.checksum == document.checksum:
            document_embed_queue(document=result)  # unchanged and waiting: the ingest queued nothing
    return result
