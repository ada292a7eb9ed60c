"""Answers about the property from the landlord's documents, for the model's
``search_documents`` tool."""

from __future__ import annotations

import time

from django.conf import settings

from conversations.models import Conversation
from llm.types import PASSAGE_SEPARATOR
from retrieval.search import knowledge_search


def knowledge_lookup(*, conversation: Conversation, query: str) -> tuple[str, list[dict], int]:
    """(text for the model, hits for the trace, milliseconds)."""
    started = time.monotonic()
    hits = knowledge_search(
        organization_id=conversation.organization_id,
        property_id=conversation.property_id,
        query=query,
        limit=settings.TURN_KNOWLEDGE_HITS,
    )
    elapsed = int((time.monotonic() - started) * 1000)
    if not hits:
        return "No matching passage in the landlord's documents.", [], elapsed
    text = PASSAGE_SEPARATOR.join(
        f"[{n}] {hit.document_title} > {hit.heading_path}\n{hit.text}" for n, hit in enumerate(hits, 1)
    )
    return text, [hit.as_trace() for hit in hits], elapsed
