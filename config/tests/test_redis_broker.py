"""The broker transport publishes through one Redis client per channel
(config/redis_broker.py): kombu's own built a client for every message."""

from __future__ import annotations

import redis
from kombu import Queue

from config.celery import app
from config.redis_broker import Transport


def test_the_app_publishes_through_our_transport():
    with app.connection_for_write() as connection:
        assert connection.transport_cls == "config.redis_broker:Transport"
        assert isinstance(connection.transport, Transport)


def test_messages_after_the_first_build_no_redis_client(monkeypatch):
    built = []
    original = redis.Redis.__init__

    def counting(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    queue = Queue("test-redis-broker-publish")
    with app.connection_for_write() as connection, connection.Producer() as producer:
        producer.publish({"n": 0}, routing_key=queue.name, declare=[queue])
        monkeypatch.setattr(redis.Redis, "__init__", counting)
        for n in range(1, 6):
            producer.publish({"n": n}, routing_key=queue.name)
        monkeypatch.undo()
        assert queue(connection.default_channel).purge() == 6  # all six arrived
    assert built == []
