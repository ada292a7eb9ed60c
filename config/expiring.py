"""What a process may trust for a few seconds without asking PostgreSQL again.

The webhook reads the same few rows for every message: which organization a
number belongs to, and whether its emergency rules changed. ``Expiring``
keeps such an answer in the process for ``PROCESS_CACHE_SECONDS``. An edit
made in another process applies within that bound; the process that made it
forgets at once (the owners connect ``clear`` to the models' save and delete
signals). Only answers are kept, never "not found": a new number routes at
once. ``PROCESS_CACHE_SECONDS=0`` turns every such cache off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from django.conf import settings
from django.db import transaction

V = TypeVar("V")

# A cache never grows past this many keys: past it, it starts again empty.
MAX_KEYS = 10_000

_every: list[Expiring] = []
_clock = time.monotonic  # tests move it


class Expiring(Generic[V]):
    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[float, V]] = {}  # key -> (read at, value)
        self._generation = 0  # moved by clear(): a value read before it is not kept
        _every.append(self)

    def get(self, key: Hashable, compute: Callable[[], V | None]) -> V | None:
        """The value held for ``key`` while it is fresh, else ``compute()``
        (kept unless it is None, or a clear() came while it was read)."""
        seconds = settings.PROCESS_CACHE_SECONDS
        now = _clock()
        held = self._entries.get(key)
        if held is not None and now - held[0] < seconds:
            return held[1]
        generation = self._generation
        value = compute()
        if value is not None and seconds > 0 and generation == self._generation:
            if len(self._entries) >= MAX_KEYS:
                self._entries = {}
            self._entries[key] = (now, value)
        else:
            self._entries.pop(key, None)
        return value

    def clear(self, *args, **kwargs) -> None:
        """Forget everything, now and again when the edit that asked commits
        (another thread may read the old row until then). The signature fits
        a signal receiver."""
        self._forget()
        transaction.on_commit(self._forget)

    def _forget(self) -> None:
        self._generation += 1
        self._entries = {}


def expiring_clear_all() -> None:
    """Every process cache emptied: for tests, which change rows between requests."""
    for cache in _every:
        cache._forget()
