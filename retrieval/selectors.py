"""Reads of knowledge documents that the admin and the API share."""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Count, QuerySet

from properties.scoping import queryset_for_organizations_or_all
from retrieval.models import Document


def document_list(*, organization_ids: Collection[int] | None) -> QuerySet[Document]:
    """Documents of ``organization_ids`` (every organization when None), each
    with ``chunk_count``, without their text (read on use: a page of handbooks
    would carry megabytes). The count groups by document, which drops
    Meta.ordering: callers order explicitly."""
    queryset = Document.objects.defer("text").annotate(chunk_count=Count("chunks"))
    return queryset_for_organizations_or_all(queryset, organization_ids)


def document_stale_list(*, embedding_model: str, organization_ids: Collection[int] | None = None) -> QuerySet[Document]:
    """Documents whose chunks another embedding model wrote (or none has yet),
    oldest first: what ``reembed_documents`` brings to ``embedding_model``."""
    queryset = Document.objects.exclude(embedding_model=embedding_model).order_by("pk")
    return queryset_for_organizations_or_all(queryset, organization_ids)
