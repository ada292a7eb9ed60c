"""The one door to the language model.

Every caller (the turn engine, emergency validation, the judge) goes through
``llm_complete``. The backend is ``settings.LLM_BACKEND``:

* ``anthropic``: the official SDK with a timeout and the SDK's own
  retries with backoff on 408/409/429/5xx (529 overloaded included) and
  connection errors. When they run out, ``LLMUnavailable`` is raised: the
  caller answers with a safe fallback. Errors that retrying cannot fix (bad
  key, bad request) raise ``LLMMisconfigured``.

  No sampling temperature is sent: API version 2026-10-21 (the default of SDK
  2.x) rejects ``temperature``/``top_p``/``top_k`` with HTTP 400, so the ADR's
  "temperature 0" is replaced by a fixed tool list, forced tool choice and the
  golden-scenario suite that catches drift.
* ``scripted``: answers come from a script (see ``orchestration.scripted``). It
  exists for tests and the demo, and says so in every response's ``model``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any

import anthropic
from django.conf import settings

SCRIPTED_MODEL_PREFIX = "scripted"

# US dollars per million tokens: input, output, cache read, cache write (5-minute TTL).
PRICES_PER_MTOK: dict[str, tuple[str, str, str, str]] = {
    "claude-sonnet": ("3", "15", "0.30", "3.75"),
    "claude-haiku": ("1", "5", "0.10", "1.25"),
    "claude-opus": ("5", "25", "0.50", "6.25"),
}


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


def llm_complete(
    *,
    model: str,
    system: str | list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    tool_choice: dict[str, Any] | None = None,
    max_tokens: int | None = None,
) -> LLMResponse:
    """One model call. Raises ``LLMUnavailable`` or ``LLMMisconfigured``."""
    if settings.LLM_BACKEND == "scripted":
        from orchestration.scripted import scripted_complete

        return scripted_complete(model=model, system=system, messages=messages, tools=tools, tool_choice=tool_choice)
    return _anthropic_complete(
        model=model,
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=max_tokens or settings.LLM_MAX_TOKENS,
    )


@lru_cache(maxsize=4)
def _client(api_key: str, base_url: str, timeout: float, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=api_key, base_url=base_url or None, timeout=timeout, max_retries=max_retries)


def anthropic_client() -> anthropic.Anthropic:
    if not settings.ANTHROPIC_API_KEY:
        raise LLMMisconfigured("ANTHROPIC_API_KEY is not set; only the scripted model is available")
    return _client(
        settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL, settings.LLM_TIMEOUT_SECONDS, settings.LLM_MAX_RETRIES
    )


def _anthropic_complete(*, model, system, messages, tools, tool_choice, max_tokens) -> LLMResponse:
    kwargs: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": messages,
    }
    if tools:
        kwargs["tools"] = tools
    if tool_choice:
        kwargs["tool_choice"] = tool_choice
    started = time.monotonic()
    try:
        response = anthropic_client().messages.create(**kwargs)
    except (anthropic.APIConnectionError, anthropic.RateLimitError, anthropic.InternalServerError) as exc:
        raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
    except anthropic.APIStatusError as exc:
        if exc.status_code in (408, 409) or exc.status_code >= 500:
            raise LLMUnavailable(f"HTTP {exc.status_code}: {exc}") from exc
        raise LLMMisconfigured(f"HTTP {exc.status_code}: {exc}") from exc
    except anthropic.AnthropicError as exc:
        raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
    latency_ms = int((time.monotonic() - started) * 1000)

    content = [block.model_dump(exclude_none=True) for block in response.content]
    usage = response.usage
    return LLMResponse(
        model=response.model,
        tool_calls=[
            ToolCall(id=block.id, name=block.name, input=dict(block.input or {}))
            for block in response.content
            if block.type == "tool_use"
        ],
        text="".join(block.text for block in response.content if block.type == "text"),
        stop_reason=response.stop_reason,
        content=content,
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
        cache_write_tokens=usage.cache_creation_input_tokens or 0,
        latency_ms=latency_ms,
    )
