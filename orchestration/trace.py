"""What a turn records: the ``Decision`` the model loop builds (calls,
rejections, retrieval hits, tokens, cost, time) and ``turn_record``, which
closes a turn by marking its messages processed and writing the Turn row."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from conversations.models import Conversation, Message
from llm.types import LLMResponse, ToolCall
from orchestration.images import TurnImages
from orchestration.models import Turn
from orchestration.prompt import PROMPT_VERSION
from orchestration.tool_definitions import TOOL_NAMES

# The "model" of a trace entry the product settled itself (a tapped answer, a pin).
STRUCTURED_MODEL = "none (structured answer)"


@dataclass
class Decision:
    call: ToolCall | None = None
    call_index: int = -1  # the entry of ``call`` in ``trace``
    # A call applied before ``call`` in the same turn: confirm_property, after
    # which the model went on with the tenant's report; ``first_index`` is its entry.
    first: ToolCall | None = None
    first_index: int = -1
    model: str = ""
    trace: list[dict[str, Any]] = field(default_factory=list)
    retrieval_hits: list[dict[str, Any]] = field(default_factory=list)
    rejections: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    # The photos shown to the model (media ids) and their estimated tokens,
    # counted on every call they went with, as input_tokens are.
    image_ids: set[int] = field(default_factory=set)
    image_tokens: int = 0
    model_ms: int = 0
    retrieval_ms: int = 0
    error: str = ""

    def note_error(self, text: str) -> None:
        self.error = f"{self.error}; {text}" if self.error else text

    def add_usage(self, response: LLMResponse) -> None:
        self.model = response.model
        self.input_tokens += response.input_tokens
        self.output_tokens += response.output_tokens
        self.cache_read_tokens += response.cache_read_tokens
        self.cache_write_tokens += response.cache_write_tokens
        self.cost_usd += response.cost_usd
        self.model_ms += response.latency_ms

    def add_images(self, images: TurnImages) -> None:
        """The photos of a call the model answered: their tokens are part of
        that call's input tokens (and so of its cost)."""
        self.image_ids |= {image.media_id for image in images.images}
        self.image_tokens += images.tokens

    def add_retrieval(self, hits: list[dict[str, Any]], *, elapsed_ms: int, via: str) -> None:
        self.retrieval_hits += [{**hit, "via": via} for hit in hits]
        self.retrieval_ms += elapsed_ms


def turn_record(
    conversation: Conversation,
    message_ids: list[int],
    *,
    outcome: str,
    started: float,
    decision: Decision | None = None,
    before: tuple[str, str] | None = None,
) -> Turn:
    """Mark ``message_ids`` processed and write the Turn trace. Without a
    decision (no model call) the trace is empty. ``before`` is the (identity,
    gathering) the turn started from; by default the current ones (nothing moved)."""
    decision = decision or Decision()
    identity_before, gathering_before = before or (conversation.identity_status, conversation.gathering_state)
    now = timezone.now()
    _processed_mark(conversation, message_ids, now)
    return Turn.objects.create(
        conversation=conversation,
        message_ids=message_ids,
        backend=settings.LLM_BACKEND if decision.trace else "",
        model=decision.model,
        prompt_version=PROMPT_VERSION,
        tools_offered=TOOL_NAMES if decision.trace else [],
        tool_calls=decision.trace,
        gating_rejections=decision.rejections,
        retrieval_hits=decision.retrieval_hits,
        identity_before=identity_before,
        identity_after=conversation.identity_status,
        gathering_before=gathering_before,
        gathering_after=conversation.gathering_state,
        latency_total_ms=int((time.monotonic() - started) * 1000),
        latency_model_ms=decision.model_ms or None,
        latency_retrieval_ms=decision.retrieval_ms or None,
        input_tokens=decision.input_tokens,
        output_tokens=decision.output_tokens,
        cache_read_tokens=decision.cache_read_tokens,
        cache_write_tokens=decision.cache_write_tokens,
        cost_usd=decision.cost_usd,
        images_sent=len(decision.image_ids),
        image_tokens=decision.image_tokens,
        outcome=outcome,
        error=decision.error,
    )


def _processed_mark(conversation: Conversation, message_ids: list[int], now: datetime) -> None:
    """The turn's messages marked processed and the conversation's
    ``last_turn_at`` stamped in one statement, where an update and a save took
    two (a data-modifying WITH runs whether or not the outer UPDATE reads it).
    Neither column is audited, so no save signal is missed."""
    q = connection.ops.quote_name
    # Table names come from the models; every value is bound.
    sql = (
        f"WITH processed AS (UPDATE {q(Message._meta.db_table)} SET processed_at = %s, status = %s "  # noqa: S608
        f"WHERE id = ANY(%s)) UPDATE {q(Conversation._meta.db_table)} SET last_turn_at = %s, updated_at = %s "
        "WHERE id = %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, Message.Status.PROCESSED, list(message_ids), now, now, conversation.pk])
    conversation.last_turn_at = conversation.updated_at = now
