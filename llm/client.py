"""The one door to the language model.

Every caller (the turn engine, emergency validation, the judge) goes through
``llm_complete``. The backend is ``settings.LLM_BACKEND``:

* ``anthropic``: Claude through the official SDK (``llm.anthropic_backend``).
* ``scripted``: answers come from a script (``llm.scripted``). It exists for
  tests and the demo, and says so in every response's ``model``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from llm.anthropic_backend import anthropic_complete
from llm.scripted import scripted_complete
from llm.types import LLMMisconfigured, LLMResponse

BACKENDS: dict[str, Callable[..., LLMResponse]] = {
    "anthropic": anthropic_complete,
    "scripted": scripted_complete,
}


def llm_complete(
    *,
    model: str,
    system: str | list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    tool_choice: dict[str, Any] | None = None,
    max_tokens: int | None = None,
    script_key: str = "",
) -> LLMResponse:
    """One model call. Raises ``LLMUnavailable`` or ``LLMMisconfigured``.

    A message's ``content`` is a string or a list of content blocks (text,
    ``llm.types.image_block`` photos, tool use and results); every backend
    takes both (the scripted one reads the text blocks).

    ``script_key`` names who the call is about (the tenant's phone): the
    scripted backend answers from the script queued under it; Claude ignores it.
    """
    backend = BACKENDS.get(settings.LLM_BACKEND)
    if backend is None:
        raise LLMMisconfigured(f"LLM_BACKEND={settings.LLM_BACKEND!r}: expected one of {sorted(BACKENDS)}")
    return backend(
        model=model,
        system=system,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=max_tokens or settings.LLM_MAX_TOKENS,
        script_key=script_key,
    )
