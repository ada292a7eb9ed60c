"""Every task reaches the queue its workers listen on (config/celery.py)."""

import pytest

from config.celery import app

EXPECTED = {
    "inbound.process": "inbound",
    "outbound.send": "outbound",
    "emergency.validate": "llm",
    "evals.judge": "llm",
    "retrieval.embed_document": "embeddings",
    "media.download": "default",
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
