"""Every task reaches the queue its workers listen on (config/celery.py)."""

import pytest

from config.celery import app

EXPECTED = {
    "inbound.process": "inbound",
    "outbound.send": "outbound",
    "emergency.validate": "llm",
    "evals.judge": "llm",
    "retrieval.embed_document": "embeddings",
    "media.download": "media",
    "media.transcribe": "transcription",
    "channel.sweep": "default",
    "emergency.notify_email": "default",
}


@pytest.fixture(autouse=True)
def tasks_discovered():
    app.loader.import_default_modules()  # what a worker does at start


def routed_queue(name: str) -> str:
    return app.amqp.router.route({}, name)["queue"].name


@pytest.mark.parametrize(("name", "queue"), EXPECTED.items())
def test_task_goes_to_its_queue(name, queue):
    assert name in app.tasks
    assert routed_queue(name) == queue


def test_every_project_task_goes_to_a_declared_queue():
    declared = {queue.name for queue in app.conf.task_queues}
    project = [name for name in app.tasks if not name.startswith("celery.")]
    assert len(project) >= len(EXPECTED)
    for name in project:
        assert routed_queue(name) in declared, name


def test_a_published_task_lands_in_its_queue_once():
    """On real Redis: every queue is bound in the same exchange, so a routing
    mistake would copy the task into all of them (each worker would run it)."""
    import redis
    from django.conf import settings

    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"]
    client = redis.Redis.from_url(settings.REDIS_URL)
    app.control.purge()
    try:
        app.send_task("inbound.process", args=[0])
        app.send_task("emergency.validate", args=[0])
        lengths = {queue.name: client.llen(prefix + queue.name) for queue in app.conf.task_queues}
    finally:
        app.control.purge()
    assert lengths == {
        "emergency": 0,
        "inbound": 1,
        "llm": 1,
        "outbound": 0,
        "embeddings": 0,
        "media": 0,
        "transcription": 0,
        "default": 0,
    }
