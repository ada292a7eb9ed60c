"""What every model call returns and raises, whichever backend answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

SCRIPTED_MODEL_PREFIX = "scripted"
# Between the passages of a ``search_documents`` tool result: the turn engine
# joins with it and the scripted model splits on it.
PASSAGE_SEPARATOR = "\n\n---\n\n"
# A search's result when no passage answers (none found, or none close enough:
# SEARCH_ANSWER_MIN_SIMILARITY); the scripted model recognises it by this start.
NO_ANSWER = (
    "No passage in the landlord's documents answers this. Do not guess: tell the tenant you will ask the landlord."
)

# US dollars per million tokens: input, output, cache read, cache write (5-minute TTL).
PRICES_PER_MTOK: dict[str, tuple[str, str, str, str]] = {
    "claude-sonnet": ("3", "15", "0.30", "3.75"),
    "claude-haiku": ("1", "5", "0.10", "1.25"),
    "claude-opus": ("5", "25", "0.50", "6.25"),
}


# A message's ``content`` is a string or a list of content blocks: text
# (``{"type": "text", "text": ...}``), images (``image_block``), tool use and
# tool results. Every backend takes both forms.
Content = str | list[dict[str, Any]]


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_block(*, data: str, media_type: str = "image/jpeg") -> dict[str, Any]:
    """An image content block with the bytes inline (base64), the form the
    Messages API takes on every platform: never a URL."""
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def content_text(content: Content | None) -> str:
    """The words of a message's content: the string, or its text blocks joined
    (images and other blocks left out)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def content_images(content: Content | None) -> list[dict[str, Any]]:
    """The image blocks of a message's content."""
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "image"]


class LLMError(Exception):
    """Base class: the model gave no usable answer."""


class LLMUnavailable(LLMError):
    """Transient: rate limited, overloaded, timed out or unreachable after retries."""


class LLMMisconfigured(LLMError):
    """Permanent: retrying will not help (bad key, bad request, unknown model)."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass
class LLMResponse:
    model: str
    tool_calls: list[ToolCall]
    text: str
    stop_reason: str | None
    # The assistant content blocks as sent back to the API on a follow-up call.
    content: list[dict[str, Any]]
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    latency_ms: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cost_usd(self) -> Decimal:
        return cost_estimate(
            model=self.model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
        )


def cost_estimate(
    *, model: str, input_tokens: int, output_tokens: int, cache_read_tokens: int = 0, cache_write_tokens: int = 0
) -> Decimal:
    prices = next((p for prefix, p in PRICES_PER_MTOK.items() if model.startswith(prefix)), None)
    if prices is None:
        return Decimal(0)
    per_token = [Decimal(p) / Decimal(1_000_000) for p in prices]
    return (
        input_tokens * per_token[0]
        + output_tokens * per_token[1]
        + cache_read_tokens * per_token[2]
        + cache_write_tokens * per_token[3]
    ).quantize(Decimal("0.000001"))
