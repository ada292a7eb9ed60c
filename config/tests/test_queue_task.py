"""``queue_task`` with the broker failing: the caller carries on, and a
process that just saw a publish fail does not wait on the broker again for
``BROKER_RETRY_AFTER_SECONDS`` (a Redis that hangs costs each try its socket
timeout; an emergency's webhook queues several tasks)."""

from __future__ import annotations

import time

from config.celery import app
from config.tasks import INBOUND_PROCESS, queue_task


def test_after_a_failed_publish_the_process_skips_the_broker_for_a_while(monkeypatch, settings):
    tried = []

    def hangs_then_fails(name, **kwargs):
        tried.append(name)
        raise TimeoutError("Timeout reading from socket")

    monkeypatch.setattr(app, "send_task", hangs_then_fails)
    settings.BROKER_RETRY_AFTER_SECONDS = 60
    assert queue_task(INBOUND_PROCESS, [1]) is False
    assert queue_task(INBOUND_PROCESS, [2]) is False
    assert tried == [INBOUND_PROCESS]  # the second did not wait on the broker


def test_the_broker_is_tried_again_once_the_pause_is_over(monkeypatch, settings):
    sent = []

    def down(name, **kwargs):
        raise ConnectionError("Connection refused")

    settings.BROKER_RETRY_AFTER_SECONDS = 0.05
    monkeypatch.setattr(app, "send_task", down)
    assert queue_task(INBOUND_PROCESS, [1]) is False
    monkeypatch.setattr(app, "send_task", lambda name, args, **kwargs: sent.append((name, args)))
    assert queue_task(INBOUND_PROCESS, [2]) is False  # still within the pause
    time.sleep(0.1)
    assert queue_task(INBOUND_PROCESS, [3]) is True and sent == [(INBOUND_PROCESS, [3])]
