"""The ``anthropic`` backend: the official SDK with a timeout and the SDK's own
retries with backoff on 408/409/429/5xx (529 overloaded included) and
connection errors. When they run out, ``LLMUnavailable`` is raised; errors that
retrying cannot fix (bad key, bad request) raise ``LLMMisconfigured``.

No sampling temperature is sent: API version 2026-10-21 (the default of SDK
2.x) rejects ``temperature``/``top_p``/``top_k`` with HTTP 400, so the ADR's
"temperature 0" is replaced by a fixed tool list, forced tool choice and the
golden-scenario suite that catches drift.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import anthropic
from django.conf import settings

from llm.types import LLMMisconfigured, LLMResponse, LLMUnavailable, ToolCall


@lru_cache(maxsize=4)
def _client(api_key: str, base_url: str, timeout: float, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=api_key, base_url=base_url or None, timeout=timeout, max_retries=max_retries)


def anthropic_client() -> anthropic.Anthropic:
    if not settings.ANTHROPIC_API_KEY:
        raise LLMMisconfigured("ANTHROPIC_API_KEY is not set; only the scripted model is available")
    return _client(
        settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL, settings.LLM_TIMEOUT_SECONDS, settings.LLM_MAX_RETRIES
    )


def anthropic_complete(
    *,
    model: str,
    system: str | list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    tool_choice: dict[str, Any] | None,
    max_tokens: int,
    script_key: str = "",
) -> LLMResponse:
    del script_key  # only the scripted backend reads it
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
