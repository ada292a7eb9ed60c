"""Answers about the property from the landlord's documents: put into the
turn's context when the tenant's words call for them (conditional retrieval),
and for the model's ``search_documents`` tool."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from django.conf import settings

from conversations.models import Conversation
from llm.types import NO_ANSWER, PASSAGE_SEPARATOR
from orchestration.context import TurnContext
from orchestration.trace import Decision
from properties.models import Property
from properties.selectors import tenancies_current
from retrieval.answerability import passages_verdict
from retrieval.search import knowledge_search, query_embedding

logger = logging.getLogger(__name__)


def search_property_id(conversation: Conversation, own_homes: Sequence[Property] | None = None) -> int | None:
    """The home whose own documents a search reads: the conversation's, only
    when the number's tenant has a current tenancy there (``own_homes``, when
    the caller has read them). A number that only named the address (a report
    the landlord sees as unverified, or a stranger who knows it) reads the
    organization's general documents alone: a home guide may hold its
    key-safe or alarm code."""
    if conversation.property_id is None or conversation.tenant_id is None:
        return None
    if own_homes is None:
        tenant = conversation.tenant
        assert tenant is not None  # tenant_id is set
        own_homes = [t.property for t in tenancies_current(tenant=tenant)]
    return conversation.property_id if any(home.pk == conversation.property_id for home in own_homes) else None


def knowledge_lookup(
    *, conversation: Conversation, query: str, own_homes: Sequence[Property] | None = None
) -> tuple[str, list[dict], int]:
    """(text for the model, hits for the trace, milliseconds). When no passage
    answers the question (``retrieval.answerability``) the model reads
    ``NO_ANSWER`` instead of the nearest passages, which would tempt it to
    answer from something that does not say; the trace keeps them, each
    marked ``answers: false``."""
    started = time.monotonic()
    embedding = query_embedding(query) if query.strip() else None
    hits = knowledge_search(
        organization_id=conversation.organization_id,
        property_id=search_property_id(conversation, own_homes),
        query=query,
        limit=settings.TURN_KNOWLEDGE_HITS,
        embedding=embedding,
    )
    elapsed = int((time.monotonic() - started) * 1000)
    verdict = passages_verdict(embedding, hits)
    # The head's probability beside each hit, where it decided: why the model was told "no answer".
    judged = {"answers": verdict.answers} | (
        {"answerability": round(verdict.probability, 3)} if verdict.probability is not None else {}
    )
    trace = [{**hit.as_trace(), **judged} for hit in hits]
    if not verdict.answers:
        return NO_ANSWER, trace, elapsed
    text = PASSAGE_SEPARATOR.join(
        f"[{n}] {hit.document_title} > {hit.heading_path}\n{hit.text}" for n, hit in enumerate(hits, 1)
    )
    return text, trace, elapsed


def knowledge_add(context: TurnContext, decision: Decision) -> None:
    """Conditional retrieval: the property's best passages for the tenant's
    words, with document titles and headings, go into the context when they
    answer (a report of a leak needs no "the documents do not say"). A failed
    search costs the passages, never the turn."""
    try:
        text, hits, elapsed = knowledge_lookup(
            conversation=context.conversation, query=context.latest_text, own_homes=context.tenant_properties
        )
    except Exception as exc:
        logger.warning("retrieval for conversation %s failed: %s", context.conversation.pk, exc)
        decision.note_error(f"retrieval skipped: {type(exc).__name__}: {exc}")
        return
    decision.add_retrieval(hits, elapsed_ms=elapsed, via="context")
    if text != NO_ANSWER:
        context.knowledge = text
