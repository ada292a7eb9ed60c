"""kombu's Redis transport, with one change: a publish reuses the channel's
client instead of building a new ``redis.Redis`` for every message.

kombu 5.7 creates a client (and with it redis-py's table of ~200 response
callbacks) for each ``LPUSH`` of a task: about half of the 0.45 ms a publish
costs the webhook, which publishes two tasks per message
(docs/benchmarks.md). The client is built on the same connection pool, so
connections, timeouts and errors with Redis down are exactly kombu's; a
``redis.Redis`` client is safe to share between threads.

Selected by ``CELERY_BROKER_TRANSPORT`` (config/settings.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import cached_property

from kombu.transport import redis


class Channel(redis.Channel):
    @cached_property
    def _publish_client(self):
        return self._create_client()

    @contextmanager
    def conn_or_acquire(self, client=None):
        yield client or self._publish_client


class Transport(redis.Transport):
    Channel = Channel
