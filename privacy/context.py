"""Through which door the current request came (admin, API, or none: the
system), so an audit entry made deep in a service knows; set by
``privacy.middleware``."""

from __future__ import annotations

import contextvars

_via: contextvars.ContextVar[str] = contextvars.ContextVar("privacy_audit_via", default="system")


def current_via() -> str:
    return _via.get()


def via_set(via: str) -> contextvars.Token[str]:
    return _via.set(via)


def via_reset(token: contextvars.Token[str]) -> None:
    _via.reset(token)
