"""``queue_task`` with the broker failing: the caller carries on, and a
process whose publish failed slowly (a Redis that hangs costs each try its
socket timeout; an emergency's webhook queues several tasks) does not try the
broker again for ``BROKER_RETRY_AFTER_SECONDS``. A broker that refuses at once
(a restart, a failover) is tried again at the next publish."""

from __future__ import annotations

import time

import config.tasks
from config.celery import app
from config.tasks import INBOUND_PROCESS, queue_task


def test_after_a_publish_that_hung_the_process_skips_the_broker_for_a_while(monkeypatch, settings):
    tried = []

    def hangs(name, **kwargs):
        tried.append(name)
        time.sleep(0.06)
        raise TimeoutError("Timeout reading from socket")

    monkeypatch.setattr(config.tasks, "SLOW_FAILURE_SECONDS", 0.05)
    monkeypatch.setattr(app, "send_task", hangs)
    settings.BROKER_RETRY_AFTER_SECONDS = 60
    assert queue_task(INBOUND_PROCESS, [1]) is False
    assert queue_task(INBOUND_PROCESS, [2]) is False
    assert tried == [INBOUND_PROCESS]  # the second did not wait on the broker

    settings.BROKER_RETRY_AFTER_SECONDS = 0.05
    config.tasks.broker_failure_forget()
    assert queue_task(INBOUND_PROCESS, [3]) is False
    time.sleep(0.1)
    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, args, **kwargs: sent.append((name, args)))
    assert queue_task(INBOUND_PROCESS, [4]) is True and sent == [(INBOUND_PROCESS, [4])]  # the pause is over


def test_a_broker_that_refuses_at_once_is_tried_again_at_the_next_publish(monkeypatch, settings):
    tried = []

    def refuses(name, **kwargs):
        tried.append(name)
        raise ConnectionError("Connection refused")

    settings.BROKER_RETRY_AFTER_SECONDS = 60
    monkeypatch.setattr(app, "send_task", refuses)
    assert queue_task(INBOUND_PROCESS, [1]) is False
    assert queue_task(INBOUND_PROCESS, [2]) is False
    assert tried == [INBOUND_PROCESS, INBOUND_PROCESS]
